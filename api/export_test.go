package api

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// transcriptEnv is the API over a real database holding finished conversations written through
// the repository, as the worker writes them; no turn runs, so no Temporal is needed.
type transcriptEnv struct {
	t       testing.TB
	repo    *models.ChatRepository
	handler http.Handler
	project string
}

func newTranscriptEnv(t testing.TB) *transcriptEnv {
	t.Helper()
	db := testdb.SQLiteWith(t, models.Open)
	if err := models.Migrate(db); err != nil {
		t.Fatal(err)
	}
	fake := fakegns3.New(t)
	fake.AddUser("alice", "tok-alice", false)
	fake.AddUser("bob", "tok-bob", false)
	pid := fake.AddProject("lab", fakegns3.Members("alice", "bob"))
	repo := models.NewChatRepository(db)
	s := newTestServer(Deps{GNS3: gns3At(fake.URL), Repo: repo})
	return &transcriptEnv{t: t, repo: repo, handler: s.Handler(), project: pid}
}

func (e *transcriptEnv) userID(token string) string {
	e.t.Helper()
	code, body := e.get(token, "/v3/access/users/me")
	if code != http.StatusOK {
		e.t.Fatalf("me: %d %s", code, body)
	}
	var u struct {
		UserID string `json:"user_id"`
	}
	_ = json.Unmarshal([]byte(body), &u)
	return u.UserID
}

// conversation writes one finished turn: a question, a tool call with its standard-format
// result, and the answer.
func (e *transcriptEnv) conversation(token, mode, title, question string, result tools.Result) string {
	e.t.Helper()
	ctx := context.Background()
	sess, turn, _, err := e.repo.StartTurn(ctx, models.StartTurnParams{UserID: e.userID(token), ProjectID: e.project,
		Message: question, Mode: mode, InitialTitle: title, WorkflowID: func(s, t string) string { return s + "/" + t }})
	if err != nil {
		e.t.Fatal(err)
	}
	save := func(m models.ChatMessage) {
		m.ID, m.SessionID, m.TurnID, m.TurnSeq = models.MessageID(turn.ID, m.Idx), sess.ThreadID, turn.ID, turn.Seq
		if err := e.repo.SaveMessage(ctx, &m); err != nil {
			e.t.Fatal(err)
		}
	}
	save(models.ChatMessage{Idx: 1, Role: "assistant", Content: "Let me look.", Reasoning: "Both PCs' addresses will tell.",
		ToolCalls: `[{"id":"call_1","type":"function","function":{"name":"execute_multiple_device_commands","arguments":"{\"device_names\":[\"PC1\",\"PC2\"],\"commands\":[\"show ip\"]}"}}]`})
	save(models.ChatMessage{Idx: 2, Role: "tool", Name: "execute_multiple_device_commands", ToolCallID: "call_1", Content: result.JSON()})
	save(models.ChatMessage{Idx: 3, Role: "assistant", Content: "PC1 has **10.0.0.1/24**; PC2 is partly configured."})
	if _, err := e.repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, LLMCalls: 2, InputTokens: 300, OutputTokens: 40, ReasoningTokens: 12}); err != nil {
		e.t.Fatal(err)
	}
	return sess.ThreadID
}

func (e *transcriptEnv) do(token, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, req)
	return w
}

func (e *transcriptEnv) get(token, path string) (int, string) {
	w := e.do(token, path)
	return w.Code, w.Body.String()
}

func deviceResult() tools.Result {
	r := tools.Collect([]tools.Item{
		{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "PC1> show ip\nNAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254"},
		{ID: "n2", Name: "PC2", Status: tools.StatusPartial, Result: "PC2> show ip", Error: `"debug all" was blocked and not sent: debugging is forbidden`},
	})
	r.Metadata = map[string]any{"tool_name": "execute_multiple_device_commands", "version": tools.FormatVersion, "execution_time": 1.25}
	return r
}

func TestExportJSONAndMarkdown(t *testing.T) {
	e := newTranscriptEnv(t)
	id := e.conversation("tok-alice", "teaching_assistant", "Why can't PC2 | reach PC1? (ÉTÉ)", "Why can't PC2 reach PC1?", deviceResult())
	for _, prefix := range []string{"/v3/projects/", "/v3/copilot/projects/"} {
		base := prefix + e.project + "/chat/sessions/" + id

		w := e.do("tok-alice", base+"/export?format=json")
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("%s json: %d %s", prefix, w.Code, w.Body.String())
		}
		disp, params, err := mime.ParseMediaType(w.Header().Get("Content-Disposition"))
		if err != nil || disp != "attachment" || params["filename"] != "why-can-t-pc2-reach-pc1-été.json" {
			t.Errorf("json disposition %q: %v %v", w.Header().Get("Content-Disposition"), params, err)
		}
		var ex sessionExport
		if err := json.Unmarshal(w.Body.Bytes(), &ex); err != nil {
			t.Fatal(err)
		}
		// Same message shape as the history; statistics beside them.
		_, hist := e.get("tok-alice", base+"/history")
		var h struct {
			Messages []openAIMessage `json:"messages"`
		}
		_ = json.Unmarshal([]byte(hist), &h)
		got, _ := json.Marshal(ex.Messages)
		want, _ := json.Marshal(h.Messages)
		if string(got) != string(want) || len(ex.Messages) != 4 {
			t.Errorf("export messages differ from history:\n%s\n%s", got, want)
		}
		if ex.ThreadID != id || ex.Session.MessageCount != 4 || ex.Session.TotalTokens != 340 || ex.LLMCalls != 2 || ex.Format == "" ||
			ex.Session.ReasoningTokens != 12 {
			t.Errorf("export header: %+v", ex)
		}
		// The reasoning is beside the answer it led to, never in it.
		if h.Messages[1].Reasoning != "Both PCs' addresses will tell." || h.Messages[1].Content != "Let me look." || h.Messages[3].Reasoning != "" {
			t.Errorf("history reasoning: %+v", h.Messages)
		}

		w = e.do("tok-alice", base+"/export?format=markdown")
		md := w.Body.String()
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/markdown") ||
			!strings.Contains(w.Header().Get("Content-Disposition"), "attachment") || !strings.Contains(w.Header().Get("Content-Disposition"), ".md") {
			t.Fatalf("markdown: %d %v", w.Code, w.Header())
		}
		for _, want := range []string{
			"# Why can't PC2 | reach PC1? (ÉTÉ)\n",
			"- 4 messages · 2 LLM calls · 340 tokens (300 in, 40 out, of which 12 reasoning)",
			"<details><summary>Thinking</summary>\n\n```text\nBoth PCs' addresses will tell.\n```\n\n</details>\n\nLet me look.",
			"## User · ", "Why can't PC2 reach PC1?",
			"**Tool call** `execute_multiple_device_commands`\n\n```json\n{\n  \"device_names\": [",
			"**Tool result** `execute_multiple_device_commands`: 2 total, 1 successful, 1 failed · 1.2 s",
			"| Item | Status | Result |\n|---|---|---|\n| PC1 | ✓ success | see output below |\n",
			"| PC2 | ! partial_success | \"debug all\" was blocked and not sent: debugging is forbidden |",
			"PC1:\n\n```text\nPC1> show ip\nNAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24",
			"PC1 has **10.0.0.1/24**",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md)
			}
		}
	}
}

func TestExportIsTheOwnersOnlyAndRefusesBadFormats(t *testing.T) {
	e := newTranscriptEnv(t)
	id := e.conversation("tok-alice", "teaching_assistant", "Mine", "hello", deviceResult())
	base := "/v3/projects/" + e.project + "/chat/sessions/"
	if code, body := e.get("tok-bob", base+id+"/export?format=json"); code != http.StatusNotFound || !strings.Contains(body, "not found") {
		t.Errorf("another user's export: %d %s", code, body)
	}
	if code, _ := e.get("tok-alice", base+"00000000-0000-4000-8000-000000000000/export"); code != http.StatusNotFound {
		t.Errorf("unknown session: %d", code)
	}
	if code, body := e.get("tok-alice", base+id+"/export?format=pdf"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "format must be json or markdown") {
		t.Errorf("bad format: %d %s", code, body)
	}
	if code, _ := e.get("", base+id+"/export"); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	// No format means JSON.
	if w := e.do("tok-alice", base+id+"/export"); w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
		t.Errorf("default format: %d", w.Code)
	}
	if exportFileName("  ***  ") != "conversation" || len([]rune(exportFileName(strings.Repeat("ab ", 100)))) > 60 {
		t.Error("file name fallbacks")
	}
}

func TestSessionsFilterByCopilotMode(t *testing.T) {
	e := newTranscriptEnv(t)
	ta := e.conversation("tok-alice", "teaching_assistant", "Teaching", "hi", deviceResult())
	la := e.conversation("tok-alice", "lab_automation_assistant", "Automating", "hi", deviceResult())
	e.conversation("tok-bob", "lab_automation_assistant", "Bob's", "hi", deviceResult())
	list := func(query string) []sessionView {
		t.Helper()
		code, body := e.get("tok-alice", "/v3/copilot/projects/"+e.project+"/chat/sessions"+query)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", query, code, body)
		}
		var out []sessionView
		_ = json.Unmarshal([]byte(body), &out)
		return out
	}
	if got := list(""); len(got) != 2 {
		t.Fatalf("unfiltered: %d sessions", len(got))
	}
	for mode, want := range map[string]string{"teaching_assistant": ta, "lab_automation_assistant": la} {
		got := list("?copilot_mode=" + mode)
		if len(got) != 1 || got[0].ThreadID != want {
			t.Errorf("%s: %+v", mode, got)
			continue
		}
		var md map[string]any
		_ = json.Unmarshal(got[0].Metadata, &md)
		if md["copilot_mode"] != mode {
			t.Errorf("%s: metadata %s", mode, got[0].Metadata)
		}
	}
	code, body := e.get("tok-alice", "/v3/projects/"+e.project+"/chat/sessions?copilot_mode=chaos_monkey")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "copilot_mode must be one of teaching_assistant, lab_automation_assistant") {
		t.Errorf("unknown mode: %d %s", code, body)
	}
}

// A private (injection) turn's reasoning would name the fault: neither the history nor the export
// shows it.
func TestPrivateTurnsShowNoReasoning(t *testing.T) {
	e := newTranscriptEnv(t)
	id := e.conversation("tok-alice", "troubleshooting_injection", "Exercise", "Inject a fault", deviceResult())
	base := "/v3/projects/" + e.project + "/chat/sessions/" + id
	for _, path := range []string{base + "/history", base + "/export?format=json", base + "/export?format=markdown"} {
		code, body := e.get("tok-alice", path)
		if code != http.StatusOK || strings.Contains(body, "Both PCs") || strings.Contains(body, "Thinking") {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}
