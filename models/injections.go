package models

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// InjectionPlan is what an injection turn was asked for and where it started: how many faults
// (the API writes it with the turn), and the snapshot the turn took before it changed anything.
// The turn's exercise, opened by its first fault, takes both over.
type InjectionPlan struct {
	TurnID       string `gorm:"primaryKey;size:64"`
	SessionID    string `gorm:"size:64;not null;index"`
	ProjectID    string `gorm:"size:64;not null"`
	UserID       string `gorm:"size:64;not null"`
	Requested    int    `gorm:"not null"`
	SnapshotID   string `gorm:"size:64;not null;default:''"`
	SnapshotName string `gorm:"size:200;not null;default:''"`
	SnapshotAt   *time.Time
	CreatedAt    time.Time
}

// PlanInjection stores an injection turn's plan; a plan already stored for the turn is kept.
func (r ExerciseRepository) PlanInjection(ctx context.Context, p *InjectionPlan) error {
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now().UTC()
	}
	return r.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(p).Error
}

// Plan loads an injection turn's plan (ErrNotFound for a turn that has none: one started before
// plans were stored).
func (r ExerciseRepository) Plan(ctx context.Context, turnID string) (*InjectionPlan, error) {
	return first[InjectionPlan](r.DB.WithContext(ctx).Where("turn_id = ?", turnID))
}

// SetSnapshot records the snapshot an injection turn took, on its plan and on its exercise if
// one was opened already.
func (r ExerciseRepository) SetSnapshot(ctx context.Context, turnID, snapshotID, name string, at time.Time) error {
	upd := map[string]any{"snapshot_id": snapshotID, "snapshot_name": name, "snapshot_at": at.UTC()}
	return r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&InjectionPlan{}).Where("turn_id = ?", turnID).Updates(upd).Error; err != nil {
			return err
		}
		return tx.Model(&Exercise{}).Where("turn_id = ?", turnID).Updates(upd).Error
	})
}

// ByTurn loads the exercise an injection turn opened (ErrNotFound when it recorded no fault).
func (r ExerciseRepository) ByTurn(ctx context.Context, turnID string) (*Exercise, error) {
	return first[Exercise](r.DB.WithContext(ctx).Where("turn_id = ?", turnID))
}

// SetNote stores what an exercise says of itself beside its counters (fewer faults than asked).
func (r ExerciseRepository) SetNote(ctx context.Context, id, note string) error {
	return r.DB.WithContext(ctx).Model(&Exercise{}).Where("id = ?", id).UpdateColumn("note", note).Error
}

// PastFault is a fault a user already had on a project, with the exercise it was in.
type PastFault struct {
	InjectedFault
	SessionID string
}

// PastFaults lists the faults of a user's exercises on a project, oldest first, leaving out
// those of one exercise (the one being injected).
func (r ExerciseRepository) PastFaults(ctx context.Context, projectID, userID, exceptExercise string) ([]PastFault, error) {
	var out []PastFault
	err := r.DB.WithContext(ctx).Table("injected_faults").Select("injected_faults.*, exercises.session_id").
		Joins("JOIN exercises ON exercises.id = injected_faults.exercise_id").
		Where("exercises.project_id = ? AND exercises.user_id = ? AND exercises.id <> ?", projectID, userID, exceptExercise).
		Order("injected_faults.id").Scan(&out).Error
	return out, err
}

// StartExchange opens a running turn for a request typed to an exercise that its workflow
// answers later (a reset waiting for a decision), with the request as the turn's user message;
// ErrTurnRunning when the session is busy. FinishExchange closes it with the answer.
func (r *ChatRepository) StartExchange(ctx context.Context, p ExchangeParams) (*ChatTurn, error) {
	var turn ChatTurn
	err := r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := r.Now()
		seq, err := nextTurnSeq(tx, p.SessionID)
		if err != nil {
			return err
		}
		turn = ChatTurn{ID: uuid.NewString(), SessionID: p.SessionID, Seq: seq, UserID: p.UserID, ProjectID: p.ProjectID,
			Status: domain.TurnRunning, Mode: ExerciseRequestMode, WorkflowID: p.ExerciseID, CreatedAt: now}
		if err := tx.Create(&turn).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return ErrTurnRunning
			}
			return err
		}
		return tx.Create(&ChatMessage{ID: MessageID(turn.ID, 0), SessionID: p.SessionID, TurnID: turn.ID, TurnSeq: seq,
			Role: "user", Content: p.Request, CreatedAt: now}).Error
	})
	if err != nil {
		return nil, err
	}
	return &turn, nil
}

// ExchangeAnswerIdx is the transcript slot of an exchange's answer: after its request (0) and the
// approval question and reply stored at 1.
const ExchangeAnswerIdx = 2

// FinishExchange stores an exchange's answer and ends its turn, once: it reports whether this
// call ended it.
func (r *ChatRepository) FinishExchange(ctx context.Context, turnID, answer, metadata string) (bool, error) {
	turn, err := r.Turn(ctx, turnID)
	if err != nil {
		return false, err
	}
	if turn.Status != domain.TurnRunning {
		return false, nil
	}
	m := ChatMessage{ID: MessageID(turn.ID, ExchangeAnswerIdx), SessionID: turn.SessionID, TurnID: turn.ID, TurnSeq: turn.Seq,
		Idx: ExchangeAnswerIdx, Role: "assistant", Content: answer, Metadata: metadata}
	if err := r.SaveMessage(ctx, &m); err != nil {
		return false, err
	}
	return r.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted})
}
