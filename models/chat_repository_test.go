package models

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

func turnParams(sessionID, user, project string) StartTurnParams {
	return StartTurnParams{SessionID: sessionID, UserID: user, ProjectID: project, Message: "hello",
		Mode: "teaching_assistant", InitialTitle: "hello", WorkflowID: func(s, t string) string { return s + "/" + t }}
}

func countSessions(t *testing.T, repo *ChatRepository, threadID string) int64 {
	t.Helper()
	var n int64
	if err := repo.DB.Model(&ChatSession{}).Where("thread_id = ?", threadID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStartTurnCreatesSessionUnderClientChosenID(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		user, project, id := uuid.NewString(), uuid.NewString(), uuid.NewString()
		sess, turn, created, err := repo.StartTurn(ctx, turnParams(id, user, project))
		if err != nil {
			t.Fatal(err)
		}
		if !created || sess.ThreadID != id || turn.SessionID != id {
			t.Fatalf("created=%v thread=%s turn.session=%s, want a new session %s", created, sess.ThreadID, turn.SessionID, id)
		}
		if sess.UserID != user || sess.ProjectID != project {
			t.Fatalf("session owned by %s/%s, want %s/%s", sess.UserID, sess.ProjectID, user, project)
		}

		// The next message after the turn ended continues the same session.
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
		again, turn2, created2, err := repo.StartTurn(ctx, turnParams(id, user, project))
		if err != nil {
			t.Fatal(err)
		}
		if created2 || again.ID != sess.ID || turn2.Seq != 2 {
			t.Fatalf("second message: created=%v row %d (want %d) seq %d", created2, again.ID, sess.ID, turn2.Seq)
		}
	})
}

func TestStartTurnRefusesAnotherOwnersSessionID(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		alice, bob, lab, other := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
		id := uuid.NewString()
		if _, _, _, err := repo.StartTurn(ctx, turnParams(id, alice, lab)); err != nil {
			t.Fatal(err)
		}
		for name, p := range map[string]StartTurnParams{
			"another user":    turnParams(id, bob, lab),
			"another project": turnParams(id, alice, other),
		} {
			_, _, _, err := repo.StartTurn(ctx, p)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: err = %v, want ErrNotFound", name, err)
			}
		}
		if n := countSessions(t, repo, id); n != 1 {
			t.Fatalf("%d sessions with id %s, want 1", n, id)
		}
		var turns int64
		repo.DB.Model(&ChatTurn{}).Where("session_id = ?", id).Count(&turns)
		if turns != 1 {
			t.Fatalf("%d turns in the session, want only alice's 1", turns)
		}
	})
}

func TestStartTurnRacingFirstMessagesMakeOneSession(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		user, project := uuid.NewString(), uuid.NewString()
		for round := 0; round < 5; round++ {
			id := uuid.NewString()
			const racers = 4
			errs := make([]error, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, _, _, errs[i] = repo.StartTurn(ctx, turnParams(id, user, project))
				}()
			}
			close(start)
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case errors.Is(err, ErrTurnRunning):
				default:
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d racers started a turn, want exactly 1 (errors %v)", round, won, errs)
			}
			if n := countSessions(t, repo, id); n != 1 {
				t.Fatalf("round %d: %d sessions, want 1", round, n)
			}
		}
	})
}

func historyMeta(t *testing.T, repo *ChatRepository, sessionID string) []map[string]any {
	t.Helper()
	msgs, err := repo.History(context.Background(), sessionID, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		out[i] = map[string]any{"role": m.Role}
		if m.Metadata != "" {
			var meta map[string]any
			if err := json.Unmarshal([]byte(m.Metadata), &meta); err != nil {
				t.Fatalf("message %d metadata %q: %v", i, m.Metadata, err)
			}
			for k, v := range meta {
				out[i][k] = v
			}
		}
	}
	return out
}

func TestFinalizeTurnPutsErrorOnLastAssistantMessage(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		user, project := uuid.NewString(), uuid.NewString()

		// A turn that failed after the model called a tool and then wrote part of an answer.
		sess, turn, _, err := repo.StartTurn(ctx, turnParams("", user, project))
		if err != nil {
			t.Fatal(err)
		}
		save := func(m ChatMessage) {
			m.ID, m.SessionID, m.TurnID, m.TurnSeq = MessageID(turn.ID, m.Idx), sess.ThreadID, turn.ID, turn.Seq
			if err := repo.SaveMessage(ctx, &m); err != nil {
				t.Fatal(err)
			}
		}
		save(ChatMessage{Idx: 1, Role: "assistant", ToolCalls: `[{"id":"c1","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"}}]`, Metadata: `{"model":"m"}`})
		save(ChatMessage{Idx: 2, Role: "tool", Name: "get_gns3_topology", ToolCallID: "c1", Content: `{"success":true}`})
		save(ChatMessage{Idx: 3, Role: "assistant", Content: "Your lab", Metadata: `{"model":"m","incomplete":true}`})
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnFailed, Error: "the LLM provider refused the request"}); err != nil {
			t.Fatal(err)
		}
		h := historyMeta(t, repo, sess.ThreadID)
		if len(h) != 4 {
			t.Fatalf("history %v, want 4 messages", h)
		}
		if h[3]["error"] != "the LLM provider refused the request" || h[3]["status"] != domain.TurnFailed || h[3]["model"] != "m" {
			t.Fatalf("last assistant metadata %v, want the error kept with the other fields", h[3])
		}
		if _, ok := h[1]["error"]; ok {
			t.Fatalf("an earlier assistant message got the error too: %v", h[1])
		}

		// A turn cancelled before the model said anything gets an empty message that carries it.
		_, turn2, _, err := repo.StartTurn(ctx, turnParams(sess.ThreadID, user, project))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn2.ID, Status: domain.TurnCancelled}); err != nil {
			t.Fatal(err)
		}
		h = historyMeta(t, repo, sess.ThreadID)
		if len(h) != 6 || h[5]["role"] != "assistant" || h[5]["error"] != TurnErrorText(domain.TurnCancelled, "") {
			t.Fatalf("history %v, want the cancelled turn's own assistant message with metadata.error", h)
		}
		got, _ := repo.GetSession(ctx, user, project, sess.ThreadID)
		if got.MessageCount != 6 {
			t.Fatalf("message_count %d, want 6", got.MessageCount)
		}

		// A completed turn carries no error.
		_, turn3, _, err := repo.StartTurn(ctx, turnParams(sess.ThreadID, user, project))
		if err != nil {
			t.Fatal(err)
		}
		save2 := ChatMessage{ID: MessageID(turn3.ID, 1), SessionID: sess.ThreadID, TurnID: turn3.ID, TurnSeq: turn3.Seq, Idx: 1, Role: "assistant", Content: "ok", Metadata: `{}`}
		if err := repo.SaveMessage(ctx, &save2); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn3.ID, Status: domain.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
		h = historyMeta(t, repo, sess.ThreadID)
		if _, ok := h[len(h)-1]["error"]; ok {
			t.Fatalf("a completed turn's message carries an error: %v", h[len(h)-1])
		}
	})
}

// A session made by its first message records the mode in its metadata (sessions are listed
// by mode) and starts at turn 1.
func TestStartTurnNewSessionStoresModeAndFirstSeq(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		p := turnParams("", uuid.NewString(), uuid.NewString())
		p.Mode = "lab_automation_assistant"
		sess, turn, created, err := repo.StartTurn(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var stored ChatSession
		if err := repo.DB.Where("thread_id = ?", sess.ThreadID).Take(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if !created || turn.Seq != 1 || SessionMode(&stored) != p.Mode {
			t.Fatalf("created=%v seq=%d stored mode %q, want a new session, turn 1, mode %q", created, turn.Seq, SessionMode(&stored), p.Mode)
		}
	})
}

// A turn row left behind for a session id that has no session (data no path of ours writes)
// still keeps a new session under that id from getting a second running turn: the message is
// refused and nothing is created.
func TestStartTurnNewSessionOverOrphanTurnCreatesNothing(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		user, project, id := uuid.NewString(), uuid.NewString(), uuid.NewString()
		orphan := ChatTurn{ID: uuid.NewString(), SessionID: id, Seq: 1, UserID: user, ProjectID: project,
			Status: domain.TurnRunning, Mode: "teaching_assistant", WorkflowID: "orphan"}
		if err := repo.DB.Create(&orphan).Error; err != nil {
			t.Fatal(err)
		}
		_, _, _, err := repo.StartTurn(ctx, turnParams(id, user, project))
		if !errors.Is(err, ErrTurnRunning) {
			t.Fatalf("StartTurn over an orphan running turn: %v, want ErrTurnRunning", err)
		}
		if n := countSessions(t, repo, id); n != 0 {
			t.Fatalf("%d sessions created, want none", n)
		}
	})
}

// The finalizer names a new session in the same step as the turn's end, never over a name the
// user chose, and says whether it did; TitleWanted asks for a title only before the session's
// first completed turn.
func TestFinishTurnNamesTheSessionUnlessTheUserDid(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		user, project := uuid.NewString(), uuid.NewString()
		sess, turn, _, err := repo.StartTurn(ctx, turnParams("", user, project))
		if err != nil {
			t.Fatal(err)
		}
		if wanted, err := repo.TitleWanted(ctx, sess.ThreadID); err != nil || !wanted {
			t.Fatalf("a new session: title wanted %v, %v", wanted, err)
		}
		fin, err := repo.FinishTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, LLMCalls: 2, InputTokens: 30, OutputTokens: 7,
			ReasoningTokens: 5, CachedTokens: 24, Title: "Lab overview"})
		if err != nil || !fin.Applied || !fin.Titled {
			t.Fatalf("finish: %+v, %v", fin, err)
		}
		if fin.Turn.Status != domain.TurnCompleted || fin.Turn.FinishedAt == nil || fin.Turn.CreatedAt.IsZero() {
			t.Fatalf("the finished turn: %+v", fin.Turn)
		}
		got, err := repo.GetSession(ctx, user, project, sess.ThreadID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "Lab overview" || got.LLMCallsCount != 2 || got.TotalTokens != 37 || got.MessageCount != 1 || got.CachedTokens != 24 {
			t.Fatalf("session after the first turn: title %q, %d calls, %d tokens (%d cached), %d messages", got.Title, got.LLMCallsCount,
				got.TotalTokens, got.CachedTokens, got.MessageCount)
		}
		if got.OutputTokens != 7 || got.ReasoningTokens != 5 {
			t.Fatalf("the reasoning tokens are a part of the output tokens: %d output, %d reasoning", got.OutputTokens, got.ReasoningTokens)
		}
		if wanted, err := repo.TitleWanted(ctx, sess.ThreadID); err != nil || wanted {
			t.Fatalf("after a completed turn: title wanted %v, %v", wanted, err)
		}
		// A retried finalizer changes nothing, the title included.
		if again, err := repo.FinishTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, Title: "Something else"}); err != nil || again.Applied || again.Titled {
			t.Fatalf("retry: %+v, %v", again, err)
		}

		// A session the user named while its first turn ran keeps the name.
		sess2, turn2, _, err := repo.StartTurn(ctx, turnParams("", user, project))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.RenameSession(ctx, user, project, sess2.ThreadID, "Mine"); err != nil {
			t.Fatal(err)
		}
		if wanted, err := repo.TitleWanted(ctx, sess2.ThreadID); err != nil || wanted {
			t.Fatalf("a named session: title wanted %v, %v", wanted, err)
		}
		fin, err = repo.FinishTurn(ctx, FinalizeParams{TurnID: turn2.ID, Status: domain.TurnCompleted, Title: "Lab overview"})
		if err != nil || !fin.Applied || fin.Titled {
			t.Fatalf("finish of the named session: %+v, %v", fin, err)
		}
		if got, err := repo.GetSession(ctx, user, project, sess2.ThreadID); err != nil || got.Title != "Mine" {
			t.Fatalf("named session's title: %v, %v", got, err)
		}
		if wanted, err := repo.TitleWanted(ctx, uuid.NewString()); err != nil || wanted {
			t.Fatalf("no such session: title wanted %v, %v", wanted, err)
		}
	})
}

// An assistant message's reasoning and the state its provider needs back are stored with it,
// read back with the transcript on the turn's later calls and on later turns, and replaced
// whole when the model call is retried.
func TestReasoningIsStoredWithItsMessage(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		sess, turn, _, err := repo.StartTurn(ctx, turnParams("", uuid.NewString(), uuid.NewString()))
		if err != nil {
			t.Fatal(err)
		}
		msg := ChatMessage{ID: MessageID(turn.ID, 1), SessionID: sess.ThreadID, TurnID: turn.ID, TurnSeq: turn.Seq, Idx: 1, Role: "assistant",
			ToolCalls: `[{"id":"c1","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"}}]`,
			Reasoning: "first attempt", ReasoningState: `{"attempt":1}`}
		if err := repo.SaveMessage(ctx, &msg); err != nil {
			t.Fatal(err)
		}
		msg.Reasoning, msg.ReasoningState = "The user wants the topology.", `{"source":{"provider":"deepseek","model":"deepseek-v4-pro"}}`
		if err := repo.SaveMessage(ctx, &msg); err != nil {
			t.Fatal(err)
		}
		staged, _, err := repo.Transcript(ctx, turn, func(string) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		require.Len(t, staged, 2)
		require.Equal(t, "The user wants the topology.", staged[1].Reasoning, "the retried call's reasoning replaced the first")
		require.Equal(t, msg.ReasoningState, staged[1].ReasoningState)
		require.Empty(t, staged[1].Content, "reasoning is never the content")

		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
		_, next, _, err := repo.StartTurn(ctx, turnParams(sess.ThreadID, sess.UserID, sess.ProjectID))
		if err != nil {
			t.Fatal(err)
		}
		later, _, err := repo.Transcript(ctx, next, func(string) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		require.Equal(t, msg.ReasoningState, later[1].ReasoningState, "a later turn reads it from the committed transcript")
		require.Equal(t, "", later[0].Reasoning)
	})
}

// A model-context message is read with the transcript, before the assistant message of its
// slot, on the turn's later calls and on later turns; people never see it: not in the history,
// not in the session's message count. A retried call can take it back.
func TestModelContextIsForTheModelOnly(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		sess, turn, _, err := repo.StartTurn(ctx, turnParams("", uuid.NewString(), uuid.NewString()))
		require.NoError(t, err)
		lab := ChatMessage{ID: ContextMessageID(turn.ID, 1), SessionID: sess.ThreadID, TurnID: turn.ID, TurnSeq: turn.Seq, Idx: 1, Sub: -1,
			Role: "user", Content: "<lab>PC1</lab>", Metadata: `{"restate":"<lab>PC1</lab>"}`, ModelContext: true}
		answer := ChatMessage{ID: MessageID(turn.ID, 1), SessionID: sess.ThreadID, TurnID: turn.ID, TurnSeq: turn.Seq, Idx: 1,
			Role: "assistant", Content: "One PC."}
		// The answer is written after the note, but the order is the slot's, not the write's.
		require.NoError(t, repo.SaveMessage(ctx, &answer))
		require.NoError(t, repo.SaveMessage(ctx, &lab))
		staged, _, err := repo.Transcript(ctx, turn, func(string) bool { return false })
		require.NoError(t, err)
		require.Len(t, staged, 3)
		require.True(t, staged[1].ModelContext)
		require.Equal(t, "<lab>PC1</lab>", staged[1].Content)
		require.Equal(t, "assistant", staged[2].Role)

		_, err = repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted})
		require.NoError(t, err)
		s, err := repo.GetSession(ctx, sess.UserID, sess.ProjectID, sess.ThreadID)
		require.NoError(t, err)
		require.EqualValues(t, 2, s.MessageCount, "the question and the answer")
		hist, total, err := repo.HistoryPage(ctx, sess.ThreadID, 50, 0)
		require.NoError(t, err)
		require.EqualValues(t, 2, total)
		for _, m := range hist {
			require.False(t, m.ModelContext, "the history shows what people read")
		}

		_, next, _, err := repo.StartTurn(ctx, turnParams(sess.ThreadID, sess.UserID, sess.ProjectID))
		require.NoError(t, err)
		later, _, err := repo.Transcript(ctx, next, func(string) bool { return false })
		require.NoError(t, err)
		require.Len(t, later, 4)
		require.True(t, later[1].ModelContext, "a later turn's model reads it where the first did")

		stale := ChatMessage{ID: ContextMessageID(next.ID, 1), SessionID: sess.ThreadID, TurnID: next.ID, TurnSeq: next.Seq, Idx: 1, Sub: -1,
			Role: "user", Content: "<lab_update>PC2 added</lab_update>", ModelContext: true}
		require.NoError(t, repo.SaveMessage(ctx, &stale))
		require.NoError(t, repo.DeleteMessage(ctx, stale.ID))
		require.NoError(t, repo.DeleteMessage(ctx, stale.ID), "deleting what is not there is no error")
		later, _, err = repo.Transcript(ctx, next, func(string) bool { return false })
		require.NoError(t, err)
		require.Len(t, later, 4)
	})
}
