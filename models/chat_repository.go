package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// ChatRepository reads and writes sessions, turns and messages. Every read that a user can
// trigger is scoped by user and project, so another user's session is simply not found.
type ChatRepository struct {
	DB  *gorm.DB
	Now func() time.Time
}

// NewChatRepository returns a repository using the wall clock.
func NewChatRepository(db *gorm.DB) *ChatRepository {
	return &ChatRepository{DB: db, Now: func() time.Time { return time.Now().UTC() }}
}

var messageNamespace = uuid.MustParse("6f1c1a52-45a4-4d38-9c55-1b1c5c3b7a10")

// MessageID derives a message's id from its turn and position, so an activity that is retried
// writes the same row again instead of a duplicate.
func MessageID(turnID string, idx int) string {
	return uuid.NewSHA1(messageNamespace, []byte(turnID+"/"+strconv.Itoa(idx))).String()
}

// AsideMessageID names an aside (see ChatMessage.Aside) of a turn: part says which ("question",
// "answer") and of what (an approval id), so a retried activity writes the same row again.
func AsideMessageID(turnID string, idx int, part, of string) string {
	return uuid.NewSHA1(messageNamespace, []byte(turnID+"/"+strconv.Itoa(idx)+"/"+part+"/"+of)).String()
}

// ContextMessageID names the model-context message (see ChatMessage.ModelContext) before the
// assistant message at idx of a turn, so a retried model call writes the same row again.
func ContextMessageID(turnID string, idx int) string {
	return uuid.NewSHA1(messageNamespace, []byte(turnID+"/"+strconv.Itoa(idx)+"/context")).String()
}

// GetSession returns the session if it belongs to this user and project.
func (r *ChatRepository) GetSession(ctx context.Context, userID, projectID, threadID string) (*ChatSession, error) {
	var s ChatSession
	err := r.DB.WithContext(ctx).Where("thread_id = ? AND user_id = ? AND project_id = ?", threadID, userID, projectID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &s, err
}

// SessionByThread returns a session by its id alone; only worker-side code uses it.
func (r *ChatRepository) SessionByThread(ctx context.Context, threadID string) (*ChatSession, error) {
	var s ChatSession
	err := r.DB.WithContext(ctx).Where("thread_id = ?", threadID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &s, err
}

// RenameSession sets a title the user chose and locks it against automatic titles.
func (r *ChatRepository) RenameSession(ctx context.Context, userID, projectID, threadID, title string) (*ChatSession, error) {
	res := r.DB.WithContext(ctx).Model(&ChatSession{}).
		Where("thread_id = ? AND user_id = ? AND project_id = ?", threadID, userID, projectID).
		Updates(map[string]any{"title": title, "title_locked": true, "updated_at": r.Now()})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return r.GetSession(ctx, userID, projectID, threadID)
}

// SetPinned pins or unpins a session.
func (r *ChatRepository) SetPinned(ctx context.Context, userID, projectID, threadID string, pinned bool) (*ChatSession, error) {
	res := r.DB.WithContext(ctx).Model(&ChatSession{}).
		Where("thread_id = ? AND user_id = ? AND project_id = ?", threadID, userID, projectID).
		Updates(map[string]any{"pinned": pinned, "updated_at": r.Now()})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return r.GetSession(ctx, userID, projectID, threadID)
}

// DeleteSession removes a session with its turns, messages and topology mark.
func (r *ChatRepository) DeleteSession(ctx context.Context, userID, projectID, threadID string) error {
	return r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("thread_id = ? AND user_id = ? AND project_id = ?", threadID, userID, projectID).Delete(&ChatSession{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.Where("session_id = ?", threadID).Delete(&ChatMessage{}).Error; err != nil {
			return err
		}
		if err := tx.Where("session_id = ?", threadID).Delete(&TopologyMark{}).Error; err != nil {
			return err
		}
		return tx.Where("session_id = ?", threadID).Delete(&ChatTurn{}).Error
	})
}

// StartTurnParams describes a new user message.
type StartTurnParams struct {
	// SessionID is empty to create a session under a new id. A session id nobody has used yet
	// creates the session under that id: GNS3's web UI makes up the id of a new chat itself and
	// sends it with the first message.
	SessionID    string
	UserID       string
	ProjectID    string
	Message      string
	Mode         string
	LLMConfigID  string
	Temperature  *float64
	InitialTitle string
	// WorkflowID derives the turn's workflow id from its session and turn ids.
	WorkflowID func(sessionID, turnID string) string
	// MaxRunningPerUser refuses the turn (*LimitError) when the user already has that many
	// running, in any session; 0 is no limit.
	MaxRunningPerUser int
}

// StartTurn creates (when needed) the session, the turn and the staged user message in one
// transaction, so a failure leaves nothing half-created. It returns ErrNotFound for a session
// id that belongs to another user or project (and creates nothing), and ErrTurnRunning when the
// session is busy, which includes losing the race to create a new session under the same id.
func (r *ChatRepository) StartTurn(ctx context.Context, p StartTurnParams) (*ChatSession, *ChatTurn, bool, error) {
	var (
		sess    ChatSession
		turn    ChatTurn
		created bool
	)
	now := r.Now()
	err := r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkUserTurns(tx, p.UserID, p.MaxRunningPerUser); err != nil {
			return err
		}
		var fresh bool
		var err error
		if created, fresh, err = sessionForTurn(tx, p, now, &sess); err != nil {
			return err
		}
		if err := recordMode(tx, &sess, p.Mode); err != nil {
			return err
		}
		seq, err := turnSeq(tx, sess.ThreadID, fresh)
		if err != nil {
			return err
		}
		return insertTurn(tx, p, sess.ThreadID, seq, now, &turn)
	})
	if errors.Is(err, errSessionRace) {
		err = r.sessionRaceAnswer(ctx, p)
	}
	if err != nil {
		return nil, nil, false, err
	}
	return &sess, &turn, created, nil
}

// sessionForTurn reads the turn's session into sess, or creates it: for a new chat, or a first
// message under an id the client chose. fresh is a session under an id made up here: no row can
// name it yet, so its first turn is its only one.
func sessionForTurn(tx *gorm.DB, p StartTurnParams, now time.Time, sess *ChatSession) (created, fresh bool, err error) {
	if p.SessionID != "" {
		err := tx.Where("thread_id = ?", p.SessionID).Take(sess).Error
		switch {
		case err == nil && (sess.UserID != p.UserID || sess.ProjectID != p.ProjectID):
			// Someone else's session looks exactly like one that does not exist.
			return false, false, ErrNotFound
		case err == nil:
			return false, false, nil
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return false, false, err
		}
	}
	id := p.SessionID
	if id == "" {
		id, fresh = uuid.NewString(), true
	}
	// The mode goes in with the row rather than in an update after it.
	*sess = ChatSession{ThreadID: id, UserID: p.UserID, ProjectID: p.ProjectID,
		Title: p.InitialTitle, Metadata: withMode("{}", p.Mode), Stats: "{}", CreatedAt: now, UpdatedAt: now}
	err = scanOne(tx.Statement.Context, tx, insertSession, []any{sess.ThreadID, sess.UserID, sess.ProjectID, sess.Title,
		now, now, sess.Metadata, false, false}, &sess.ID)
	if err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) && p.SessionID != "" {
			return false, false, errSessionRace
		}
		return false, false, err
	}
	return true, fresh, nil
}

// turnSeq numbers the session's next turn, refusing while one runs; a fresh session's first is 1
// without asking.
func turnSeq(tx *gorm.DB, sessionID string, fresh bool) (int, error) {
	if fresh {
		return 1, nil
	}
	var running int64
	if err := tx.Model(&ChatTurn{}).Where("session_id = ? AND status = ?", sessionID, domain.TurnRunning).Count(&running).Error; err != nil {
		return 0, err
	}
	if running > 0 {
		return 0, ErrTurnRunning
	}
	return nextTurnSeq(tx, sessionID)
}

// insertTurn writes the running turn into turn, with the user's message as its first.
func insertTurn(tx *gorm.DB, p StartTurnParams, sessionID string, seq int, now time.Time, turn *ChatTurn) error {
	turnID := uuid.NewString()
	*turn = ChatTurn{ID: turnID, SessionID: sessionID, Seq: seq, UserID: p.UserID, ProjectID: p.ProjectID,
		Status: domain.TurnRunning, Mode: p.Mode, LLMConfigID: p.LLMConfigID, WorkflowID: p.WorkflowID(sessionID, turnID),
		Temperature: p.Temperature, CreatedAt: now}
	ctx := tx.Statement.Context
	if _, err := insertTurnRow.Exec(ctx, tx, turnArgs(turn)...); err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return ErrTurnRunning
		}
		return err
	}
	msg := ChatMessage{ID: MessageID(turnID, 0), SessionID: sessionID, TurnID: turnID, TurnSeq: seq, Idx: 0,
		Role: "user", Content: p.Message, CreatedAt: now}
	_, err := insertMessage.Exec(ctx, tx, messageArgs(&msg)...)
	return err
}

// sessionRaceAnswer answers a first message that lost the race to create its session under
// the client's id: whose the session is decides it, and a failed PostgreSQL transaction cannot
// ask, so it is asked after.
func (r *ChatRepository) sessionRaceAnswer(ctx context.Context, p StartTurnParams) error {
	other, err := r.SessionByThread(ctx, p.SessionID)
	switch {
	case err != nil && !errors.Is(err, ErrNotFound):
		return err
	case err == nil && other.UserID == p.UserID && other.ProjectID == p.ProjectID:
		return ErrTurnRunning
	default:
		return ErrNotFound
	}
}

// nextTurnSeq numbers a session's next turn: one more than its last, 1 for its first.
func nextTurnSeq(tx *gorm.DB, sessionID string) (int, error) {
	var maxSeq *int
	if err := tx.Model(&ChatTurn{}).Where("session_id = ?", sessionID).Select("MAX(seq)").Scan(&maxSeq).Error; err != nil {
		return 0, err
	}
	if maxSeq == nil {
		return 1, nil
	}
	return *maxSeq + 1, nil
}

// errSessionRace is a new session's id taken by a concurrent insert.
var errSessionRace = errors.New("session id taken by a concurrent insert")

// AbandonTurn undoes StartTurn when the workflow could not be started: the turn and its user
// message go, and so does the session if the turn had created it.
func (r *ChatRepository) AbandonTurn(ctx context.Context, turn *ChatTurn, deleteSession bool) error {
	return r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("turn_id = ?", turn.ID).Delete(&ChatMessage{}).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ?", turn.ID).Delete(&ChatTurn{}).Error; err != nil {
			return err
		}
		if deleteSession {
			return tx.Where("thread_id = ?", turn.SessionID).Delete(&ChatSession{}).Error
		}
		return nil
	})
}

// Turn returns a turn by id.
func (r *ChatRepository) Turn(ctx context.Context, turnID string) (*ChatTurn, error) {
	var t ChatTurn
	if err := readTurn(ctx, r.DB, turnID, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// readTurn reads a turn by id on db (a Transaction's tx reads in it); ErrNotFound when there is
// none.
func readTurn(ctx context.Context, db *gorm.DB, turnID string, t *ChatTurn) error {
	rows, err := turnByID.Query(ctx, db, turnID)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return ErrNotFound
	}
	if err := scanTurn(rows.Scan, t); err != nil {
		return err
	}
	return rows.Close()
}

// LatestTurn returns the session's most recent turn.
func (r *ChatRepository) LatestTurn(ctx context.Context, sessionID string) (*ChatTurn, error) {
	var t ChatTurn
	err := r.DB.WithContext(ctx).Where("session_id = ?", sessionID).Order("seq DESC").Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &t, err
}

// RunningTurns returns the user's turns whose rows say running, in every session, oldest first.
func (r *ChatRepository) RunningTurns(ctx context.Context, userID string) ([]ChatTurn, error) {
	var out []ChatTurn
	err := r.DB.WithContext(ctx).Where(runningOfUser(domain.TurnRunning), userID).Order("created_at").Find(&out).Error
	return out, err
}

// Transcript returns what the model sees during a turn: the session's committed messages plus
// the turn's own staged ones, in order, and which of their turns are private (their mode, read in
// the same query, satisfies private), for RedactPrivate.
func (r *ChatRepository) Transcript(ctx context.Context, turn *ChatTurn, private func(mode string) bool) ([]ChatMessage, map[string]bool, error) {
	rows, err := transcriptOf.Query(ctx, r.DB, turn.SessionID, true, turn.ID, false)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	out := make([]ChatMessage, 0, 8)
	priv := map[string]bool{}
	for rows.Next() {
		var m ChatMessage
		var ns nullMessage
		var mode string
		if err := rows.Scan(append(messageFields(&m, &ns), &mode)...); err != nil {
			return nil, nil, err
		}
		ns.apply(&m)
		out = append(out, m)
		if private(mode) {
			priv[m.TurnID] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return out, priv, nil
}

// SaveMessage writes a staged message of a running turn; writing the same id again replaces it.
func (r *ChatRepository) SaveMessage(ctx context.Context, m *ChatMessage) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = r.Now()
	}
	_, err := upsertMessage.Exec(ctx, r.DB, messageArgs(m)...)
	return err
}

// DeleteMessage removes a staged message of a running turn (a model-context message that a
// retried call no longer sends); a message that is not there is no error.
func (r *ChatRepository) DeleteMessage(ctx context.Context, id string) error {
	_, err := deleteMessage.Exec(ctx, r.DB, id)
	return err
}

// ToolCallRecord is the stored shape of one assistant tool call (OpenAI's wire shape).
type ToolCallRecord struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// FinalizeParams closes a turn.
type FinalizeParams struct {
	TurnID       string
	Status       string
	Error        string
	LLMCalls     int64
	InputTokens  int64
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens spent thinking, where providers report it.
	ReasoningTokens int64
	// CachedTokens is the part of InputTokens the provider's prompt cache served.
	CachedTokens int64
	// Title, when set, names the session in the same step, unless the user has named it.
	Title string
}

// Finished is what FinishTurn did.
type Finished struct {
	// Applied: this call finalized the turn (a retry finds it finalized and changes nothing).
	Applied bool
	// Titled: the session took FinalizeParams.Title.
	Titled bool
	// Turn is the turn as it was finalized, when Applied.
	Turn ChatTurn
}

// FinalizeTurn is FinishTurn for callers that only ask whether it finalized the turn.
func (r *ChatRepository) FinalizeTurn(ctx context.Context, p FinalizeParams) (bool, error) {
	f, err := r.FinishTurn(ctx, p)
	return f.Applied, err
}

// FinishTurn commits the turn's staged messages, adds a "cancelled" result for any tool call
// left without one (so the transcript stays a valid OpenAI sequence), and adds the turn's
// statistics to the session with one incrementing UPDATE, which also sets its title when one is
// given. A turn already finalized is left alone, which makes a retried finalizer harmless.
func (r *ChatRepository) FinishTurn(ctx context.Context, p FinalizeParams) (Finished, error) {
	var out Finished
	now := r.Now()
	err := r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var turn ChatTurn
		if err := readTurn(ctx, tx, p.TurnID, &turn); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil // the session was deleted while the turn ran
			}
			return err
		}
		if turn.Status != domain.TurnRunning {
			return nil
		}
		rows, err := stagedOfTurn.Query(ctx, tx, turn.ID)
		if err != nil {
			return err
		}
		var staged []ChatMessage
		if err := scanMessages(rows, func(m ChatMessage) { staged = append(staged, m) }); err != nil {
			return err
		}
		added, maxIdx, err := answerUnrunCalls(tx, &turn, staged, p.Status, now)
		if err != nil {
			return err
		}
		if p.Status == domain.TurnFailed || p.Status == domain.TurnCancelled {
			n, err := markTurnError(tx, &turn, staged, p, maxIdx+1, now)
			if err != nil {
				return err
			}
			added += n
		}
		if _, err := commitTurnRows.Exec(ctx, tx, true, turn.ID); err != nil {
			return err
		}
		titled, err := addTurnStats(ctx, tx, &turn, p, int64(conversationMessages(staged)+added), now)
		if err != nil {
			return err
		}
		if _, err := finishTurnRow.Exec(ctx, tx, p.Status, p.Error, now, turn.ID); err != nil {
			return err
		}
		turn.Status, turn.Error, turn.FinishedAt = p.Status, p.Error, &now
		out = Finished{Applied: true, Titled: titled, Turn: turn}
		return nil
	})
	if err != nil {
		return Finished{}, err
	}
	return out, nil
}

// conversationMessages counts the messages of staged that people read: model-context messages
// are not part of the conversation's count.
func conversationMessages(staged []ChatMessage) int {
	n := 0
	for _, m := range staged {
		if !m.ModelContext {
			n++
		}
	}
	return n
}

// answerUnrunCalls adds a result for every tool call among the staged messages that has none
// (the turn ended before running it), numbered after the last; it returns how many it added
// and the last index.
func answerUnrunCalls(tx *gorm.DB, turn *ChatTurn, staged []ChatMessage, status string, now time.Time) (added, maxIdx int, err error) {
	answered := map[string]bool{}
	for _, m := range staged {
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
		}
		maxIdx = max(maxIdx, m.Idx)
	}
	for _, m := range staged {
		if m.Role != "assistant" || m.ToolCalls == "" {
			continue
		}
		var calls []ToolCallRecord
		if err := json.Unmarshal([]byte(m.ToolCalls), &calls); err != nil {
			return 0, 0, fmt.Errorf("decoding stored tool calls: %w", err)
		}
		for _, c := range calls {
			if answered[c.ID] {
				continue
			}
			maxIdx++
			added++
			syn := ChatMessage{ID: MessageID(turn.ID, maxIdx), SessionID: turn.SessionID, TurnID: turn.ID,
				TurnSeq: turn.Seq, Idx: maxIdx, Role: "tool", Name: c.Function.Name, ToolCallID: c.ID,
				Content: UnrunToolResult(c.Function.Name, status), CreatedAt: now}
			if err := tx.Create(&syn).Error; err != nil {
				return 0, 0, err
			}
		}
	}
	return added, maxIdx, nil
}

// addTurnStats adds a finished turn's messages and tokens to its session, with p.Title unless
// the user has named it (one incrementing UPDATE), and the tokens to its user's usage. It
// reports whether the title was taken.
func addTurnStats(ctx context.Context, tx *gorm.DB, turn *ChatTurn, p FinalizeParams, messages int64, now time.Time) (bool, error) {
	var locked bool
	err := scanOne(ctx, tx, addSessionStats, []any{messages, p.LLMCalls, p.InputTokens, p.OutputTokens, p.InputTokens + p.OutputTokens,
		p.ReasoningTokens, p.CachedTokens, now, now, p.Title, p.Title, turn.SessionID}, &locked)
	switch {
	case errors.Is(err, ErrNotFound):
		// The session is gone: a delete removes its turns too, so only an inconsistent file gets here.
	case err != nil:
		return false, err
	}
	titled := err == nil && p.Title != "" && !locked
	return titled, addTokenUsage(ctx, tx, turn.UserID, now, p.InputTokens, p.OutputTokens)
}

// UnrunToolResult is the result, in the standard tool format, of a tool call its turn ended
// without running; for a turn the user aborted it says so, as GNS3's own copilot does.
func UnrunToolResult(toolName, turnStatus string) string {
	msg := "The tool was not run because the turn was " + turnStatus + "."
	meta := map[string]any{"tool_name": toolName}
	if turnStatus == domain.TurnCancelled {
		msg = "Aborted: the turn was stopped before this tool finished."
		meta["status"] = "aborted"
	}
	out, _ := json.Marshal(map[string]any{"success": false, "total": 0, "successful": 0, "failed": 0,
		"data": []any{}, "error": msg, "metadata": meta})
	return string(out)
}

// TurnErrorText is what a failed or cancelled turn's last assistant message carries as
// metadata.error when the turn gave no reason of its own.
func TurnErrorText(status, reason string) string {
	switch {
	case reason != "":
		return reason
	case status == domain.TurnCancelled:
		return "The turn was stopped before it finished."
	default:
		return "The turn failed."
	}
}

// markTurnError puts the reason a turn did not complete into metadata.error of its last assistant
// message, where GNS3's web UI looks for it when it shows a session's history; its live stream
// stops at the error event and never sees done. A turn that failed before the model said
// anything gets an empty assistant message to carry it (the model never sees an empty one). It
// reports how many messages it added.
func markTurnError(tx *gorm.DB, turn *ChatTurn, staged []ChatMessage, p FinalizeParams, nextIdx int, now time.Time) (int, error) {
	text := TurnErrorText(p.Status, p.Error)
	var last *ChatMessage
	for i := range staged {
		if staged[i].Role == "assistant" && (last == nil || staged[i].Idx > last.Idx) {
			last = &staged[i]
		}
	}
	if last == nil {
		meta, _ := json.Marshal(map[string]any{"error": text, "status": p.Status})
		m := ChatMessage{ID: MessageID(turn.ID, nextIdx), SessionID: turn.SessionID, TurnID: turn.ID, TurnSeq: turn.Seq,
			Idx: nextIdx, Role: "assistant", Metadata: string(meta), CreatedAt: now}
		return 1, tx.Create(&m).Error
	}
	meta := map[string]any{}
	if last.Metadata != "" {
		_ = json.Unmarshal([]byte(last.Metadata), &meta) // a damaged object is replaced, not kept
	}
	meta["error"], meta["status"] = text, p.Status
	b, _ := json.Marshal(meta)
	return 0, tx.Model(&ChatMessage{}).Where("id = ?", last.ID).Update("metadata", string(b)).Error
}

// SetAutoTitle stores a generated title unless the user has named the session.
func (r *ChatRepository) SetAutoTitle(ctx context.Context, sessionID, title string) (bool, error) {
	res := r.DB.WithContext(ctx).Model(&ChatSession{}).Where("thread_id = ? AND title_locked = ?", sessionID, false).
		Updates(map[string]any{"title": title, "updated_at": r.Now()})
	return res.RowsAffected > 0, res.Error
}

// TitleWanted reports whether a session is still to be named automatically: the user has not
// named it and none of its turns has completed (the title is made after the first). A session
// that does not exist is not.
func (r *ChatRepository) TitleWanted(ctx context.Context, sessionID string) (bool, error) {
	var locked, completed bool
	err := scanOne(ctx, r.DB, titleWanted, []any{sessionID}, &locked, &completed)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil && !locked && !completed, err
}

// RunningSessions reports which of these sessions have a turn running now.
func (r *ChatRepository) RunningSessions(ctx context.Context, sessionIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var ids []string
	err := r.DB.WithContext(ctx).Model(&ChatTurn{}).Where("session_id IN ? AND status = ?", sessionIDs, domain.TurnRunning).
		Pluck("session_id", &ids).Error
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}

// CompletedTurns counts a session's finished turns; the title is generated after the first.
func (r *ChatRepository) CompletedTurns(ctx context.Context, sessionID string) (int64, error) {
	var n int64
	err := r.DB.WithContext(ctx).Model(&ChatTurn{}).Where("session_id = ? AND status = ?", sessionID, domain.TurnCompleted).Count(&n).Error
	return n, err
}
