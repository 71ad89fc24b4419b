package models

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
)

// Deleting a session deletes its topology mark, and a turn finalized after the delete (the
// delete cancels it, its finalizer still runs) does not bring the mark back.
func TestDeleteSessionDeletesItsTopologyMark(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		marks := TopologyMarks{DB: repo.DB}
		user, project := uuid.NewString(), uuid.NewString()
		sess, _, _, err := repo.StartTurn(ctx, turnParams("", user, project))
		if err != nil {
			t.Fatal(err)
		}
		other, _, _, err := repo.StartTurn(ctx, turnParams("", user, project))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{sess.ThreadID, other.ThreadID} {
			if err := marks.Put(ctx, &TopologyMark{SessionID: id, ProjectID: project, Summary: `{"nodes":{}}`}); err != nil {
				t.Fatal(err)
			}
		}
		// A second Put replaces the first.
		if err := marks.Put(ctx, &TopologyMark{SessionID: sess.ThreadID, ProjectID: project, Summary: `{"nodes":{"a":{}}}`}); err != nil {
			t.Fatal(err)
		}
		if m, err := marks.Get(ctx, sess.ThreadID); err != nil || m.Summary != `{"nodes":{"a":{}}}` {
			t.Fatalf("mark before the delete: %+v, %v", m, err)
		}

		if err := repo.DeleteSession(ctx, user, project, sess.ThreadID); err != nil {
			t.Fatal(err)
		}
		if _, err := marks.Get(ctx, sess.ThreadID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the deleted session's mark is still there (%v)", err)
		}
		if err := marks.Put(ctx, &TopologyMark{SessionID: sess.ThreadID, ProjectID: project, Summary: `{}`}); err != nil {
			t.Fatalf("a late mark for a deleted session must be dropped quietly: %v", err)
		}
		if _, err := marks.Get(ctx, sess.ThreadID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a mark written after the delete came back (%v)", err)
		}
		if _, err := marks.Get(ctx, other.ThreadID); err != nil {
			t.Fatalf("another session's mark went too: %v", err)
		}
		var n int64
		if err := repo.DB.Model(&TopologyMark{}).Count(&n).Error; err != nil || n != 1 {
			t.Fatalf("topology_marks rows: %d (%v), want 1", n, err)
		}
	})
}
