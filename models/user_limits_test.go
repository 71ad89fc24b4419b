package models

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

func startParams(user string, max int) StartTurnParams {
	return StartTurnParams{UserID: user, ProjectID: "p1", Message: "hi", Mode: "teaching_assistant", InitialTitle: "hi",
		WorkflowID: func(s, t string) string { return s + "/" + t }, MaxRunningPerUser: max}
}

// Ten turns in ten sessions started at once against a limit of four: four start, six are
// refused, whatever the interleaving (on PostgreSQL the requests really run in parallel).
func TestRunningTurnsPerUserLimit(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var started []*ChatTurn
		refused := 0
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, turn, _, err := repo.StartTurn(ctx, startParams("alice", 4))
				mu.Lock()
				defer mu.Unlock()
				var limit *LimitError
				switch {
				case err == nil:
					started = append(started, turn)
				case errors.As(err, &limit) && limit.Max == 4:
					refused++
				default:
					t.Errorf("unexpected: %v", err)
				}
			}()
		}
		wg.Wait()
		if len(started) != 4 || refused != 6 {
			t.Fatalf("%d started, %d refused; want 4 and 6", len(started), refused)
		}
		var sessions int64
		repo.DB.Model(&ChatSession{}).Count(&sessions)
		if sessions != 4 {
			t.Fatalf("a refused turn left a session behind: %d sessions", sessions)
		}
		// Another user is not affected, and a finished turn frees a place.
		if _, _, _, err := repo.StartTurn(ctx, startParams("bob", 4)); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: started[0].ID, Status: domain.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := repo.StartTurn(ctx, startParams("alice", 4)); err != nil {
			t.Fatalf("after one finished: %v", err)
		}
		if _, _, _, err := repo.StartTurn(ctx, startParams("alice", 0)); err != nil {
			t.Fatalf("no limit: %v", err)
		}
	})
}

func TestTokenUsagePerUserAndDay(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		day := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
		now := day
		repo.Now = func() time.Time { return now }
		finish := func(user string, in, out int64) *ChatSession {
			sess, turn, _, err := repo.StartTurn(ctx, startParams(user, 0))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, InputTokens: in, OutputTokens: out}); err != nil {
				t.Fatal(err)
			}
			// A retried finalizer counts nothing twice.
			if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, InputTokens: in, OutputTokens: out}); err != nil {
				t.Fatal(err)
			}
			return sess
		}
		first := finish("alice", 100, 20)
		finish("alice", 50, 5)
		finish("bob", 1000, 1000)
		if got, err := repo.TokensUsedOn(ctx, "alice", day); err != nil || got != 175 {
			t.Fatalf("alice used %d (%v), want 175", got, err)
		}
		// Deleting a session gives nothing back.
		if err := repo.DeleteSession(ctx, "alice", "p1", first.ThreadID); err != nil {
			t.Fatal(err)
		}
		if got, _ := repo.TokensUsedOn(ctx, "alice", day); got != 175 {
			t.Fatalf("after deleting a session: %d", got)
		}
		// A new UTC day starts from zero.
		now = day.Add(2 * time.Minute)
		finish("alice", 7, 3)
		if got, _ := repo.TokensUsedOn(ctx, "alice", now); got != 10 {
			t.Fatalf("next day: %d", got)
		}
		if got, _ := repo.TokensUsedOn(ctx, "carol", now); got != 0 {
			t.Fatalf("nobody: %d", got)
		}
	})
}
