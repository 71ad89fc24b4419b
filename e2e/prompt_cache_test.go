package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// stablePrefix is what of a request a prefix cache shared by a class can keep: its system
// message and its tools, as the copilot wrote them.
func stablePrefix(t *testing.T, r fakeopenai.Request) string {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.Raw, &req))
	require.NotEmpty(t, req.Tools, "request %d offers no tools", r.Seq)
	return string(req.Messages[0]) + "\n" + string(req.Tools)
}

// Issue 49: the system prompt and the tools are byte for byte the same for every call of a
// mode, in every session, for every user and project; the lab each session is about comes after
// them, in the conversation.
func TestPromptPrefixIsTheSameForEveryCallSessionAndUserOfAMode(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant"})
	env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	const bobToken = "bob-token-49"
	env.GNS3.AddUser("bob", bobToken, false)
	bobsProject := env.GNS3.AddProject("bob's lab", fakegns3.Members("bob"))
	env.GNS3.AddNode(bobsProject, fakegns3.NodeSpec{Name: "R1", Status: "stopped"})
	env.LLM.SetHandler(titleReplies("Lab"))

	turn := func(token, project, sessionID, message string) string {
		t.Helper()
		env.LLM.Enqueue(
			fakeopenai.Calls(fakeopenai.ToolCall{Name: "start_gns3_node", Arguments: `{"node_ids": ["PC1", "R1"]}`}),
			fakeopenai.Text("Done."),
		)
		body := map[string]any{"message": message}
		if sessionID != "" {
			body["session_id"] = sessionID
		}
		code, raw := env.DoAs(token, http.MethodPost, "/v3/projects/"+project+"/chat/stream", body)
		require.Equal(t, http.StatusOK, code, string(raw))
		require.Contains(t, string(raw), `"status":"completed"`)
		var first struct {
			SessionID string `json:"session_id"`
		}
		line, _, _ := strings.Cut(strings.TrimPrefix(string(raw)[strings.Index(string(raw), "data: "):], "data: "), "\n")
		require.NoError(t, json.Unmarshal([]byte(line), &first))
		return first.SessionID
	}
	alice := turn(e2eenv.UserToken, env.ProjectID, "", "Start everything.")
	turn(e2eenv.UserToken, env.ProjectID, alice, "Again.")
	turn(bobToken, bobsProject, "", "Start everything.")

	reqs := streamedRequests(env.LLM)
	require.Len(t, reqs, 6)
	want := stablePrefix(t, reqs[0])
	for _, r := range reqs {
		require.Equal(t, want, stablePrefix(t, r), "request %d starts differently", r.Seq)
		require.NotContains(t, r.Messages[0].Content, env.ProjectID)
		require.NotContains(t, r.Messages[0].Content, bobsProject)
	}
	// The lab comes after it: each session's own project, in its first user message.
	require.Contains(t, reqs[0].Messages[1].Content, "<lab>")
	require.Contains(t, reqs[0].Messages[1].Content, "node_id ")
	require.Contains(t, reqs[0].Messages[1].Content, env.ProjectID)
	require.Contains(t, reqs[4].Messages[1].Content, bobsProject)
	require.NotContains(t, conversationText(reqs[4]), env.ProjectID, "bob's session is about bob's project")
}

// Issue 49: the last step a turn may take keeps the tools in its request and forbids calling
// them, so it starts as every call of the turn before it did.
func TestLastStepKeepsItsToolsAndForbidsThem(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Lab"))
	for i := 1; i < workflows.DefaultMaxSteps; i++ {
		env.LLM.Enqueue(fakeopenai.Calls(fakeopenai.ToolCall{Name: "get_gns3_topology", Arguments: `{}`}))
	}
	env.LLM.Enqueue(fakeopenai.Text("That is all I could look at."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "Look again and again."}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])

	reqs := streamedRequests(env.LLM)
	require.Len(t, reqs, workflows.DefaultMaxSteps)
	last := reqs[len(reqs)-1]
	require.Equal(t, reqs[0].ToolNames(), last.ToolNames(), "the last step keeps the tools")
	require.JSONEq(t, `"none"`, string(last.ToolChoice), "and may not call them")
	for _, r := range reqs[:len(reqs)-1] {
		require.Empty(t, r.ToolChoice, "earlier steps may call tools")
	}
	require.Equal(t, stablePrefix(t, reqs[0]), stablePrefix(t, last))
}

// Issue 49: the prompt tokens the provider says its cache served reach the turn's done event,
// each answer's metadata, the session's statistics and /metrics.
func TestCachedTokensReachStatsAndMetrics(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.ReportUsage(fakeopenai.DeepSeekUsage)
	env.LLM.SetHandler(titleReplies("Lab"))
	env.LLM.Enqueue(
		fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`}},
			Usage: &fakeopenai.Usage{PromptTokens: 7000, CompletionTokens: 20, CachedTokens: 6400}},
		fakeopenai.Reply{Content: fakeopenai.Words("An empty lab."), Usage: &fakeopenai.Usage{PromptTokens: 7200, CompletionTokens: 8, CachedTokens: 7040}},
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "What is here?"}, "").UntilDone(t, true)
	done := frames[len(frames)-1].Data
	require.Equal(t, "completed", done["status"])
	require.Equal(t, 13440.0, done["usage"].(map[string]any)["cached_tokens"], "the turn's")
	sessionID := done["session_id"].(string)

	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code)
	var sessions []map[string]any
	require.NoError(t, json.Unmarshal(body, &sessions))
	require.Len(t, sessions, 1)
	require.Equal(t, 13440.0, sessions[0]["cached_tokens"], "the session's")

	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"cached_tokens":7040`, "each answer's")

	fams := scrape(t, env)
	require.Equal(t, 13440.0, value(fams, "gns3_copilot_llm_cached_tokens_total", map[string]string{"provider": "openai", "model": "gpt-4o-mini"}))
}
