package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// titleReplies answers the title call (the one request that offers no tools) with a fixed title,
// leaving every other request to the queue.
func titleReplies(title string) fakeopenai.Handler {
	return func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Reply{Content: []string{title}, Usage: &fakeopenai.Usage{PromptTokens: 30, CompletionTokens: 4}}, true
		}
		return fakeopenai.Reply{}, false
	}
}

// streamedRequests are the turn's model calls as s received them: every request but the title
// call, which is the only one not streamed.
func streamedRequests(s *fakeopenai.Server) []fakeopenai.Request {
	var out []fakeopenai.Request
	for _, r := range s.Requests() {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

func TestTurnWithToolCallStreamsSeedEventsAndStoresTranscript(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Lab topology overview"))
	env.LLM.Enqueue(
		fakeopenai.Reply{
			Content:   []string{"Let me ", "look."},
			ToolCalls: []fakeopenai.ToolCall{{ID: "call_topo", Name: "get_gns3_topology", ArgumentChunks: []string{`{"project`, `_id": "` + env.ProjectID + `"}`}}},
			Usage:     &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 20},
		},
		fakeopenai.Reply{Content: fakeopenai.Words("Your lab has no nodes yet."), Usage: &fakeopenai.Usage{PromptTokens: 150, CompletionTokens: 8}},
	)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "What is in my lab?"}, "")
	require.Equal(t, http.StatusOK, s.Status)
	require.Equal(t, "text/event-stream", s.Header.Get("Content-Type"))
	frames := s.UntilDone(t, true)

	require.Equal(t, []string{"turn_started", "content", "tool_call", "tool_start", "tool_end", "content", "done"}, e2eenv.Types(frames))
	sessionID := frames[0].Data["session_id"].(string)
	require.NotEmpty(t, sessionID)
	for _, f := range frames {
		require.NotEmpty(t, f.ID, "every frame carries the event log's id")
		require.Equal(t, f.Event, f.Data["type"], "data.type matches the SSE event")
	}

	// tool_call frames accumulate the arguments; the last one is complete.
	var calls []map[string]any
	for _, f := range frames {
		if f.Event == "tool_call" {
			calls = append(calls, f.Data["tool_call"].(map[string]any))
		}
	}
	require.GreaterOrEqual(t, len(calls), 2)
	last := calls[len(calls)-1]
	fn := last["function"].(map[string]any)
	require.Equal(t, true, fn["complete"])
	require.Equal(t, "get_gns3_topology", fn["name"])
	require.JSONEq(t, `{"project_id": "`+env.ProjectID+`"}`, fn["arguments"].(string))
	require.Equal(t, "call_topo", last["id"])

	var start, end map[string]any
	for _, f := range frames {
		switch f.Event {
		case "tool_start":
			start = f.Data
		case "tool_end":
			end = f.Data
		}
	}
	require.Equal(t, "call_topo", start["tool_call_id"])
	require.Equal(t, "get_gns3_topology", end["tool_name"])
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(end["tool_output"].(string)), &out))
	require.Equal(t, true, out["success"])

	var text strings.Builder
	for _, f := range frames {
		if f.Event == "content" {
			text.WriteString(f.Data["content"].(string))
		}
	}
	require.Equal(t, "Let me look.Your lab has no nodes yet.", text.String())
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])

	// The model's second call saw the tool result after its own tool call.
	streamed := streamedRequests(env.LLM)
	require.Len(t, streamed, 2)
	second := streamed[1].Messages
	require.Equal(t, "tool", second[len(second)-1].Role)
	require.Equal(t, "call_topo", second[len(second)-1].ToolCallID)
	require.Equal(t, "system", second[0].Role)
	require.Contains(t, strings.Join(labBlocks(streamed[1]), ""), env.ProjectID, "the conversation names the project")

	// History in the seed's OpenAI message shape.
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var hist struct {
		ThreadID string `json:"thread_id"`
		Title    string `json:"title"`
		LLMCalls int    `json:"llm_calls"`
		Messages []struct {
			ID         string `json:"id"`
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			Name       string `json:"name"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			CreatedAt string `json:"created_at"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &hist))
	require.Equal(t, sessionID, hist.ThreadID)
	require.Equal(t, "Lab topology overview", hist.Title)
	require.Len(t, hist.Messages, 4)
	require.Equal(t, []string{"user", "assistant", "tool", "assistant"},
		[]string{hist.Messages[0].Role, hist.Messages[1].Role, hist.Messages[2].Role, hist.Messages[3].Role})
	require.Equal(t, "What is in my lab?", hist.Messages[0].Content)
	require.Len(t, hist.Messages[1].ToolCalls, 1)
	require.Equal(t, "function", hist.Messages[1].ToolCalls[0].Type)
	require.Equal(t, "get_gns3_topology", hist.Messages[1].ToolCalls[0].Function.Name)
	require.Equal(t, "call_topo", hist.Messages[2].ToolCallID)
	require.Equal(t, "Your lab has no nodes yet.", hist.Messages[3].Content)
	for _, m := range hist.Messages {
		require.NotEmpty(t, m.ID)
		require.NotEmpty(t, m.CreatedAt)
	}

	// Statistics: 4 messages, 3 LLM calls (two answers and the title), summed tokens.
	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code)
	var sessions []map[string]any
	require.NoError(t, json.Unmarshal(body, &sessions))
	require.Len(t, sessions, 1)
	sess := sessions[0]
	require.Equal(t, sessionID, sess["thread_id"])
	require.EqualValues(t, 4, sess["message_count"])
	require.EqualValues(t, 3, sess["llm_calls_count"])
	require.EqualValues(t, 280, sess["input_tokens"])
	require.EqualValues(t, 32, sess["output_tokens"])
	require.EqualValues(t, 312, sess["total_tokens"])
	require.Equal(t, "Lab topology overview", sess["title"])
}
