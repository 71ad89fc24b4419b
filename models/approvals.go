package models

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// Approval is one question put to the session's owner before the copilot changes the lab, and
// its answer. The workflow that waits holds the truth while it waits; this row lets the page,
// the API's checks and the audit read it without asking Temporal.
type Approval struct {
	ID         string `gorm:"primaryKey;size:64"`
	SessionID  string `gorm:"size:64;not null;index"`
	TurnID     string `gorm:"size:64;not null;uniqueIndex:idx_approval_call,priority:1"`
	ToolCallID string `gorm:"size:200;not null;uniqueIndex:idx_approval_call,priority:2"`
	ProjectID  string `gorm:"size:64;not null;index"`
	UserID     string `gorm:"size:64;not null"`
	ToolName   string `gorm:"size:100;not null"`
	Kind       string `gorm:"size:16;not null"`
	// WorkflowID is the workflow that waits for the decision (the turn, or its configuration job).
	WorkflowID string `gorm:"size:300;not null"`
	// Plan is the JSON the person decides on: devices, lines, verdicts, current configuration.
	Plan      string `gorm:"type:text;not null"`
	Status    string `gorm:"size:16;not null;index"`
	DecidedBy string `gorm:"size:200"`
	Comment   string `gorm:"type:text"`
	// Standing marks an "approve all": the decision also approves every later approval of the
	// same turn. StandingOf names the approval whose "approve all" decided this one, so the
	// audit shows that nobody was asked again.
	Standing   bool   `gorm:"not null;default:false"`
	StandingOf string `gorm:"size:64"`
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  *time.Time
}

// ApprovalRepository reads and writes approvals.
type ApprovalRepository struct{ DB *gorm.DB }

// Create stores a new pending approval; a retried activity finds the row it wrote before and
// gets it back unchanged, so the approval keeps its id and deadline.
func (r ApprovalRepository) Create(ctx context.Context, a *Approval) (*Approval, error) {
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now().UTC()
	}
	if err := r.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(a).Error; err != nil {
		return nil, err
	}
	var got Approval
	err := r.DB.WithContext(ctx).Where("turn_id = ? AND tool_call_id = ?", a.TurnID, a.ToolCallID).First(&got).Error
	return &got, err
}

// Get loads an approval by id.
func (r ApprovalRepository) Get(ctx context.Context, id string) (*Approval, error) {
	return first[Approval](r.DB.WithContext(ctx).Where("id = ?", id))
}

// GetMany loads the approvals with the given ids in one query, by id; ids not found are absent.
func (r ApprovalRepository) GetMany(ctx context.Context, ids []string) (map[string]Approval, error) {
	out := map[string]Approval{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []Approval
	if err := r.DB.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, a := range rows {
		out[a.ID] = a
	}
	return out, nil
}

// Decision is how a pending approval ended, as Decide stores it.
type Decision struct {
	Status  string
	By      string
	Comment string
	At      time.Time
	// Standing and StandingOf: see Approval.
	Standing   bool
	StandingOf string
}

// Decide records the decision of a pending approval. Deciding again with the same outcome is a
// no-op (a retried activity); a different outcome on a decided approval is refused, so the
// first decision stands.
func (r ApprovalRepository) Decide(ctx context.Context, id string, d Decision) (*Approval, error) {
	res := updateWhile(ctx, r.DB, &Approval{}, id, domain.ApprovalPending,
		map[string]any{"status": d.Status, "decided_by": d.By, "comment": d.Comment, "decided_at": d.At.UTC(),
			"standing": d.Standing, "standing_of": d.StandingOf})
	if res.Error != nil {
		return nil, res.Error
	}
	a, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if res.RowsAffected == 0 && a.Status != d.Status {
		return a, ErrAlreadyDecided
	}
	return a, nil
}

// PendingForTurn lists a turn's approvals that still wait for a decision, oldest first.
func (r ApprovalRepository) PendingForTurn(ctx context.Context, turnID string) ([]Approval, error) {
	var out []Approval
	err := r.DB.WithContext(ctx).Where("turn_id = ? AND status = ?", turnID, domain.ApprovalPending).
		Order("created_at").Order("id").Find(&out).Error
	return out, err
}

// ErrAlreadyDecided is returned when an approval already has a different decision.
var ErrAlreadyDecided = errors.New("the approval was already decided")

// ForSession lists a session's approvals, oldest first.
func (r ApprovalRepository) ForSession(ctx context.Context, sessionID string) ([]Approval, error) {
	var out []Approval
	err := r.DB.WithContext(ctx).Where("session_id = ?", sessionID).Order("created_at").Order("id").Find(&out).Error
	return out, err
}

// ForProject lists a user's approvals in a project, from chat sessions and MCP calls alike,
// oldest first; status "" lists every status.
func (r ApprovalRepository) ForProject(ctx context.Context, projectID, userID, status string) ([]Approval, error) {
	q := r.DB.WithContext(ctx).Where("project_id = ? AND user_id = ?", projectID, userID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	var out []Approval
	err := q.Order("created_at").Order("id").Find(&out).Error
	return out, err
}

// ConfigJob is one configuration tool call run as its own workflow: the audit's entry point.
// What was sent, read before and read after is in the device command records of the same turn
// and tool call; Summary is the per-device outcome and diff as the tool result reported it.
type ConfigJob struct {
	ID         string `gorm:"primaryKey;size:300"` // the ConfigJob workflow id
	SessionID  string `gorm:"size:64;not null;index"`
	TurnID     string `gorm:"size:64;not null"`
	ToolCallID string `gorm:"size:200;not null"`
	ProjectID  string `gorm:"size:64;not null;index"`
	UserID     string `gorm:"size:64;not null;index"`
	ToolName   string `gorm:"size:100;not null"`
	ApprovalID string `gorm:"size:64"`
	Status     string `gorm:"size:20;not null"`
	Devices    int    `gorm:"not null;default:0"`
	Summary    string `gorm:"type:text"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// ConfigJobRepository reads and writes configuration jobs.
type ConfigJobRepository struct{ DB *gorm.DB }

// Save creates or updates a job.
func (r ConfigJobRepository) Save(ctx context.Context, j *ConfigJob) error {
	now := time.Now().UTC()
	if j.CreatedAt.IsZero() {
		j.CreatedAt = now
	}
	j.UpdatedAt = now
	return r.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"approval_id", "status", "devices", "summary", "updated_at", "finished_at"}),
	}).Create(j).Error
}

// Get loads a job by id.
func (r ConfigJobRepository) Get(ctx context.Context, id string) (*ConfigJob, error) {
	return first[ConfigJob](r.DB.WithContext(ctx).Where("id = ?", id))
}

// List returns a project's jobs, newest first; userID "" lists every user's.
func (r ConfigJobRepository) List(ctx context.Context, projectID, userID string, limit int) ([]ConfigJob, error) {
	q := r.DB.WithContext(ctx).Where("project_id = ?", projectID)
	if userID != "" {
		q = q.Where("user_id = ?", userID)
	}
	var out []ConfigJob
	err := q.Order("created_at DESC").Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// MigrateApprovals creates the approval and configuration job tables.
func MigrateApprovals(db *gorm.DB) error { return db.AutoMigrate(&Approval{}, &ConfigJob{}) }

// ApprovalView is an approval as clients see it: in approval_required and approval_resolved
// events, and from the session's approvals route.
type ApprovalView struct {
	ApprovalID string          `json:"approval_id"`
	SessionID  string          `json:"session_id"`
	TurnID     string          `json:"turn_id"`
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	Plan       json.RawMessage `json:"plan"`
	CreatedAt  string          `json:"created_at"`
	ExpiresAt  string          `json:"expires_at"`
	DecidedAt  *string         `json:"decided_at"`
	DecidedBy  string          `json:"decided_by,omitempty"`
	Comment    string          `json:"comment,omitempty"`
	// Standing is set on an "approve all"; StandingOf on each approval it decided.
	Standing   bool   `json:"standing,omitempty"`
	StandingOf string `json:"standing_of,omitempty"`
}

// AlreadyDecided says, in words a person reads, why a decision on this approval changes
// nothing now: it expired, it is still pending, or it was decided (by whom).
func (a *Approval) AlreadyDecided() string {
	switch a.Status {
	case domain.ApprovalExpired:
		return "This approval expired without an answer; nothing was done, and the decision cannot change."
	case domain.ApprovalPending:
		return "This approval is still pending."
	}
	by := ""
	if a.DecidedBy != "" {
		by = " by " + a.DecidedBy
	}
	return "This approval was already " + a.Status + by + "; the first decision stands."
}

// View renders the approval for clients.
func (a *Approval) View() ApprovalView {
	plan := json.RawMessage(a.Plan)
	if !json.Valid(plan) {
		plan = json.RawMessage(`{}`)
	}
	v := ApprovalView{ApprovalID: a.ID, SessionID: a.SessionID, TurnID: a.TurnID, ToolCallID: a.ToolCallID,
		ToolName: a.ToolName, Kind: a.Kind, Status: a.Status, Plan: plan,
		CreatedAt: a.CreatedAt.UTC().Format(time.RFC3339Nano), ExpiresAt: a.ExpiresAt.UTC().Format(time.RFC3339Nano),
		DecidedBy: a.DecidedBy, Comment: a.Comment, Standing: a.Standing, StandingOf: a.StandingOf}
	if a.DecidedAt != nil {
		t := a.DecidedAt.UTC().Format(time.RFC3339Nano)
		v.DecidedAt = &t
	}
	return v
}

// ApprovalCount is how many approvals of a kind are in a status.
type ApprovalCount struct {
	Kind   string
	Status string
	N      int64
}

// Counts counts the approvals by kind and status, for the metrics.
func (r ApprovalRepository) Counts(ctx context.Context) ([]ApprovalCount, error) {
	var out []ApprovalCount
	err := r.DB.WithContext(ctx).Model(&Approval{}).Select("kind, status, count(*) AS n").Group("kind, status").Order("kind, status").Scan(&out).Error
	return out, err
}
