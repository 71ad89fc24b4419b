package models

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// addSession writes a session row as it stands after some turns: updated at, pinned or not, in
// mode; it returns its id.
func addSession(t *testing.T, db *gorm.DB, user, project, id string, updated time.Time, pinned bool, mode string) string {
	t.Helper()
	s := ChatSession{ThreadID: id, UserID: user, ProjectID: project, Title: id, Metadata: withMode("{}", mode), Stats: "{}",
		CreatedAt: updated.Add(-time.Hour), UpdatedAt: updated, Pinned: pinned}
	require.NoError(t, db.Create(&s).Error)
	return id
}

func threadIDs(list []ChatSession) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].ThreadID
	}
	return out
}

func TestSessionListPagesPinnedFirstWithTheTotal(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := NewChatRepository(db)
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		at := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
		ta, la := domain.ModeTeachingAssistant, domain.ModeLabAutomation
		// Inserted out of order; "tie-a" and "tie-b" were updated at the same instant, so the
		// newer row (tie-b) comes first.
		addSession(t, db, "u1", "p1", "old", at(1), false, ta)
		addSession(t, db, "u1", "p1", "pinned-old", at(2), true, la)
		addSession(t, db, "u1", "p1", "tie-a", at(5), false, la)
		addSession(t, db, "u1", "p1", "tie-b", at(5), false, ta)
		addSession(t, db, "u1", "p1", "newest", at(9), false, ta)
		addSession(t, db, "u1", "p1", "pinned-new", at(7), true, ta)
		addSession(t, db, "u1", "p1", "middle", at(3), false, la)
		// Another user's and another project's sessions are never counted or listed.
		addSession(t, db, "u2", "p1", "bobs", at(8), true, ta)
		addSession(t, db, "u1", "p2", "elsewhere", at(8), false, ta)
		want := []string{"pinned-new", "pinned-old", "newest", "tie-b", "tie-a", "middle", "old"}

		all, total, err := repo.ListSessionPage(ctx, "u1", "p1", "", 100, 0)
		require.NoError(t, err)
		require.Equal(t, want, threadIDs(all))
		require.EqualValues(t, 7, total)

		// Pages of 3 put together are the whole list, each answer with the same total.
		var paged []string
		for off := 0; off < 9; off += 3 {
			page, total, err := repo.ListSessionPage(ctx, "u1", "p1", "", 3, off)
			require.NoError(t, err)
			require.EqualValues(t, 7, total, "offset %d", off)
			require.LessOrEqual(t, len(page), 3)
			paged = append(paged, threadIDs(page)...)
		}
		require.Equal(t, want, paged)
		// The last partial page, exactly the end, and past it.
		page, _, err := repo.ListSessionPage(ctx, "u1", "p1", "", 3, 6)
		require.NoError(t, err)
		require.Equal(t, []string{"old"}, threadIDs(page))
		for _, off := range []int{7, 500} {
			page, total, err := repo.ListSessionPage(ctx, "u1", "p1", "", 3, off)
			require.NoError(t, err)
			require.Empty(t, page, "offset %d", off)
			require.EqualValues(t, 7, total)
		}

		// The mode filter pages and counts the filtered list.
		byMode, total, err := repo.ListSessionPage(ctx, "u1", "p1", la, 2, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"pinned-old", "tie-a"}, threadIDs(byMode))
		require.EqualValues(t, 3, total)
		byMode, _, err = repo.ListSessionPage(ctx, "u1", "p1", la, 2, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"middle"}, threadIDs(byMode))
		// LIKE's wildcards in a mode are taken literally.
		none, total, err := repo.ListSessionPage(ctx, "u1", "p1", "teaching%", 10, 0)
		require.NoError(t, err)
		require.Empty(t, none)
		require.Zero(t, total)
		none, _, err = repo.ListSessionPage(ctx, "u1", "p1", "teaching_assistan_", 10, 0)
		require.NoError(t, err)
		require.Empty(t, none)
		// Metadata written with a space after the colon still names its mode.
		require.NoError(t, db.Model(&ChatSession{}).Where("thread_id = ?", "old").
			UpdateColumn("metadata", `{"copilot_mode": "lab_automation_assistant", "note": "by hand"}`).Error)
		_, total, err = repo.ListSessionPage(ctx, "u1", "p1", la, 10, 0)
		require.NoError(t, err)
		require.EqualValues(t, 4, total)
	})
}

func TestHistoryPagesBackFromTheNewest(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		sessionID := ""
		var want []string
		// Five finished turns of two messages, then a running one whose staged messages are not
		// history yet.
		for i := 1; i <= 6; i++ {
			sess, turn, _, err := repo.StartTurn(ctx, turnParams(sessionID, "u1", "p1"))
			require.NoError(t, err)
			sessionID = sess.ThreadID
			require.NoError(t, repo.DB.Model(&ChatMessage{}).Where("turn_id = ?", turn.ID).UpdateColumn("content", fmt.Sprintf("q%d", i)).Error)
			require.NoError(t, repo.SaveMessage(ctx, &ChatMessage{ID: MessageID(turn.ID, 1), SessionID: sessionID, TurnID: turn.ID,
				TurnSeq: turn.Seq, Idx: 1, Role: "assistant", Content: fmt.Sprintf("a%d", i)}))
			if i == 6 {
				break
			}
			_, err = repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted})
			require.NoError(t, err)
			want = append(want, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))
		}
		contents := func(msgs []ChatMessage) []string {
			out := make([]string, len(msgs))
			for i, m := range msgs {
				out[i] = m.Content
			}
			return out
		}
		msgs, total, err := repo.HistoryPage(ctx, sessionID, 100, 0)
		require.NoError(t, err)
		require.Equal(t, want, contents(msgs))
		require.EqualValues(t, 10, total)

		// The newest 4, then the 4 before them, then the first 2: each page oldest first.
		msgs, total, err = repo.HistoryPage(ctx, sessionID, 4, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"q4", "a4", "q5", "a5"}, contents(msgs))
		require.EqualValues(t, 10, total)
		msgs, _, err = repo.HistoryPage(ctx, sessionID, 4, 4)
		require.NoError(t, err)
		require.Equal(t, []string{"q2", "a2", "q3", "a3"}, contents(msgs))
		msgs, _, err = repo.HistoryPage(ctx, sessionID, 4, 8)
		require.NoError(t, err)
		require.Equal(t, []string{"q1", "a1"}, contents(msgs))
		msgs, total, err = repo.HistoryPage(ctx, sessionID, 4, 10)
		require.NoError(t, err)
		require.Empty(t, msgs)
		require.EqualValues(t, 10, total)

		msgs, total, err = repo.HistoryPage(ctx, "no-such-session", 4, 0)
		require.NoError(t, err)
		require.Empty(t, msgs)
		require.Zero(t, total)
	})
}

// The session list of one user and project is read from idx_session_list in its order, never
// sorted: at 10,000 sessions a sort is most of the answer's time.
func TestSessionListQueryUsesItsIndex(t *testing.T) {
	db := testDatabases["sqlite"](t)
	require.NoError(t, Migrate(db))
	for _, mode := range []string{"", domain.ModeTeachingAssistant} {
		q := db.ToSQL(func(tx *gorm.DB) *gorm.DB {
			q := tx.Model(&ChatSession{}).Where("user_id = ? AND project_id = ?", "u1", "p1")
			if mode != "" {
				q = modeCondition(q, mode)
			}
			return sessionOrder(q).Limit(100).Offset(200).Find(&[]ChatSession{})
		})
		var plan []struct{ Detail string }
		require.NoError(t, db.Raw("EXPLAIN QUERY PLAN "+q).Scan(&plan).Error)
		var lines []string
		for _, p := range plan {
			lines = append(lines, p.Detail)
		}
		got := strings.Join(lines, "\n")
		require.Contains(t, got, "idx_session_list", "mode %q:\n%s", mode, got)
		require.NotContains(t, got, "TEMP B-TREE", "mode %q:\n%s", mode, got)
	}
}
