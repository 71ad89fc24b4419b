package models

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// Pages of a session list and of a history: how many rows one answer holds by default and at
// most. GNS3's web UI reads only the first page of either, so the defaults are what it always got.
const (
	DefaultSessionPage = 100
	MaxSessionPage     = 500
	DefaultHistoryPage = 100
	// MaxHistoryPage stays what the history took before it paged: the chat page reads a
	// session's history 1,000 messages at a time.
	MaxHistoryPage = 1000
)

// sessionOrder is the session list's order (GNS3's chat API: pinned first, then most recently
// updated), made total by the id so that pages neither repeat nor skip a session.
// idx_session_list serves it for one user's sessions of one project.
func sessionOrder(q *gorm.DB) *gorm.DB {
	return q.Order("pinned DESC").Order("updated_at DESC").Order("id DESC")
}

// ListSessionPage returns one page of a user's sessions of a project in the list's order, after
// skipping offset of them, and how many sessions the list holds in all. A mode other than ""
// keeps only the sessions whose latest turn ran in that mode (SessionMode).
func (r *ChatRepository) ListSessionPage(ctx context.Context, userID, projectID, mode string, limit, offset int) ([]ChatSession, int64, error) {
	var total int64
	if err := r.sessionList(ctx, userID, projectID, mode).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	out := []ChatSession{}
	if int64(offset) >= total {
		return out, total, nil
	}
	err := sessionOrder(r.sessionList(ctx, userID, projectID, mode)).Limit(limit).Offset(offset).Find(&out).Error
	return out, total, err
}

// ListSessions returns the first limit of a user's sessions of a project, pinned first, then
// most recently updated.
func (r *ChatRepository) ListSessions(ctx context.Context, userID, projectID string, limit int) ([]ChatSession, error) {
	var out []ChatSession
	err := sessionOrder(r.sessionList(ctx, userID, projectID, "")).Limit(limit).Find(&out).Error
	return out, err
}

// sessionList selects a user's sessions of a project, of one mode unless mode is "".
func (r *ChatRepository) sessionList(ctx context.Context, userID, projectID, mode string) *gorm.DB {
	q := r.DB.WithContext(ctx).Model(&ChatSession{}).Where("user_id = ? AND project_id = ?", userID, projectID)
	if mode != "" {
		q = modeCondition(q, mode)
	}
	return q
}

// modeCondition keeps the sessions whose metadata records mode. The metadata is written by
// withMode (encoding/json, no spaces); the spaced form is matched too, for an object someone
// wrote by hand. A JSON string cannot hold a bare quote, so the pattern cannot match inside
// another value.
func modeCondition(q *gorm.DB, mode string) *gorm.DB {
	esc := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(mode)
	return q.Where("(metadata LIKE ? ESCAPE '!' OR metadata LIKE ? ESCAPE '!')",
		`%"`+MetadataModeKey+`":"`+esc+`"%`, `%"`+MetadataModeKey+`": "`+esc+`"%`)
}

// HistoryPage returns a session's committed messages, oldest first: the newest limit of them
// after skipping the offset newest, and how many committed messages the session has in all.
// Offset 0 is the end of the conversation; the next older page starts at offset+limit.
func (r *ChatRepository) HistoryPage(ctx context.Context, sessionID string, limit, offset int) ([]ChatMessage, int64, error) {
	var total int64
	if err := r.committed(ctx, sessionID).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	if int64(offset) >= total {
		return []ChatMessage{}, total, nil
	}
	out, err := r.history(ctx, sessionID, limit, offset)
	return out, total, err
}

// History returns the last limit committed messages of a session, oldest first.
func (r *ChatRepository) History(ctx context.Context, sessionID string, limit int) ([]ChatMessage, error) {
	return r.history(ctx, sessionID, limit, 0)
}

// committed is the session's conversation as people read it: committed messages, without the
// ones only the model reads.
func (r *ChatRepository) committed(ctx context.Context, sessionID string) *gorm.DB {
	return r.DB.WithContext(ctx).Model(&ChatMessage{}).Where("session_id = ? AND committed = ? AND model_context = ?", sessionID, true, false)
}

// history is one page of HistoryPage, without the count.
func (r *ChatRepository) history(ctx context.Context, sessionID string, limit, offset int) ([]ChatMessage, error) {
	out := []ChatMessage{}
	err := r.committed(ctx, sessionID).Order("turn_seq DESC").Order("idx DESC").Order("sub DESC").
		Limit(limit).Offset(offset).Find(&out).Error
	slices.Reverse(out)
	return out, err
}
