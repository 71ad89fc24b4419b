package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// scriptedExercise answers checks "Not yet" and hints with the next of its hints, as the
// Exercise workflow does, and counts what it was asked.
type scriptedExercise struct {
	mu     sync.Mutex
	asked  []string
	over   bool
	checks int
	hints  int
}

func (x *scriptedExercise) AskExercise(_ context.Context, _ string, update string, _ workflows.ExerciseRequest) (workflows.ExerciseAnswer, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.asked = append(x.asked, update)
	if x.over {
		return workflows.ExerciseAnswer{}, durable.ErrExerciseOver
	}
	if update == workflows.ExerciseHintUpdate {
		x.hints++
		return workflows.ExerciseAnswer{Status: domain.ExerciseOpen, Checks: x.checks, HintsUsed: x.hints,
			Hint: "Look at the PCs' addresses.", Message: "Type check when you think it is fixed."}, nil
	}
	x.checks++
	return workflows.ExerciseAnswer{Status: domain.ExerciseOpen, Checks: x.checks, HintsUsed: x.hints,
		Message: "Not yet: PC1 does not show what it should."}, nil
}

type historyJSON struct {
	Messages []struct {
		ID        string          `json:"id"`
		Role      string          `json:"role"`
		Content   string          `json:"content"`
		CreatedAt string          `json:"created_at"`
		Metadata  json.RawMessage `json:"metadata"`
	} `json:"messages"`
}

// A "check" or "hint" typed in an exercise's session is answered as content (what a client that
// knows only the seed's events shows), then exercise_checked, then done; the request and the
// answer are in the history afterwards, in order, and in the session's count.
func TestTypedExerciseRequestStreamsContentAndJoinsTheHistory(t *testing.T) {
	ex := &scriptedExercise{}
	var repo models.ExerciseRepository
	e := newChatEnv(t, func(d *Deps) {
		repo = models.ExerciseRepository{DB: d.Repo.DB}
		d.Exercises = &Exercises{Repo: repo, Control: ex}
	})
	ctx := context.Background()
	sid := uuid.NewString()
	resp, rd := e.post("tok-alice", e.lab, map[string]any{"message": "Inject a fault", "session_id": sid})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, errorMessage(t, resp))
	}
	in := <-e.turns.start
	e.turns.finish(t, e.repo, in)
	dataLines(t, rd)
	if _, err := repo.RecordFault(ctx, &models.Exercise{ID: models.ExerciseID(sid, 1), SessionID: sid, TurnID: in.TurnID, Seq: 1,
		ProjectID: e.lab, UserID: e.alice, ExpiresAt: time.Now().Add(time.Hour)},
		&models.InjectedFault{ToolCallID: "c1", NodeID: uuid.NewString(), Device: "PC1", Lines: `["ip 10.0.0.99/24"]`,
			Description: "wrong address", VerifyCommand: "show ip", VerifyExpect: "10.0.0.1/24", Hints: `["Look."]`}); err != nil {
		t.Fatal(err)
	}

	for _, typed := range []struct{ message, want string }{
		{" Check! ", "Not yet: PC1 does not show what it should."},
		{"hint", "Hint: Look at the PCs' addresses.\n\nType check when you think it is fixed."},
	} {
		resp, rd := e.post("tok-alice", e.lab, map[string]any{"message": typed.message, "session_id": sid, "stream": true})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: status %d: %s", typed.message, resp.StatusCode, errorMessage(t, resp))
		}
		frames := dataLines(t, rd)
		var types []string
		for _, f := range frames {
			types = append(types, f["type"].(string))
		}
		if strings.Join(types, ",") != "content,exercise_checked,done" {
			t.Fatalf("%q: frames %v, want content, exercise_checked, done", typed.message, types)
		}
		if frames[0]["content"] != typed.want || frames[0]["session_id"] != sid || frames[0]["message_id"] == "" {
			t.Fatalf("%q: content frame %v, want %q", typed.message, frames[0], typed.want)
		}
		if frames[1]["content"] != typed.want {
			t.Fatalf("%q: exercise_checked says %v, content %q", typed.message, frames[1]["content"], typed.want)
		}
	}
	select {
	case in := <-e.turns.start:
		t.Fatalf("a typed request started a turn of the model: %+v", in)
	default:
	}

	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v3/projects/"+e.lab+"/chat/sessions/"+sid+"/history", nil)
	req.Header.Set("Authorization", "Bearer tok-alice")
	hresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer hresp.Body.Close()
	var h historyJSON
	if err := json.NewDecoder(hresp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range h.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: Inject a fault", "user:  Check! ", "assistant: Not yet: PC1 does not show what it should.",
		"user: hint", "assistant: Hint: Look at the PCs' addresses.\n\nType check when you think it is fixed."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history %q, want %q", got, want)
	}
	var meta map[string]any
	if err := json.Unmarshal(h.Messages[4].Metadata, &meta); err != nil || meta["exercise_request"] != workflows.ExerciseHintUpdate {
		t.Fatalf("the answer's metadata %s (%v) does not say what it answers", h.Messages[4].Metadata, err)
	}
	sess, err := e.repo.GetSession(ctx, e.alice, e.lab, sid)
	if err != nil || sess.MessageCount != 5 {
		t.Fatalf("session %+v (%v), want 5 messages counted", sess, err)
	}

	// A request the exercise no longer takes is refused as before, and nothing joins the history.
	ex.mu.Lock()
	ex.over = true
	ex.mu.Unlock()
	resp, _ = e.post("tok-alice", e.lab, map[string]any{"message": "check", "session_id": sid})
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("check on an exercise that is over: status %d, want 409", resp.StatusCode)
	}
	if msgs, err := e.repo.History(ctx, sid, 100); err != nil || len(msgs) != 5 {
		t.Fatalf("history after a refused check: %d messages (%v), want 5", len(msgs), err)
	}
}
