package models

import (
	"context"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// A typed exercise request and its answer are a finished turn of their own: committed at once,
// numbered after every turn so far (a running one included), counted in the session, and not
// private, so the student reads them and a later turn's model does too.
func TestRecordExchangeJoinsTheTranscript(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		wf := func(s, t string) string { return s + t }
		sess, running, _, err := repo.StartTurn(ctx, StartTurnParams{UserID: "u1", ProjectID: "p1",
			Message: "inject", Mode: "troubleshooting_injection", WorkflowID: wf})
		if err != nil {
			t.Fatal(err)
		}
		p := ExchangeParams{SessionID: sess.ThreadID, UserID: "u1", ProjectID: "p1", ExerciseID: "exercise-1",
			Request: "check", Answer: "Not yet.", Metadata: `{"exercise_request":"check"}`}
		answer, err := repo.RecordExchange(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if answer.Role != "assistant" || answer.Content != "Not yet." || answer.TurnSeq != 2 || !answer.Committed {
			t.Fatalf("answer %+v", answer)
		}
		p.Request, p.Answer = "hint", "Hint: look closer."
		if _, err := repo.RecordExchange(ctx, p); err != nil {
			t.Fatal(err)
		}
		// The running turn still runs; its staged message joins the history when it ends.
		if got := roles(t, repo, sess.ThreadID); got != "user:check|assistant:Not yet.|user:hint|assistant:Hint: look closer." {
			t.Fatalf("history while a turn runs: %s", got)
		}
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: running.ID, Status: domain.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
		if s, err := repo.GetSession(ctx, "u1", "p1", sess.ThreadID); err != nil || SessionMode(s) != "troubleshooting_injection" {
			t.Fatalf("the exchange changed the session's mode: %+v %v", s, err)
		}
		// Nor does the migration that records the mode of older sessions take it for one.
		if err := repo.DB.Model(&ChatSession{}).Where("thread_id = ?", sess.ThreadID).UpdateColumn("metadata", "{}").Error; err != nil {
			t.Fatal(err)
		}
		if err := Migrate(repo.DB); err != nil {
			t.Fatal(err)
		}
		if s, err := repo.GetSession(ctx, "u1", "p1", sess.ThreadID); err != nil || SessionMode(s) != "troubleshooting_injection" {
			t.Fatalf("backfilled from the exchange: %+v %v", s, err)
		}
		_, next, _, err := repo.StartTurn(ctx, StartTurnParams{SessionID: sess.ThreadID, UserID: "u1", ProjectID: "p1",
			Message: "thanks", Mode: "teaching_assistant", WorkflowID: wf})
		if err != nil || next.Seq != 4 {
			t.Fatalf("the next turn: %+v %v, want number 4", next, err)
		}
		msgs, priv, err := repo.Transcript(ctx, next, func(mode string) bool { return mode == "troubleshooting_injection" })
		if err != nil || len(msgs) != 6 || len(priv) != 1 || !priv[running.ID] {
			t.Fatalf("the next turn's transcript: %d messages, private %v, %v", len(msgs), priv, err)
		}
		got, err := repo.GetSession(ctx, "u1", "p1", sess.ThreadID)
		if err != nil || got.MessageCount != 5 || got.LastMessageAt == nil {
			t.Fatalf("session %+v %v, want 5 messages counted", got, err)
		}
	})
}

func roles(t *testing.T, repo *ChatRepository, session string) string {
	t.Helper()
	msgs, err := repo.History(context.Background(), session, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content)
	}
	return strings.Join(out, "|")
}
