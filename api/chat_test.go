package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// heldTurns plays the workflow engine: a started turn stays running until the test releases it,
// which then ends its stream with done.
type heldTurns struct {
	events relay.Log
	mu     sync.Mutex
	inputs []workflows.ChatTurnInput
	start  chan workflows.ChatTurnInput
	ended  map[string]bool // workflow ids whose workflow has ended behind its row's back
}

func (h *heldTurns) StartTurn(_ context.Context, _ string, in workflows.ChatTurnInput, _ durable.TurnDescription) error {
	h.mu.Lock()
	h.inputs = append(h.inputs, in)
	h.mu.Unlock()
	if h.start != nil {
		h.start <- in
	}
	return nil
}

func (h *heldTurns) CancelTurn(context.Context, string) error { return nil }

// TurnEnded: a held turn runs until the test finishes it, which also closes its row, or until
// the test says its workflow ended.
func (h *heldTurns) TurnEnded(_ context.Context, workflowID string) (bool, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ended[workflowID], true, nil
}

func (h *heldTurns) finish(t *testing.T, repo *models.ChatRepository, in workflows.ChatTurnInput) {
	t.Helper()
	if _, err := repo.FinalizeTurn(context.Background(), models.FinalizeParams{TurnID: in.TurnID, Status: domain.TurnCompleted}); err != nil {
		t.Fatal(err)
	}
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, SessionID: in.SessionID, TurnID: in.TurnID, Status: domain.TurnCompleted})
	if _, _, err := h.events.AppendTerminal(context.Background(), in.TurnID, relay.TypeDone, done, time.Minute); err != nil {
		t.Fatal(err)
	}
}

type memCredentials struct{}

func (memCredentials) Put(context.Context, string, string, time.Duration) error { return nil }
func (memCredentials) Delete(context.Context, string) error                     { return nil }

type fixedLLM struct{}

func (fixedLLM) Choose(context.Context, string, *gns3.Client) (llmconfig.Settings, error) {
	return llmconfig.Settings{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, nil
}

type chatEnv struct {
	t         *testing.T
	repo      *models.ChatRepository
	turns     *heldTurns
	srv       *httptest.Server
	alice     string
	lab, lab2 string
}

func newChatEnv(t *testing.T, tweaks ...func(*Deps)) *chatEnv {
	t.Helper()
	db := testdb.SQLiteWith(t, models.Open)
	if err := models.Migrate(db); err != nil {
		t.Fatal(err)
	}
	fake := fakegns3.New(t)
	e := &chatEnv{t: t, repo: models.NewChatRepository(db)}
	e.alice = fake.AddUser("alice", "tok-alice", false)
	fake.AddUser("bob", "tok-bob", false)
	e.lab = fake.AddProject("lab", fakegns3.Members("alice", "bob"))
	e.lab2 = fake.AddProject("lab2", fakegns3.Members("alice"))
	events := relay.NewMemory(relay.MemoryOptions{})
	e.turns = &heldTurns{events: events, start: make(chan workflows.ChatTurnInput, 8)}
	deps := Deps{Repo: e.repo, GNS3: gns3At(fake.URL), Events: events, Turns: e.turns,
		Credentials: memCredentials{}, LLM: fixedLLM{}}
	for _, tweak := range tweaks {
		tweak(&deps)
	}
	e.srv = startTestServer(t, deps)
	return e
}

// post sends a chat message; for a 200 it returns the open stream's reader.
func (e *chatEnv) post(token, project string, body map[string]any) (*http.Response, *bufio.Reader) {
	e.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v3/projects/"+project+"/chat/stream", strings.NewReader(string(raw)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

func errorMessage(t *testing.T, resp *http.Response) string {
	t.Helper()
	var body struct{ Message string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("error body is not {message}: %v", err)
	}
	return body.Message
}

// dataLines reads a stream to its end and returns the types of its data lines.
func dataLines(t *testing.T, rd io.Reader) []map[string]any {
	t.Helper()
	s := ssetest.NewStream(rd)
	defer s.Close()
	var out []map[string]any
	for _, f := range s.All(t) {
		if f.Data != "" {
			out = append(out, f.JSON(t))
		}
	}
	return out
}

func TestPostStreamCreatesSessionUnderClientChosenID(t *testing.T) {
	e := newChatEnv(t)
	id := uuid.NewString()
	resp, rd := e.post("tok-alice", e.lab, map[string]any{"message": "hi", "session_id": id, "stream": true})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, errorMessage(t, resp))
	}
	in := <-e.turns.start
	if in.SessionID != id {
		t.Fatalf("turn started in session %s, want the client's %s", in.SessionID, id)
	}
	e.turns.finish(t, e.repo, in)
	frames := dataLines(t, rd)
	if len(frames) == 0 || frames[0]["type"] != "turn_started" || frames[0]["session_id"] != id {
		t.Fatalf("first frame %v, want turn_started for session %s", frames, id)
	}
	if frames[len(frames)-1]["type"] != "done" {
		t.Fatalf("last frame %v, want done", frames[len(frames)-1])
	}

	// An upper-case spelling of the same id is the same session.
	resp, rd = e.post("tok-alice", e.lab, map[string]any{"message": "again", "session_id": strings.ToUpper(id)})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second message: status %d: %s", resp.StatusCode, errorMessage(t, resp))
	}
	in = <-e.turns.start
	if in.SessionID != id {
		t.Fatalf("second turn in session %s, want %s", in.SessionID, id)
	}
	e.turns.finish(t, e.repo, in)
	dataLines(t, rd)
	list, err := e.repo.ListSessions(context.Background(), e.alice, e.lab, 10)
	if err != nil || len(list) != 1 || list[0].ThreadID != id {
		t.Fatalf("sessions %v (err %v), want exactly the one with id %s", list, err, id)
	}
}

func TestPostStreamForeignSessionIDIsNotFoundAndCreatesNothing(t *testing.T) {
	e := newChatEnv(t)
	id := uuid.NewString()
	resp, rd := e.post("tok-alice", e.lab, map[string]any{"message": "mine", "session_id": id})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	in := <-e.turns.start
	e.turns.finish(t, e.repo, in)
	dataLines(t, rd)

	for name, c := range map[string]struct{ token, project string }{
		"another user":    {"tok-bob", e.lab},
		"another project": {"tok-alice", e.lab2},
	} {
		resp, _ := e.post(c.token, c.project, map[string]any{"message": "theirs", "session_id": id})
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: status %d, want 404", name, resp.StatusCode)
		}
		if msg := errorMessage(t, resp); !strings.Contains(msg, "not found") {
			t.Fatalf("%s: message %q", name, msg)
		}
	}
	var sessions, turns int64
	e.repo.DB.Model(&models.ChatSession{}).Count(&sessions)
	e.repo.DB.Model(&models.ChatTurn{}).Count(&turns)
	if sessions != 1 || turns != 1 {
		t.Fatalf("%d sessions and %d turns after the refused messages, want 1 and 1", sessions, turns)
	}
	if len(e.turns.inputs) != 1 {
		t.Fatalf("%d turns were started, want 1", len(e.turns.inputs))
	}
}

func TestPostStreamSecondFirstMessageWithSameNewIDConflicts(t *testing.T) {
	e := newChatEnv(t)
	id := uuid.NewString()
	resp, rd := e.post("tok-alice", e.lab, map[string]any{"message": "first", "session_id": id})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	in := <-e.turns.start
	// The first turn still runs when the same new id comes again.
	resp2, _ := e.post("tok-alice", e.lab, map[string]any{"message": "second", "session_id": id})
	if resp2.StatusCode != http.StatusConflict {
		t.Fatalf("status %d, want 409", resp2.StatusCode)
	}
	errorMessage(t, resp2)
	e.turns.finish(t, e.repo, in)
	dataLines(t, rd)
}

func TestPostStreamRefusesSessionIDThatIsNoUUID(t *testing.T) {
	e := newChatEnv(t)
	for _, bad := range []string{"abc", uuid.Nil.String(), "123e4567-e89b-12d3-a456-42661417400"} {
		resp, _ := e.post("tok-alice", e.lab, map[string]any{"message": "x", "session_id": bad})
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%q: status %d, want 422", bad, resp.StatusCode)
		}
		if msg := errorMessage(t, resp); !strings.Contains(msg, "session_id") {
			t.Fatalf("%q: message %q does not name session_id", bad, msg)
		}
	}
	var n int64
	e.repo.DB.Model(&models.ChatSession{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d sessions created by refused messages", n)
	}
}
