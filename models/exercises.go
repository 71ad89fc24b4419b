package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// Exercise is one fault-injection exercise: what the student sees of it (status, checks, hints
// used). Its ID is also the ID of the Exercise workflow that waits for the student.
type Exercise struct {
	ID        string `gorm:"primaryKey;size:200"`
	SessionID string `gorm:"size:64;not null;index"`
	// TurnID is the injection turn that broke the lab; one exercise per such turn.
	TurnID    string `gorm:"size:64;not null;uniqueIndex"`
	Seq       int    `gorm:"not null"`
	ProjectID string `gorm:"size:64;not null;index"`
	UserID    string `gorm:"size:64;not null;index"`
	Status    string `gorm:"size:16;not null;index"`
	Checks    int    `gorm:"not null;default:0"`
	HintsUsed int    `gorm:"not null;default:0"`
	// LastCheck is what the last check told the student.
	LastCheck string `gorm:"type:text;not null;default:''"`
	// Requested is how many faults the injection was asked for (0 in exercises from before it
	// was recorded), Faults how many it recorded; Note says so when it recorded fewer.
	Requested int    `gorm:"not null;default:0"`
	Faults    int    `gorm:"not null;default:0"`
	Note      string `gorm:"type:text;not null;default:''"`
	// SnapshotID is the GNS3 snapshot the injection turn took before it changed anything, which
	// a reset restores ("" in exercises from before snapshots were taken).
	SnapshotID   string `gorm:"size:64;not null;default:''"`
	SnapshotName string `gorm:"size:200;not null;default:''"`
	SnapshotAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	ExpiresAt    time.Time
	EndedAt      *time.Time
}

// View is what the student may know of an exercise: status and counters, never its faults.
func (ex *Exercise) View() map[string]any {
	v := map[string]any{"exercise_id": ex.ID, "session_id": ex.SessionID, "status": ex.Status, "checks": ex.Checks,
		"hints_used": ex.HintsUsed, "last_check": ex.LastCheck, "created_at": ClientTime(ex.CreatedAt),
		"expires_at": ClientTime(ex.ExpiresAt), "ended_at": nil}
	if ex.EndedAt != nil {
		v["ended_at"] = ClientTime(*ex.EndedAt)
	}
	// How many faults, and where a reset goes back to: the student asked for both, and neither
	// says what is broken.
	v["faults_requested"], v["faults_injected"], v["note"] = ex.Requested, ex.Faults, ex.Note
	v["reset_available"] = ex.SnapshotID != ""
	if ex.SnapshotAt != nil {
		v["snapshot"] = map[string]any{"snapshot_id": ex.SnapshotID, "name": ex.SnapshotName, "created_at": ClientTime(*ex.SnapshotAt)}
	}
	return v
}

// InjectedFault is the private record of one injected fault: only the teacher (a superadmin)
// and the exercise's checks read it; no route the student can call returns it.
type InjectedFault struct {
	ID         uint   `gorm:"primaryKey;autoIncrement"`
	ExerciseID string `gorm:"size:200;not null;uniqueIndex:idx_fault_call,priority:1"`
	// ToolCallID is the record_injected_fault call that stored it, so a retried call stores it once.
	ToolCallID    string `gorm:"size:200;not null;uniqueIndex:idx_fault_call,priority:2"`
	NodeID        string `gorm:"size:64;not null"`
	Device        string `gorm:"size:200;not null"`
	Lines         string `gorm:"type:text;not null"` // JSON array of strings
	Description   string `gorm:"type:text;not null"`
	VerifyCommand string `gorm:"type:text;not null"`
	VerifyExpect  string `gorm:"type:text;not null"`
	Hints         string `gorm:"type:text;not null"` // JSON array of strings, vague first
	// Scenario is the skills' scenario the fault was made from ("" when the model chose freely).
	Scenario string `gorm:"size:300;not null;default:'';index"`
	// Link is set on a fault put on a link (its conditions) rather than into a device: the two
	// nodes it joins, by name, and its id when recorded. Device then names the link ("R1–R2").
	LinkNodes  string `gorm:"type:text;not null;default:''"` // JSON array of the two node names
	LinkID     string `gorm:"size:64;not null;default:''"`
	Conditions string `gorm:"type:text;not null;default:''"` // the conditions, in words
	// ConditionKinds are the link's condition types (delay, packet_loss, suspend, …), a JSON array.
	ConditionKinds string `gorm:"type:text;not null;default:''"`
	CreatedAt      time.Time
}

// ConditionKindList decodes ConditionKinds.
func (f InjectedFault) ConditionKindList() []string { return stringList(f.ConditionKinds) }

// IsLink reports whether the fault is a link's conditions.
func (f InjectedFault) IsLink() bool { return f.LinkNodes != "" }

// LinkNodeList decodes LinkNodes.
func (f InjectedFault) LinkNodeList() []string { return stringList(f.LinkNodes) }

// LinesList decodes Lines.
func (f InjectedFault) LinesList() []string { return stringList(f.Lines) }

// HintList decodes Hints.
func (f InjectedFault) HintList() []string { return stringList(f.Hints) }

func stringList(s string) []string {
	var out []string
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

// StringListJSON encodes a list for Lines and Hints.
func StringListJSON(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// ExerciseID is the exercise's (and its workflow's) id: readable in the Temporal UI, and the
// same for every retry of the turn that records it.
func ExerciseID(sessionID string, turnSeq int) string {
	return fmt.Sprintf("exercise-%s-%d", sessionID, turnSeq)
}

// MigrateExercises creates the exercise tables.
func MigrateExercises(db *gorm.DB) error {
	return db.AutoMigrate(&Exercise{}, &InjectedFault{}, &InjectionPlan{})
}

// ExerciseRepository reads and writes exercises and their private fault records.
type ExerciseRepository struct{ DB *gorm.DB }

// ErrFaultLimit means the exercise already holds as many faults as it may.
var ErrFaultLimit = errors.New("the exercise already holds every fault it was asked for")

// RecordFault stores a fault and, with the first one, its exercise. It reports whether the
// exercise was created by this call. A fault already stored for the same tool call is kept.
func (r ExerciseRepository) RecordFault(ctx context.Context, ex *Exercise, f *InjectedFault) (created bool, err error) {
	return r.RecordFaultWithin(ctx, ex, f, 0)
}

// RecordFaultWithin is RecordFault for an exercise that may hold at most limit faults (0: no
// limit): a fault beyond it is not stored (ErrFaultLimit), also when two arrive at once.
func (r ExerciseRepository) RecordFaultWithin(ctx context.Context, ex *Exercise, f *InjectedFault, limit int) (created bool, err error) {
	err = r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		if ex.CreatedAt.IsZero() {
			ex.CreatedAt, ex.UpdatedAt = now, now
		}
		if ex.Status == "" {
			ex.Status = domain.ExerciseOpen
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(ex)
		if res.Error != nil {
			return res.Error
		}
		created = res.RowsAffected == 1
		f.ExerciseID = ex.ID
		if f.CreatedAt.IsZero() {
			f.CreatedAt = now
		}
		res = tx.Clauses(clause.OnConflict{DoNothing: true}).Create(f)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		count := tx.Model(&Exercise{}).Where("id = ?", ex.ID)
		if limit > 0 {
			count = count.Where("faults < ?", limit)
		}
		res = count.UpdateColumn("faults", gorm.Expr("faults + 1"))
		if res.Error == nil && res.RowsAffected == 0 {
			return ErrFaultLimit
		}
		return res.Error
	})
	return created, err
}

// Get loads an exercise.
func (r ExerciseRepository) Get(ctx context.Context, id string) (*Exercise, error) {
	return first[Exercise](r.DB.WithContext(ctx).Where("id = ?", id))
}

// Latest is the session's newest exercise.
func (r ExerciseRepository) Latest(ctx context.Context, sessionID string) (*Exercise, error) {
	return first[Exercise](r.DB.WithContext(ctx).Where("session_id = ?", sessionID).Order("seq DESC"))
}

// SessionsWithExercises reports which of these sessions have an exercise, so a client can ask
// for one only where there is one.
func (r ExerciseRepository) SessionsWithExercises(ctx context.Context, sessionIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var ids []string
	err := r.DB.WithContext(ctx).Model(&Exercise{}).Where("session_id IN ?", sessionIDs).Distinct().
		Pluck("session_id", &ids).Error
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}

// ByProject lists a project's exercises, newest first, for the teacher.
func (r ExerciseRepository) ByProject(ctx context.Context, projectID string, limit int) ([]Exercise, error) {
	var out []Exercise
	err := r.DB.WithContext(ctx).Where("project_id = ?", projectID).Order("created_at DESC").Limit(limit).Find(&out).Error
	return out, err
}

// Faults lists an exercise's fault records in the order they were injected.
func (r ExerciseRepository) Faults(ctx context.Context, exerciseID string) ([]InjectedFault, error) {
	var out []InjectedFault
	err := r.DB.WithContext(ctx).Where("exercise_id = ?", exerciseID).Order("id").Find(&out).Error
	return out, err
}

// SaveProgress stores the counters and the last answer of an open exercise.
func (r ExerciseRepository) SaveProgress(ctx context.Context, id string, checks, hints int, last string) error {
	return updateWhile(ctx, r.DB, &Exercise{}, id, domain.ExerciseOpen,
		map[string]any{"checks": checks, "hints_used": hints, "last_check": last, "updated_at": time.Now().UTC()}).Error
}

// Finish ends an open exercise; an exercise that already ended keeps its end.
func (r ExerciseRepository) Finish(ctx context.Context, id, status string, checks, hints int) error {
	now := time.Now().UTC()
	return updateWhile(ctx, r.DB, &Exercise{}, id, domain.ExerciseOpen,
		map[string]any{"status": status, "checks": checks, "hints_used": hints, "ended_at": now, "updated_at": now}).Error
}

// PrivateTurns returns the session's turns whose messages the student must not read (the
// injection turns), by id.
func (r *ChatRepository) PrivateTurns(ctx context.Context, sessionID string, private func(mode string) bool) (map[string]bool, error) {
	var turns []ChatTurn
	if err := r.DB.WithContext(ctx).Select("id", "mode").Where("session_id = ?", sessionID).Find(&turns).Error; err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, t := range turns {
		if private(t.Mode) {
			out[t.ID] = true
		}
	}
	return out, nil
}

// HiddenToolResult replaces the result of a tool call made while injecting a fault.
const HiddenToolResult = `{"success":true,"total":0,"successful":0,"failed":0,"data":[],"metadata":{"hidden":"part of a troubleshooting exercise"}}`

// InjectedText replaces what the model said in an injection turn.
const InjectedText = "A network fault was injected into this lab for troubleshooting practice. Find it and fix it, " +
	"then type \"check\" (or press Check). Type \"hint\" for a hint."

// RedactPrivate returns msgs with the messages of private turns reduced to what the student may
// know: which tools ran, never with which arguments or results, a fixed sentence for the model's
// text, and none of its reasoning (which would name the fault). Their model-context messages go
// whole: the brief of the exercise and what the lab note said changed would both name it.
// Messages of keepTurn (the injection turn itself, for its own model calls) stay.
func RedactPrivate(msgs []ChatMessage, private map[string]bool, keepTurn string) []ChatMessage {
	if len(private) == 0 {
		return msgs
	}
	out := make([]ChatMessage, 0, len(msgs))
	for _, m := range msgs {
		if !private[m.TurnID] || m.TurnID == keepTurn {
			out = append(out, m)
			continue
		}
		if m.ModelContext {
			continue
		}
		switch m.Role {
		case "assistant":
			m.Reasoning, m.ReasoningState = "", ""
			if m.Content != "" {
				m.Content = InjectedText
			}
			if m.ToolCalls != "" {
				var recs []ToolCallRecord
				if json.Unmarshal([]byte(m.ToolCalls), &recs) == nil {
					for j := range recs {
						recs[j].Function.Arguments = "{}"
					}
					b, _ := json.Marshal(recs)
					m.ToolCalls = string(b)
				} else {
					m.ToolCalls = ""
				}
			}
		case "tool":
			m.Content = HiddenToolResult
		}
		out = append(out, m)
	}
	return out
}

// ExerciseRequestMode is the mode of the turn that records a request typed to an exercise
// ("check", "hint", "give up") and the exercise's answer. No chat workflow runs it, and it is not
// private: the student wrote the request and read the answer.
const ExerciseRequestMode = "exercise_request"

// ExchangeParams is a request typed to a session's exercise and the exercise's answer.
type ExchangeParams struct {
	SessionID, UserID, ProjectID string
	// ExerciseID is the exercise (and its workflow) that answered.
	ExerciseID string
	Request    string
	Answer     string
	// Metadata of the answer (a JSON object, "" for none).
	Metadata string
}

// RecordExchange stores a typed request and the exercise's answer in the session's transcript, as
// a finished turn of their own (ExerciseRequestMode): the user's message, then the assistant's,
// counted in the session's statistics, so a reload shows both and later turns' models read them.
// It returns the answer's message. A turn started at the same moment takes the next number; the
// request is then written again after it.
func (r *ChatRepository) RecordExchange(ctx context.Context, p ExchangeParams) (*ChatMessage, error) {
	var answer ChatMessage
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := r.Now()
			seq, err := nextTurnSeq(tx, p.SessionID)
			if err != nil {
				return err
			}
			turn := ChatTurn{ID: uuid.NewString(), SessionID: p.SessionID, Seq: seq, UserID: p.UserID, ProjectID: p.ProjectID,
				Status: domain.TurnCompleted, Mode: ExerciseRequestMode, WorkflowID: p.ExerciseID, CreatedAt: now, FinishedAt: &now}
			if err := tx.Create(&turn).Error; err != nil {
				return err
			}
			question := ChatMessage{ID: MessageID(turn.ID, 0), SessionID: p.SessionID, TurnID: turn.ID, TurnSeq: seq, Idx: 0,
				Role: "user", Content: p.Request, Committed: true, CreatedAt: now}
			answer = ChatMessage{ID: MessageID(turn.ID, 1), SessionID: p.SessionID, TurnID: turn.ID, TurnSeq: seq, Idx: 1,
				Role: "assistant", Content: p.Answer, Metadata: p.Metadata, Committed: true, CreatedAt: now}
			if err := tx.Create(&[]ChatMessage{question, answer}).Error; err != nil {
				return err
			}
			return tx.Model(&ChatSession{}).Where("thread_id = ?", p.SessionID).Updates(map[string]any{
				"message_count": gorm.Expr("message_count + ?", 2), "last_message_at": now, "updated_at": now}).Error
		})
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return &answer, nil
}
