package models

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
)

// TopologyMark is what a chat session last saw of its lab, stored at the end of each turn, so
// the next turn can tell the model what changed outside the chat in between. Summary is JSON
// (livetopo.Summary); the table stays apart from the chat tables so dropping it loses only
// that note.
type TopologyMark struct {
	SessionID string `gorm:"primaryKey;size:64"`
	ProjectID string `gorm:"size:64;not null"`
	Summary   string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

// MigrateTopologyMarks creates the topology_marks table.
func MigrateTopologyMarks(db *gorm.DB) error { return db.AutoMigrate(&TopologyMark{}) }

// TopologyMarks reads and writes topology marks.
type TopologyMarks struct{ DB *gorm.DB }

// Get returns the session's mark, or ErrNotFound before its first finished turn.
func (r TopologyMarks) Get(ctx context.Context, sessionID string) (*TopologyMark, error) {
	var m TopologyMark
	var at sql.NullTime
	if err := scanOne(ctx, r.DB, markBySession, []any{sessionID}, &m.SessionID, &m.ProjectID, &m.Summary, &at); err != nil {
		return nil, err
	}
	m.UpdatedAt = at.Time
	return &m, nil
}

// Put stores the session's mark, replacing the previous one. A session deleted meanwhile (its
// turn cancelled by the delete and finalized after it) gets no mark: the row would outlive the
// session it belongs to. On PostgreSQL the session row is locked for the check, so a delete
// running at the same time either sees this mark and removes it, or makes the check fail;
// SQLite runs one writer at a time anyway.
func (r TopologyMarks) Put(ctx context.Context, m *TopologyMark) error {
	m.UpdatedAt = time.Now().UTC()
	lock := ""
	if r.DB.Dialector.Name() == "postgres" {
		lock = " FOR KEY SHARE"
	}
	return r.DB.WithContext(ctx).Exec(`INSERT INTO topology_marks (session_id, project_id, summary, updated_at)
		SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chat_sessions WHERE thread_id = ?`+lock+`)
		ON CONFLICT (session_id) DO UPDATE SET project_id = excluded.project_id, summary = excluded.summary, updated_at = excluded.updated_at`,
		m.SessionID, m.ProjectID, m.Summary, m.UpdatedAt, m.SessionID).Error
}
