package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

// panel does what the AI chat panel of GNS3's web UI does (src/app/services/ai-chat.service.ts
// and ai-profiles.service.ts of the fork's master-3.0 branch and of GNS3/gns3-web-ui 3.1), and
// nothing more: it is the client we must satisfy, unchanged.
type panel struct {
	t      *testing.T
	base   string // the one origin it talks to
	token  string
	prefix string // "/v3/projects/{id}/chat" (fork) or "/v3/copilot/projects/{id}/chat" (3.1)
}

// panelTurn is what the panel has on screen after a message: text, tool cards keyed by call id,
// and the error it shows.
type panelTurn struct {
	Status    int
	HTTPError string // body.message of a refused request
	SessionID string
	MessageID string
	Text      string
	Calls     map[string]*panelCall
	CallOrder []string
	Error     string
	Done      bool
	Types     []string // every data line's type, in order
	Events    []map[string]any
}

type panelCall struct {
	Name, Arguments string
	Complete        bool
	Started         bool
	Output          any // parsed JSON when possible, else the raw string
}

func (p *panel) request(method, path string, body any) *http.Response {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	require.NoError(p.t, err)
	req.Header.Set("Authorization", "Bearer "+p.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	return resp
}

func (p *panel) json(method, path string, body any, out any) int {
	p.t.Helper()
	resp := p.request(method, path, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		require.NoError(p.t, json.Unmarshal(raw, out), "%s %s: %s", method, path, raw)
	}
	return resp.StatusCode
}

// send is sendMessage: a fetch() POST whose body is read line by line; only "data: " lines
// count, id: and event: lines are ignored, nothing is ever resumed, and an error event closes
// the stream at once.
func (p *panel) send(message, sessionID string) panelTurn {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"message": message, "session_id": sessionID, "stream": true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+p.prefix+"/stream", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	turn := panelTurn{Status: resp.StatusCode, Calls: map[string]*panelCall{}}
	if resp.StatusCode >= 300 {
		var e struct{ Message string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		turn.HTTPError = e.Message
		return turn
	}
	for line := range panelDataLines(resp.Body) {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		typ, _ := ev["type"].(string)
		turn.Types = append(turn.Types, typ)
		turn.Events = append(turn.Events, ev)
		if sid, ok := ev["session_id"].(string); ok && sid != "" {
			turn.SessionID = sid
		}
		switch typ {
		case "content":
			turn.Text += ev["content"].(string)
			if id, ok := ev["message_id"].(string); ok {
				turn.MessageID = id
			}
		case "tool_call":
			tc := ev["tool_call"].(map[string]any)
			id := tc["id"].(string)
			fn := tc["function"].(map[string]any)
			c := turn.Calls[id]
			if c == nil {
				c = &panelCall{}
				turn.Calls[id] = c
				turn.CallOrder = append(turn.CallOrder, id)
			}
			c.Name, _ = fn["name"].(string)
			c.Arguments, _ = fn["arguments"].(string) // the full text so far replaces the old
			if done, _ := fn["complete"].(bool); done {
				c.Complete = true
			}
		case "tool_start":
			if c := turn.Calls[ev["tool_call_id"].(string)]; c != nil {
				c.Started = true
			}
		case "tool_end":
			c := turn.Calls[ev["tool_call_id"].(string)]
			if c == nil {
				c = &panelCall{Name: ev["tool_name"].(string)}
				turn.Calls[ev["tool_call_id"].(string)] = c
			}
			out := ev["tool_output"].(string)
			var parsed any
			if json.Unmarshal([]byte(out), &parsed) == nil {
				c.Output = parsed
			} else {
				c.Output = out
			}
		case "error":
			turn.Error, _ = ev["error"].(string)
			return turn // the panel closes the stream here and never sees done
		case "done":
			turn.Done = true
			return turn
		}
	}
	return turn
}

// panelDataLines yields a stream's data lines as they arrive, to its end: the panel parses each
// line on its own, whichever frame it belongs to.
func panelDataLines(r io.Reader) iter.Seq[string] {
	return func(yield func(string) bool) {
		frames := ssetest.NewReader(r)
		for {
			f, err := frames.Next()
			if f.Data != "" {
				for line := range strings.SplitSeq(f.Data, "\n") {
					if !yield(line) {
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	}
}

// panelZonedTime is how the panel tells a time with a zone (formatTime of its session list), with
// a bare Z ruled out: the panel would make it "…ZZ", an Invalid Date.
var panelZonedTime = `[+-]\d{2}:?\d{2}$`

type panelSession struct {
	ThreadID     string `json:"thread_id"`
	Title        string `json:"title"`
	Pinned       bool   `json:"pinned"`
	UpdatedAt    string `json:"updated_at"`
	MessageCount int    `json:"message_count"`
	Metadata     struct {
		CopilotMode string `json:"copilot_mode"`
	} `json:"metadata"`
}

func (p *panel) sessions() []panelSession {
	var out []panelSession
	require.Equal(p.t, http.StatusOK, p.json(http.MethodGet, p.prefix+"/sessions", nil, &out))
	return out
}

// panelMessage is a message as the panel shows a history: tool messages folded into the
// assistant message before them.
type panelMessage struct {
	Role    string
	Content string
	Error   string
	Tools   []panelTool
}

type panelTool struct{ Name, Content, ToolCallID string }

func (p *panel) history(sessionID string) []panelMessage {
	var h struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    string          `json:"content"`
			Name       string          `json:"name"`
			ToolCallID string          `json:"tool_call_id"`
			Metadata   json.RawMessage `json:"metadata"`
			CreatedAt  string          `json:"created_at"`
		} `json:"messages"`
	}
	require.Equal(p.t, http.StatusOK, p.json(http.MethodGet, p.prefix+"/sessions/"+sessionID+"/history", nil, &h))
	var out []panelMessage
	for _, m := range h.Messages {
		require.Regexp(p.t, panelZonedTime, m.CreatedAt, "a history time the panel can read")
		if m.Role == "tool" && len(out) > 0 && out[len(out)-1].Role == "assistant" {
			last := &out[len(out)-1]
			last.Tools = append(last.Tools, panelTool{Name: m.Name, Content: m.Content, ToolCallID: m.ToolCallID})
			continue
		}
		var meta struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(m.Metadata, &meta)
		out = append(out, panelMessage{Role: m.Role, Content: m.Content, Error: meta.Error})
	}
	return out
}

// TestGNS3WebUIPanelCompatibility plays the panel against the service under both prefixes, on
// its own and in front of GNS3 (--proxy-gns3), where the panel really finds it: then every
// other call the panel makes (users/me here) is GNS3's own answer.
func TestGNS3WebUIPanelCompatibility(t *testing.T) {
	for _, mode := range []struct {
		name  string
		proxy bool
	}{{"alone", false}, {"in front of GNS3", true}} {
		t.Run(mode.name, func(t *testing.T) {
			env := e2eenv.Start(t, e2eenv.Options{ProxyGNS3: mode.proxy})
			env.LLM.SetHandler(titleReplies("Lab check"))
			for _, c := range []struct{ name, prefix string }{
				{"fork master-3.0", "/v3/projects/" + env.ProjectID + "/chat"},
				{"gns3-web-ui 3.1", "/v3/copilot/projects/" + env.ProjectID + "/chat"},
			} {
				t.Run(c.name, func(t *testing.T) {
					p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: c.prefix}
					playPanel(t, env, p)
				})
			}
		})
	}
}

func playPanel(t *testing.T, env *e2eenv.Env, p *panel) {
	// A new chat: the panel makes up the session id and sends it with the first message.
	sid := uuid.NewString()
	env.LLM.Enqueue(
		fakeopenai.Reply{Content: []string{"Let me ", "look."}, ToolCalls: []fakeopenai.ToolCall{{ID: "call_topo", Name: "get_gns3_topology",
			ArgumentChunks: []string{`{"project`, `_id": "` + env.ProjectID + `"}`}}}},
		fakeopenai.Reply{Content: fakeopenai.Words("Your lab has no nodes yet.")},
	)
	turn := p.send("What is in my lab?", sid)
	require.Equal(t, http.StatusOK, turn.Status, turn.HTTPError)
	require.True(t, turn.Done, "the stream ends with done: %v", turn.Types)
	require.Empty(t, turn.Error)
	require.Equal(t, sid, turn.SessionID, "the session is the one the panel named")
	require.Equal(t, "Let me look.Your lab has no nodes yet.", turn.Text)
	require.NotEmpty(t, turn.MessageID)
	require.Equal(t, []string{"call_topo"}, turn.CallOrder)
	call := turn.Calls["call_topo"]
	require.True(t, call.Complete && call.Started)
	require.Equal(t, "get_gns3_topology", call.Name)
	require.JSONEq(t, `{"project_id": "`+env.ProjectID+`"}`, call.Arguments)
	out, ok := call.Output.(map[string]any)
	require.True(t, ok, "tool_output parses as JSON: %v", call.Output)
	require.Equal(t, true, out["success"])

	// The session list, as the panel reads it.
	var mine *panelSession
	for _, s := range p.sessions() {
		if s.ThreadID == sid {
			mine = &s
		}
	}
	require.NotNil(t, mine, "the new session is listed")
	require.Equal(t, 4, mine.MessageCount) // user, assistant with the call, tool, answer
	// The panel reads a time as zoned only when it ends in ±hh:mm, and appends Z otherwise.
	require.Regexp(t, panelZonedTime, mine.UpdatedAt)
	require.NotEmpty(t, mine.Title)

	// A reload shows the history with the tool folded into the assistant message that called it.
	h := p.history(sid)
	require.Len(t, h, 3)
	require.Equal(t, "user", h[0].Role)
	require.Equal(t, "assistant", h[1].Role)
	require.Len(t, h[1].Tools, 1)
	require.Equal(t, "get_gns3_topology", h[1].Tools[0].Name)
	require.Equal(t, "call_topo", h[1].Tools[0].ToolCallID)
	require.Contains(t, h[1].Tools[0].Content, `"success":true`)
	require.Equal(t, "Your lab has no nodes yet.", h[2].Content)

	// A failed turn: the panel stops at error, and after a reload shows it from metadata.error.
	env.LLM.Enqueue(fakeopenai.Reply{Error: fakeopenai.BadRequest("This model does not support tools.", "tools")})
	turn = p.send("And now?", sid)
	require.Equal(t, http.StatusOK, turn.Status)
	require.False(t, turn.Done)
	require.Contains(t, turn.Error, "does not support tools")
	h = p.history(sid)
	last := h[len(h)-1]
	require.Equal(t, "assistant", last.Role)
	require.Contains(t, last.Error, "does not support tools")

	// A refused request's body.message is what the panel shows.
	other := &panel{t: t, base: p.base, token: "not-a-token", prefix: p.prefix}
	refused := other.send("hi", uuid.NewString())
	require.Equal(t, http.StatusUnauthorized, refused.Status)
	require.NotEmpty(t, refused.HTTPError)

	// Rename, pin and unpin with the panel's bodies; abort with an empty body.
	require.Equal(t, http.StatusOK, p.json(http.MethodPatch, p.prefix+"/sessions/"+sid, map[string]any{"title": "Renamed"}, nil))
	require.Equal(t, http.StatusOK, p.json(http.MethodPut, p.prefix+"/sessions/"+sid+"/pin", nil, nil))
	require.True(t, p.sessions()[0].Pinned)
	require.Equal(t, http.StatusOK, p.json(http.MethodDelete, p.prefix+"/sessions/"+sid+"/pin", nil, nil))

	hung := env.LLM.Stats().Hung
	env.LLM.Enqueue(fakeopenai.Reply{Content: []string{"Thinking about "}, Hang: true, HangAfter: 1})
	result := make(chan panelTurn, 1)
	go func() { result <- p.send("Take your time.", sid) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, env.LLM.WaitHanging(ctx, hung+1))
	resp := p.request(http.MethodPost, p.prefix+"/sessions/"+sid+"/abort", nil)
	resp.Body.Close()
	require.True(t, resp.StatusCode >= 200 && resp.StatusCode < 300, "abort: %d", resp.StatusCode)
	aborted := <-result
	require.True(t, aborted.Done || aborted.Error != "", "the panel's stream ended after the abort: %v", aborted.Types)

	require.Equal(t, http.StatusNoContent, p.json(http.MethodDelete, p.prefix+"/sessions/"+sid, nil, nil))
	for _, s := range p.sessions() {
		require.NotEqual(t, sid, s.ThreadID)
	}

	playProfiles(t, env, p)
	playGroupPick(t, env, p)
}

// playGroupPick is the chat panel's model picker and mode switch: both call the user's routes
// with the id of the configuration picked, here one the user inherits from a group.
func playGroupPick(t *testing.T, env *e2eenv.Env, p *panel) {
	groupID := env.GNS3.AddGroup(e2eenv.Username, "class-"+uuid.NewString()[:8])
	admin := &panel{t: t, base: p.base, token: fakegns3.AdminToken}
	var g map[string]any
	require.Equal(t, http.StatusCreated, admin.json(http.MethodPost, "/v3/access/groups/"+groupID+"/llm-model-configs", map[string]any{
		"name": "class model", "model_type": "text", "provider": "openai", "base_url": env.LLM.URL, "model": "gpt-4o-mini",
		"api_key": e2eenv.LLMKey, "context_limit": 128, "copilot_mode": "teaching_assistant"}, &g))
	gid := g["config_id"].(string)
	var me struct {
		UserID string `json:"user_id"`
	}
	require.Equal(t, http.StatusOK, p.json(http.MethodGet, "/v3/access/users/me", nil, &me))
	base := "/v3/access/users/" + me.UserID + "/llm-model-configs"

	var list struct {
		Configs []struct {
			ConfigID  string `json:"config_id"`
			Source    string `json:"source"`
			GroupName string `json:"group_name"`
		} `json:"configs"`
	}
	require.Equal(t, http.StatusOK, p.json(http.MethodGet, base, nil, &list))
	found := false
	for _, c := range list.Configs {
		found = found || (c.ConfigID == gid && c.Source == "group" && strings.HasPrefix(c.GroupName, "class-"))
	}
	require.True(t, found, "the group's configuration is listed for the user: %+v", list.Configs)

	require.Equal(t, http.StatusOK, p.json(http.MethodPut, base+"/default/"+gid, map[string]any{}, nil))
	var switched map[string]any
	require.Equal(t, http.StatusOK, p.json(http.MethodPut, base+"/"+gid, map[string]any{"copilot_mode": "lab_automation_assistant"}, &switched))
	require.Equal(t, "lab_automation_assistant", switched["config"].(map[string]any)["copilot_mode"])

	// The next chat runs on the group's model in the user's mode: destructive tools are offered.
	env.LLM.Enqueue(fakeopenai.Text("Ready."))
	turn := p.send("Which tools do you have?", uuid.NewString())
	require.True(t, turn.Done, "%v %s %s", turn.Types, turn.Error, turn.HTTPError)
	streamed := streamedRequests(env.LLM)
	require.Contains(t, streamed[len(streamed)-1].ToolNames(), "delete_gns3_node")

	// Forgetting the pick through the user route leaves the group's configuration in place.
	require.Equal(t, http.StatusNoContent, p.json(http.MethodDelete, base+"/"+gid, nil, nil))
	require.Equal(t, http.StatusNoContent, admin.json(http.MethodDelete, "/v3/access/groups/"+groupID+"/llm-model-configs/"+gid, nil, nil))
}

// playProfiles uses the AI-profile routes with the panel's field names.
func playProfiles(t *testing.T, env *e2eenv.Env, p *panel) {
	var me struct {
		UserID string `json:"user_id"`
	}
	require.Equal(t, http.StatusOK, p.json(http.MethodGet, "/v3/access/users/me", nil, &me))
	base := "/v3/access/users/" + me.UserID + "/llm-model-configs"
	for _, provider := range []string{"openai", "anthropic", "google", "aws", "ollama", "deepseek", "xai"} {
		body := map[string]any{"name": "profile " + provider, "model_type": "text", "provider": provider, "base_url": "",
			"model": "some-model", "temperature": 0.5, "context_limit": 128, "context_strategy": "balanced",
			"copilot_mode": "teaching_assistant", "is_default": false, "api_key": "sk-typed-by-the-user-1234",
			"my_note": "added by hand"}
		var created map[string]any
		require.Equal(t, http.StatusCreated, p.json(http.MethodPost, base, body, &created), "%s: %v", provider, created)
		require.Equal(t, "added by hand", created["config"].(map[string]any)["my_note"])
		cid := created["config_id"].(string)
		var list struct {
			Configs []struct {
				ConfigID  string         `json:"config_id"`
				Name      string         `json:"name"`
				ModelType string         `json:"model_type"`
				IsDefault bool           `json:"is_default"`
				Source    string         `json:"source"`
				GroupName *string        `json:"group_name"`
				Config    map[string]any `json:"config"`
			} `json:"configs"`
			DefaultConfig *struct {
				ConfigID string `json:"config_id"`
			} `json:"default_config"`
			Total int `json:"total"`
		}
		require.Equal(t, http.StatusOK, p.json(http.MethodGet, base, nil, &list))
		require.Equal(t, len(list.Configs), list.Total)
		require.Equal(t, http.StatusOK, p.json(http.MethodPut, base+"/default/"+cid, map[string]any{}, nil))
		require.Equal(t, http.StatusOK, p.json(http.MethodGet, base, nil, &list))
		require.NotNil(t, list.DefaultConfig)
		require.Equal(t, cid, list.DefaultConfig.ConfigID)
		// Edit without retyping the key keeps it; unset the default as the panel does.
		edit := map[string]any{"name": "renamed " + provider, "model": "other-model", "copilot_mode": "lab_automation_assistant"}
		var edited map[string]any
		require.Equal(t, http.StatusOK, p.json(http.MethodPut, base+"/"+cid, edit, &edited), "%v", edited)
		require.Equal(t, true, edited["api_key_set"])
		require.Equal(t, http.StatusOK, p.json(http.MethodPut, base+"/"+cid, map[string]any{"is_default": false}, &edited))
		require.Equal(t, false, edited["is_default"])
		require.Equal(t, http.StatusNoContent, p.json(http.MethodDelete, base+"/"+cid, nil, nil))
	}
}

// Abort as GNS3's own copilot (v3.1.0a2) answers it: {"status": "ok", "session_id": …}, a
// tool_end saying "aborted" for every tool call left pending, an abort event, then done.
func TestAbortAnswersAsGNS3sOwnCopilot(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.Enqueue(fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "call_slow", Name: "get_gns3_topology",
		ArgumentChunks: []string{`{"project_id": "`, env.ProjectID + `"}`}}}, Hang: true, HangAfter: 1})
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "look slowly"}, "")
	first := s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "tool_call" })
	sessionID := first[0].Data["session_id"].(string)

	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/abort"), nil)
	require.Equal(t, http.StatusAccepted, code, string(body))
	var ans map[string]any
	require.NoError(t, json.Unmarshal(body, &ans))
	require.Equal(t, "ok", ans["status"])
	require.Equal(t, sessionID, ans["session_id"])
	require.NotEmpty(t, ans["turn_id"])

	rest := s.UntilDone(t, true)
	types := e2eenv.Types(rest)
	require.GreaterOrEqual(t, len(types), 3)
	require.Equal(t, []string{"tool_end", "abort", "done"}, types[len(types)-3:], "all: %v", types)
	end := rest[len(rest)-3].Data
	require.Equal(t, "call_slow", end["tool_call_id"])
	require.Equal(t, "get_gns3_topology", end["tool_name"])
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(end["tool_output"].(string)), &out))
	require.Equal(t, false, out["success"])
	require.Contains(t, out["error"], "Aborted")
	require.Equal(t, "aborted", out["metadata"].(map[string]any)["status"])
	done := rest[len(rest)-1].Data
	require.Equal(t, true, done["cancelled"])
	require.Equal(t, "cancelled", done["status"])

	p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: "/v3/projects/" + env.ProjectID + "/chat"}
	h := p.history(sessionID)
	require.Equal(t, "assistant", h[len(h)-1].Role)
	require.NotEmpty(t, h[len(h)-1].Error, "the stopped turn shows why after a reload")
}
