package models

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// pruneLab is a database holding sessions of every kind a prune meets, each with one finished
// turn of two messages and a topology mark unless said otherwise.
type pruneLab struct {
	db   *gorm.DB
	repo *ChatRepository
	ids  map[string]string
}

func newPruneLab(t *testing.T, db *gorm.DB) *pruneLab {
	l := &pruneLab{db: db, repo: NewChatRepository(db), ids: map[string]string{}}
	ctx := context.Background()
	add := func(name string, lastActive time.Time, finish bool) (string, *ChatTurn) {
		sess, turn, _, err := l.repo.StartTurn(ctx, turnParams("", "u1", "p1"))
		require.NoError(t, err)
		require.NoError(t, l.repo.SaveMessage(ctx, &ChatMessage{ID: MessageID(turn.ID, 1), SessionID: sess.ThreadID,
			TurnID: turn.ID, TurnSeq: turn.Seq, Idx: 1, Role: "assistant", Content: "answer"}))
		if finish {
			_, err = l.repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted})
			require.NoError(t, err)
		}
		require.NoError(t, TopologyMarks{DB: db}.Put(ctx, &TopologyMark{SessionID: sess.ThreadID, ProjectID: "p1", Summary: "{}", UpdatedAt: lastActive}))
		require.NoError(t, db.Model(&ChatSession{}).Where("thread_id = ?", sess.ThreadID).UpdateColumn("updated_at", lastActive).Error)
		// Every session sent a show command somewhere: the device audit.
		require.NoError(t, DeviceRepository{DB: db}.Save(ctx, &DeviceCommand{TurnID: turn.ID, ToolCallID: "c1", NodeID: "n1",
			SessionID: sess.ThreadID, UserID: "u1", ProjectID: "p1", DeviceName: "R1", Tool: "show", Command: "show ip route",
			Status: CommandOK, Output: "C 10.0.0.0/24", CreatedAt: lastActive}))
		l.ids[name] = sess.ThreadID
		return sess.ThreadID, turn
	}
	jan, jun := time.Date(2025, 1, 10, 9, 0, 0, 0, time.UTC), time.Date(2025, 6, 10, 9, 0, 0, 0, time.UTC)
	add("plain", jan, true)
	sid, turn := add("approved", jun, true)
	_, err := ApprovalRepository{DB: db}.Create(ctx, &Approval{ID: "a1", SessionID: sid, TurnID: turn.ID, ToolCallID: "c2",
		ProjectID: "p1", UserID: "u1", ToolName: "configure", Kind: "config", WorkflowID: "w", Plan: "{}", Status: "approved",
		CreatedAt: jun, ExpiresAt: jun.Add(time.Hour)})
	require.NoError(t, err)
	require.NoError(t, ConfigJobRepository{DB: db}.Save(ctx, &ConfigJob{ID: "job1", SessionID: sid, TurnID: turn.ID, ToolCallID: "c2",
		ProjectID: "p1", UserID: "u1", ToolName: "configure", ApprovalID: "a1", Status: domain.JobCompleted}))
	sid, turn = add("exercise", jun, true)
	require.NoError(t, db.Create(&Exercise{ID: ExerciseID(sid, turn.Seq), SessionID: sid, TurnID: turn.ID, Seq: turn.Seq,
		ProjectID: "p1", UserID: "u1", Status: "solved", CreatedAt: jun, UpdatedAt: jun, ExpiresAt: jun.Add(time.Hour)}).Error)
	add("running", jan, false) // old, yet its turn still runs
	sid, turn = add("recent", time.Now().UTC(), true)
	_, err = ApprovalRepository{DB: db}.Create(ctx, &Approval{ID: "a2", SessionID: sid, TurnID: turn.ID, ToolCallID: "c2",
		ProjectID: "p1", UserID: "u1", ToolName: "configure", Kind: "config", WorkflowID: "w", Plan: "{}", Status: "approved",
		ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	return l
}

// rows counts every table a prune reads, by table.
func (l *pruneLab) rows(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, m := range map[string]any{"sessions": &ChatSession{}, "turns": &ChatTurn{}, "messages": &ChatMessage{},
		"marks": &TopologyMark{}, "approvals": &Approval{}, "jobs": &ConfigJob{}, "commands": &DeviceCommand{}, "exercises": &Exercise{}} {
		var n int64
		require.NoError(t, l.db.Model(m).Count(&n).Error)
		out[name] = n
	}
	return out
}

func (l *pruneLab) exists(t *testing.T, name string) bool {
	t.Helper()
	var n int64
	require.NoError(t, l.db.Model(&ChatSession{}).Where("thread_id = ?", l.ids[name]).Count(&n).Error)
	return n == 1
}

func TestPruneRemovesOldTranscriptsAndKeepsTheAudit(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		l := newPruneLab(t, db)
		p := Pruner{DB: db, Batch: 1} // a batch a session: the loop is exercised too
		start := l.rows(t)
		require.Equal(t, map[string]int64{"sessions": 5, "turns": 5, "messages": 10, "marks": 5, "approvals": 2, "jobs": 1,
			"commands": 5, "exercises": 1}, start)

		// Before February only "plain" is old and idle ("running" is old but busy).
		feb := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
		plan, err := p.Plan(ctx, feb)
		require.NoError(t, err)
		require.Equal(t, PruneReport{Before: feb, Sessions: 1, Turns: 1, Messages: 2, TopologyMarks: 1, DeviceCommands: 1, Busy: 1}, plan)
		require.Equal(t, start, l.rows(t), "a plan changes nothing")

		// Before December the approved and the exercise sessions are old too: refused whole.
		dec := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
		plan, err = p.Plan(ctx, dec)
		require.NoError(t, err)
		require.Equal(t, PruneReport{Before: dec, Sessions: 3, Turns: 3, Messages: 6, TopologyMarks: 3, WithAudit: 2,
			Approvals: 1, ConfigJobs: 1, DeviceCommands: 3, Exercises: 1, Busy: 1}, plan)
		_, err = p.Prune(ctx, dec, false)
		var audit *AuditError
		require.True(t, errors.As(err, &audit), "%v", err)
		require.EqualValues(t, 2, audit.Sessions)
		require.Equal(t, start, l.rows(t), "a refused prune removes nothing")

		// Before February it goes ahead: the old plain transcript goes, its device audit stays.
		done, err := p.Prune(ctx, feb, false)
		require.NoError(t, err)
		require.Equal(t, PruneReport{Before: feb, Sessions: 1, Turns: 1, Messages: 2, TopologyMarks: 1, DeviceCommands: 1, Busy: 1}, done)
		require.False(t, l.exists(t, "plain"))
		require.Equal(t, map[string]int64{"sessions": 4, "turns": 4, "messages": 8, "marks": 4, "approvals": 2, "jobs": 1,
			"commands": 5, "exercises": 1}, l.rows(t))

		// With the audit included the rest of the old sessions go, and their records with them.
		done, err = p.Prune(ctx, dec, true)
		require.NoError(t, err)
		require.Equal(t, PruneReport{Before: dec, Sessions: 2, Turns: 2, Messages: 4, TopologyMarks: 2, WithAudit: 2,
			Approvals: 1, ConfigJobs: 1, DeviceCommands: 2, Exercises: 1, Busy: 1, AuditIncluded: true}, done)
		require.False(t, l.exists(t, "approved"))
		require.False(t, l.exists(t, "exercise"))
		require.True(t, l.exists(t, "running"))
		require.True(t, l.exists(t, "recent"))
		require.Equal(t, map[string]int64{"sessions": 2, "turns": 2, "messages": 4, "marks": 2, "approvals": 1, "jobs": 0,
			"commands": 3, "exercises": 0}, l.rows(t), "the recent and running sessions' records stay, and the plain session's device audit")
		msgs, err := l.repo.History(ctx, l.ids["recent"], 100)
		require.NoError(t, err)
		require.Len(t, msgs, 2, "a recent session keeps its history")

		// Nothing left to do is no error.
		done, err = p.Prune(ctx, dec, false)
		require.NoError(t, err)
		require.Zero(t, done.Sessions)
	})
}
