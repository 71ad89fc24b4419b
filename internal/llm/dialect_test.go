package llm

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// The configuration's provider and model choose the dialect; a gateway serving a model that
// needs its reasoning back gets it too.
func TestDialectFor(t *testing.T) {
	for _, tc := range []struct {
		provider, model, want string
	}{
		{"openai", "gpt-4.1", "openai"},
		{"azure", "my-deployment", "openai"},
		{"anthropic", "claude-sonnet-4-5", "openai"},
		{"deepseek", "deepseek-v4-pro", "reasoning_content"},
		{"DeepSeek", "deepseek-chat", "reasoning_content"},
		{"custom", "deepseek-v4-flash", "reasoning_content"},
		{"litellm", "deepseek-flash", "reasoning_content"},
		{"litellm", "kimi-k2-thinking", "reasoning_content"},
		{"azure", "DeepSeek-V4-Pro", "reasoning_content"},
		{"google", "gemini-3-pro-preview", "gemini"},
		{"openrouter", "deepseek/deepseek-v4-pro", "openrouter"},
		{"vllm", "Qwen/Qwen3-8B", "reasoning_content+think_tags"},
		{"ollama", "qwen3:8b", "think_tags"},
		{"lmstudio", "deepseek-r1-distill-qwen-7b", "think_tags"},
		{"custom", "llama-3.1-8b", "think_tags"},
		{"", "gpt-4o-mini", "openai"},
	} {
		got := dialectFor(llmconfig.Settings{Provider: tc.provider, Model: tc.model}).name
		require.Equal(t, tc.want, got, "%s %s", tc.provider, tc.model)
	}
}

const (
	calls1 = `[{"id":"c1","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"list_gns3_nodes","arguments":"{}"}}]`
	calls2 = `[{"id":"c3","type":"function","function":{"name":"start_gns3_node","arguments":"{\"node\":\"R1\"}"}}]`
	calls3 = `[{"id":"c4","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"}}]`
)

// stateOf is a stored state as AnswerRow writes it, for s.
func stateOf(t *testing.T, s llmconfig.Settings, st state) string {
	t.Helper()
	st.Source = sourceOf(s)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return string(b)
}

// transcript is three turns: tools with reasoning in the first (two calls at once, then a
// second step), an answer without tools in the second, and a third in progress whose first
// step was made by another configuration. The state the rows carry is s's own, except in the
// third turn.
func transcript(t *testing.T, s, other llmconfig.Settings) []models.ChatMessage {
	own := func(st state) string { return stateOf(t, s, st) }
	return []models.ChatMessage{
		{Role: "user", Content: "What is in my lab?"},
		{Role: "assistant", ToolCalls: calls1, Reasoning: "Look first.", ReasoningState: own(state{
			Details: []rawJSON{rawJSON(`{"type":"reasoning.text","text":"Look first.","signature":"s1","index":0}`)},
			Calls:   map[string]rawJSON{"c1": rawJSON(`{"google":{"thought_signature":"SIG1"}}`)}})},
		{Role: "tool", ToolCallID: "c1", Name: "get_gns3_topology", Content: "{}"},
		{Role: "tool", ToolCallID: "c2", Name: "list_gns3_nodes", Content: "{}"},
		{Role: "assistant", ToolCalls: calls2, Reasoning: "Start R1.", ReasoningState: own(state{
			Details: []rawJSON{rawJSON(`{"type":"reasoning.encrypted","data":"ENC2","index":0}`)},
			Calls:   map[string]rawJSON{"c3": rawJSON(`{"google":{"thought_signature":"SIG3"}}`)}})},
		{Role: "tool", ToolCallID: "c3", Name: "start_gns3_node", Content: "{}"},
		{Role: "assistant", Content: "R1 is running.", Reasoning: "Done.", ReasoningState: own(state{})},
		{Role: "user", Content: "Thanks!"},
		{Role: "assistant", Content: "You're welcome.", Reasoning: "Polite.", ReasoningState: own(state{})},
		{Role: "assistant", ReasoningState: own(state{})}, // a failed turn's error carrier: nothing to send
		{Role: "user", Content: "Check it again."},
		{Role: "assistant", ToolCalls: calls3, Reasoning: "Other model's thoughts.", ReasoningState: stateOf(t, other, state{
			Calls: map[string]rawJSON{"c4": rawJSON(`{"google":{"thought_signature":"OTHER"}}`)}})},
		{Role: "tool", ToolCallID: "c4", Name: "get_gns3_topology", Content: "{}"},
	}
}

// wireMessages is what Messages sends for s, as the provider receives it.
func wireMessages(t *testing.T, s llmconfig.Settings, rows []models.ChatMessage) []map[string]any {
	t.Helper()
	msgs := Messages(s, "You are the GNS3 copilot.", rows)
	body, err := requestBody(openai.ChatCompletionRequest{Model: s.Model}, msgs, nil)
	require.NoError(t, err)
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	return req.Messages
}

// Each dialect sends back what its provider documents, on the messages it names, and only what
// the same configuration produced.
func TestMessagesSendBackWhatEachProviderNeeds(t *testing.T) {
	other := llmconfig.Settings{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1"}
	// Index of the wire messages: 0 system, 1 user, 2 assistant(c1,c2), 3-4 tools,
	// 5 assistant(c3), 6 tool, 7 assistant answer, 8 user, 9 assistant answer, 10 user,
	// 11 assistant(c4, another model's), 12 tool. The failed turn's empty message is gone.
	const n = 13
	t.Run("DeepSeek", func(t *testing.T) {
		s := llmconfig.Settings{Provider: "deepseek", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-v4-pro"}
		w := wireMessages(t, s, transcript(t, s, other))
		require.Len(t, w, n)
		// Every assistant message of an exchange with tool calls carries reasoning_content, in
		// that turn and every later one; another model's goes back empty.
		require.Equal(t, "Look first.", w[2]["reasoning_content"])
		require.Equal(t, "Start R1.", w[5]["reasoning_content"])
		require.Equal(t, "Done.", w[7]["reasoning_content"])
		require.Equal(t, "", w[11]["reasoning_content"])
		require.Contains(t, w[11], "reasoning_content", "sent even when empty")
		require.NotContains(t, w[9], "reasoning_content", "an exchange without tools needs none")
		for _, m := range w {
			require.NotContains(t, m, "reasoning_details")
			require.NotContains(t, m, "extra_content")
		}
	})
	t.Run("Gemini 3", func(t *testing.T) {
		s := llmconfig.Settings{Provider: "google", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", Model: "gemini-3-pro-preview"}
		w := wireMessages(t, s, transcript(t, s, other))
		require.Len(t, w, n)
		tc := func(i, j int) map[string]any { return w[i]["tool_calls"].([]any)[j].(map[string]any) }
		require.Equal(t, map[string]any{"google": map[string]any{"thought_signature": "SIG1"}}, tc(2, 0)["extra_content"])
		require.NotContains(t, tc(2, 1), "extra_content", "parallel calls: only the first was signed")
		require.Equal(t, map[string]any{"google": map[string]any{"thought_signature": "SIG3"}}, tc(5, 0)["extra_content"])
		// The turn in progress began with another model's call: it gets Google's value for
		// calls no Gemini 3 model signed, never the other's state.
		require.Equal(t, map[string]any{"google": map[string]any{"thought_signature": skipSignature}}, tc(11, 0)["extra_content"])
		for _, m := range w {
			require.NotContains(t, m, "reasoning_content")
			require.NotContains(t, m, "reasoning")
		}
	})
	t.Run("OpenRouter", func(t *testing.T) {
		s := llmconfig.Settings{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Model: "deepseek/deepseek-v4-pro"}
		w := wireMessages(t, s, transcript(t, s, other))
		require.Len(t, w, n)
		require.Equal(t, "Look first.", w[2]["reasoning"])
		require.Equal(t, []any{map[string]any{"type": "reasoning.text", "text": "Look first.", "signature": "s1", "index": float64(0)}}, w[2]["reasoning_details"])
		require.Equal(t, []any{map[string]any{"type": "reasoning.encrypted", "data": "ENC2", "index": float64(0)}}, w[5]["reasoning_details"])
		require.Equal(t, "", w[11]["reasoning"], "another model's message goes back without reasoning")
		require.NotContains(t, w[11], "reasoning_details", "opaque state never goes to another model")
		require.NotContains(t, w[9], "reasoning")
	})
	t.Run("a switch of model drops opaque state", func(t *testing.T) {
		gemini := llmconfig.Settings{Provider: "google", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", Model: "gemini-3-pro-preview"}
		rows := transcript(t, gemini, other)
		for _, s := range []llmconfig.Settings{
			{Provider: "google", BaseURL: gemini.BaseURL, Model: "gemini-3-flash-preview"},
			{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1", Model: "google/gemini-3-pro-preview"},
			{Provider: "deepseek", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-v4-pro"},
		} {
			w := wireMessages(t, s, rows)
			raw, _ := json.Marshal(w)
			for _, sig := range []string{"SIG1", "SIG3", "s1", "ENC2", "Look first.", "Start R1."} {
				require.NotContains(t, string(raw), sig, "%s got %s's state", s.Model, gemini.Model)
			}
		}
	})
	t.Run("OpenAI and local servers get none", func(t *testing.T) {
		for _, s := range []llmconfig.Settings{{Provider: "openai", Model: "gpt-4.1"}, {Provider: "ollama", Model: "qwen3:8b"}} {
			w := wireMessages(t, s, transcript(t, s, other))
			raw, _ := json.Marshal(w)
			for _, field := range []string{"reasoning", "extra_content", "Look first."} {
				require.NotContains(t, string(raw), field, s.Provider)
			}
		}
	})
}

// The context window keeps each message's state with it, whatever it drops.
func TestFitKeepsStateWithItsMessage(t *testing.T) {
	s := llmconfig.Settings{Provider: "deepseek", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-v4-pro", ContextLimitK: 2}
	rows := transcript(t, s, llmconfig.Settings{Provider: "openai"})
	rows[0].Content = strings.Repeat("an old question that fills the window ", 300) // the first turn must go
	msgs := Messages(s, "system", rows)
	kept, f := Fit(s, msgs, nil)
	require.Positive(t, f.DroppedTurns)
	for i, m := range kept {
		require.Same(t, msgs[f.From[i]].replay, m.replay)
		require.Equal(t, msgs[f.From[i]].ReasoningContent, m.ReasoningContent)
	}
	require.Equal(t, "", kept[len(kept)-2].ReasoningContent)
	require.NotNil(t, kept[len(kept)-2].replay, "the call of the turn in progress still carries its field")
}

// An answer becomes a row: the answer as content, reasoning beside it, the state with the
// configuration that made it, and the calls' signatures by their final ids.
func TestAnswerRow(t *testing.T) {
	s := llmconfig.Settings{Provider: "google", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai/", Model: "gemini-3-pro-preview", ConfigID: "cfg1"}
	a := Answer{Content: "Looking.", Reasoning: "plan", ToolCalls: []ToolCall{
		{Index: 0, ID: "call_x_0", Name: "get_gns3_topology", Arguments: "{}", extra: rawJSON(`{"google":{"thought_signature":"S"}}`)},
		{Index: 1, ID: "call_x_1", Name: "list_gns3_nodes", Arguments: "{}"},
	}}
	row := AnswerRow(s, a, true)
	require.Equal(t, "assistant", row.Role)
	require.Equal(t, "Looking.", row.Content)
	require.Equal(t, "plan", row.Reasoning)
	require.JSONEq(t, `[{"id":"call_x_0","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"}},
		{"id":"call_x_1","type":"function","function":{"name":"list_gns3_nodes","arguments":"{}"}}]`, row.ToolCalls)
	require.JSONEq(t, `{"source":{"provider":"google","base_url":"https://generativelanguage.googleapis.com/v1beta/openai","model":"gemini-3-pro-preview","config_id":"cfg1"},
		"calls":{"call_x_0":{"google":{"thought_signature":"S"}}}}`, row.ReasoningState)

	failed := AnswerRow(s, a, false)
	require.Empty(t, failed.ToolCalls, "a failed call's calls are not kept")
	require.NotContains(t, failed.ReasoningState, "calls")

	plain := AnswerRow(llmconfig.Settings{Provider: "openai", Model: "gpt-4.1"}, Answer{Content: "hi"}, true)
	require.Empty(t, plain.ReasoningState, "a model that does not think leaves no state")
}
