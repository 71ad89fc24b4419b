package models

import (
	"context"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// AppliedJobStatuses are the statuses of a job that sent its lines: what an undo can take back.
var AppliedJobStatuses = []string{domain.JobCompleted, domain.JobPartial, domain.JobFailed}

// LastApplied is the newest job of a session, by a user, that sent its lines (ErrNotFound when
// none did); except names a job to pass over (the undo asking).
func (r ConfigJobRepository) LastApplied(ctx context.Context, sessionID, userID, except string) (*ConfigJob, error) {
	return first[ConfigJob](r.DB.WithContext(ctx).
		Where("session_id = ? AND user_id = ? AND status IN ? AND id <> ?", sessionID, userID, AppliedJobStatuses, except).
		Order("created_at DESC").Order("id DESC"))
}

// BySession lists a session's jobs, newest first, at most limit.
func (r ConfigJobRepository) BySession(ctx context.Context, sessionID string, limit int) ([]ConfigJob, error) {
	var out []ConfigJob
	err := r.DB.WithContext(ctx).Where("session_id = ?", sessionID).Order("created_at DESC").Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}
