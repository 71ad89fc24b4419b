package llm

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// The prompt tokens a provider's cache served are read from its own usage report, whichever
// field it uses, streamed or not.
func TestCachedTokensFromEachProvidersUsage(t *testing.T) {
	for _, shape := range []fakeopenai.UsageShape{fakeopenai.OpenAIUsage, fakeopenai.VLLMUsage, fakeopenai.DeepSeekUsage,
		fakeopenai.AnthropicUsage, fakeopenai.LlamaCppUsage} {
		t.Run(string(shape), func(t *testing.T) {
			provider := fakeopenai.New(t)
			provider.ReportUsage(shape)
			usage := &fakeopenai.Usage{PromptTokens: 8000, CompletionTokens: 40, CachedTokens: 7680}
			provider.Enqueue(fakeopenai.Reply{Content: []string{"ok"}, Usage: usage}, fakeopenai.Reply{Content: []string{"title"}, Usage: usage})
			c := NewClient(nil, nil)
			ans, err := c.Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
			require.NoError(t, err)
			require.Equal(t, int64(8000), ans.InputTokens)
			require.Equal(t, int64(7680), ans.CachedTokens)
			whole, err := c.Complete(context.Background(), trusted(provider.URL), hello.Messages, 20)
			require.NoError(t, err)
			require.Equal(t, int64(7680), whole.CachedTokens, "an unstreamed answer's usage too")
		})
	}
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Reply{Content: []string{"ok"}, Usage: &fakeopenai.Usage{PromptTokens: 10, CompletionTokens: 1}})
	ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
	require.NoError(t, err)
	require.Zero(t, ans.CachedTokens, "nothing served from a cache")
}

var topologyTool = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_gns3_topology",
	Parameters: map[string]any{"type": "object"}}}}

// A call that must answer in words keeps its tools and forbids calling them; a provider that
// refuses that tool_choice, or ignores it (Ollama), gets the call without tools.
func TestNoToolCallsKeepsTheToolsWhereTheProviderAllows(t *testing.T) {
	prompt := Prompt{Messages: hello.Messages, Tools: topologyTool, NoToolCalls: true}

	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Text("In words."))
	ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), prompt, Deltas{})
	require.NoError(t, err)
	require.Equal(t, "In words.", ans.Content)
	req := provider.Requests()[0]
	require.Equal(t, []string{"get_gns3_topology"}, req.ToolNames(), "the tools stay, so the request starts as before")
	require.JSONEq(t, `"none"`, string(req.ToolChoice))

	autoOnly := fakeopenai.New(t)
	autoOnly.OnlyAutoToolChoice()
	autoOnly.Enqueue(fakeopenai.Text("In words."))
	var streamed string
	ans, err = NewClient(nil, nil).Stream(context.Background(), trusted(autoOnly.URL), prompt, Deltas{Content: func(s string) { streamed += s }})
	require.NoError(t, err)
	require.Equal(t, "In words.", ans.Content)
	require.Equal(t, "In words.", streamed, "nothing streamed twice")
	reqs := autoOnly.Requests()
	require.Len(t, reqs, 2, "refused, then asked again")
	require.False(t, reqs[1].HasTools())
	require.Empty(t, reqs[1].ToolChoice)

	ollama := fakeopenai.New(t)
	ollama.Enqueue(fakeopenai.Text("In words."))
	s := trusted(ollama.URL)
	s.Provider = "ollama"
	_, err = NewClient(nil, nil).Stream(context.Background(), s, prompt, Deltas{})
	require.NoError(t, err)
	require.False(t, ollama.Requests()[0].HasTools(), "Ollama ignores tool_choice: no tools instead")

	// A call allowed to use tools sends no tool_choice at all.
	provider.Enqueue(fakeopenai.Text("ok"))
	_, err = NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), Prompt{Messages: hello.Messages, Tools: topologyTool}, Deltas{})
	require.NoError(t, err)
	require.Empty(t, provider.Requests()[1].ToolChoice)
}
