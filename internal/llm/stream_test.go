package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

var hello = Prompt{Messages: []Message{Text("user", "hi")}}

// trusted is the settings of an operator's endpoint, which may be on loopback like the fakes.
func trusted(baseURL string) llmconfig.Settings {
	return llmconfig.Settings{Provider: "custom", BaseURL: baseURL, Model: "m", APIKey: "k", Trusted: true}
}

// Parallel tool calls whose fragments interleave come out whole and in the order of their
// index; every fragment is reported with the arguments so far.
func TestStreamAccumulatesInterleavedToolCallsByIndex(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Reply{
		Content: []string{"Let me ", "look."},
		ToolCalls: []fakeopenai.ToolCall{
			{ID: "a", Name: "get_gns3_topology", Arguments: `{"project_id":"p1"}`},
			{ID: "b", Name: "start_gns3_node", Arguments: `{"node_ids":["n1","n2"]}`},
		},
		Usage: &fakeopenai.Usage{PromptTokens: 120, CompletionTokens: 30},
	})
	var text strings.Builder
	lastSeen := map[int]string{}
	ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{
		Content: func(s string) { text.WriteString(s) },
		ToolCall: func(c ToolCall) {
			require.True(t, strings.HasPrefix(c.Arguments, lastSeen[c.Index]), "call %d's arguments only grow", c.Index)
			lastSeen[c.Index] = c.Arguments
		},
	})
	require.NoError(t, err)
	require.Equal(t, "Let me look.", ans.Content)
	require.Equal(t, ans.Content, text.String())
	require.Equal(t, []ToolCall{
		{Index: 0, ID: "a", Name: "get_gns3_topology", Arguments: `{"project_id":"p1"}`},
		{Index: 1, ID: "b", Name: "start_gns3_node", Arguments: `{"node_ids":["n1","n2"]}`},
	}, ans.ToolCalls)
	require.Equal(t, map[int]string{0: `{"project_id":"p1"}`, 1: `{"node_ids":["n1","n2"]}`}, lastSeen)
	require.Equal(t, "tool_calls", ans.FinishReason)
	require.Equal(t, int64(120), ans.InputTokens)
	require.Equal(t, int64(30), ans.OutputTokens)
	require.Positive(t, ans.FirstToken)
	require.GreaterOrEqual(t, ans.Took, ans.FirstToken)
	require.Empty(t, ans.ErrorClass)
}

// The request asks for the usage and carries the configuration's model, temperature and token
// limit; a temperature of zero still reaches the provider.
func TestStreamRequestCarriesTheSettings(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Text("ok"))
	s := trusted(provider.URL)
	zero := 0.0
	s.Temperature, s.MaxTokens = &zero, 512
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_gns3_topology",
		Parameters: map[string]any{"type": "object"}}}}
	_, err := NewClient(nil, nil).Stream(context.Background(), s, Prompt{Messages: hello.Messages, Tools: tools}, Deltas{})
	require.NoError(t, err)
	req, ok := provider.LastRequest()
	require.True(t, ok)
	require.Equal(t, "m", req.Model)
	require.True(t, req.Stream)
	require.NotNil(t, req.StreamOptions)
	require.True(t, req.StreamOptions.IncludeUsage)
	require.NotNil(t, req.Temperature)
	require.InDelta(t, 0, *req.Temperature, math.SmallestNonzeroFloat32)
	require.NotNil(t, req.MaxTokens)
	require.Equal(t, 512, *req.MaxTokens)
	require.Len(t, req.Tools, 1)
	require.Equal(t, "Bearer k", req.Authorization)
}

// Some local servers send tool-call fragments without an index, and without ids: a fragment
// with an id starts a call, one without continues the last; the ids stay empty for the caller
// to make.
func TestStreamWithoutIndexesContinuesTheLastCall(t *testing.T) {
	frames := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"first","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"y","type":"function","function":{"name":"second","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			fmt.Fprintf(w, "data: %s\n\n", f)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(srv.URL), hello, Deltas{})
	require.NoError(t, err)
	require.Equal(t, []ToolCall{{Index: 0, ID: "x", Name: "first", Arguments: `{"a":1}`}, {Index: 1, ID: "y", Name: "second", Arguments: "{}"}},
		ans.ToolCalls)

	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv2.Close)
	ans, err = NewClient(nil, nil).Stream(context.Background(), trusted(srv2.URL), hello, Deltas{})
	require.NoError(t, err)
	require.Equal(t, []ToolCall{{Index: 0, Name: "f", Arguments: "{}"}}, ans.ToolCalls)
}

// A stream that ends cleanly without a finish reason is not a short answer: it is a retryable
// failure that keeps the text that arrived.
func TestStreamCutOffIsRetryableAndKeepsTheText(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Reply{Content: []string{"half ", "an answer"}, Truncate: true, TruncateAfter: 1})
	ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.ErrorIs(t, err, ErrCutOff)
	require.True(t, failure.Retryable())
	require.Contains(t, failure.Message, "ended the answer without finishing it")
	require.Equal(t, "half ", ans.Content)
	require.Empty(t, ans.ToolCalls)
	require.Equal(t, llmconfig.ErrorServer, ans.ErrorClass)
}

// A call the caller gives up on ends with the context's own error, not a provider failure.
func TestStreamEndsWithTheContextsError(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Reply{Content: []string{"Partial ", "answer"}, Hang: true, HangAfter: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ans, err := NewClient(nil, nil).Stream(ctx, trusted(provider.URL), hello, Deltas{Content: func(string) { cancel() }})
	require.ErrorIs(t, err, context.Canceled)
	var failure *Error
	require.False(t, errors.As(err, &failure))
	require.Equal(t, "Partial ", ans.Content)
	require.Equal(t, llmconfig.ErrorCancelled, ans.ErrorClass)
}

func TestCompleteReturnsTheAnswerAndItsUsage(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Reply{Content: []string{"Lab ", "with two VPCS"}, Usage: &fakeopenai.Usage{PromptTokens: 40, CompletionTokens: 5}})
	ans, err := NewClient(nil, nil).Complete(context.Background(), trusted(provider.URL), hello.Messages, 24)
	require.NoError(t, err)
	require.Equal(t, "Lab with two VPCS", ans.Content)
	require.Equal(t, "stop", ans.FinishReason)
	require.Equal(t, int64(40), ans.InputTokens)
	require.Equal(t, int64(5), ans.OutputTokens)
	require.Zero(t, ans.FirstToken, "an unstreamed call has no first token")
	req, ok := provider.LastRequest()
	require.True(t, ok)
	require.False(t, req.Stream)
	require.NotNil(t, req.MaxTokens)
	require.Equal(t, 24, *req.MaxTokens)
	require.Nil(t, req.Temperature)

	provider.Enqueue(fakeopenai.Reply{Error: fakeopenai.InvalidAPIKey()})
	ans, err = NewClient(nil, nil).Complete(context.Background(), trusted(provider.URL), hello.Messages, 24)
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.Equal(t, KeyRejected, failure.Kind)
	require.Equal(t, llmconfig.ErrorAuth, ans.ErrorClass)
}

// The tokens a thinking model spent reasoning are read from the usage, streamed or not, as a
// part of its output tokens; a provider that reports none counts none.
func TestReasoningTokensAreCounted(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Emulate(fakeopenai.DeepSeekThinking)
	reply := fakeopenai.Reply{Reasoning: []string{"I think"}, Content: []string{"ok"},
		Usage: &fakeopenai.Usage{PromptTokens: 10, CompletionTokens: 30, ReasoningTokens: 25}}
	provider.Enqueue(reply, reply)
	s := trusted(provider.URL)
	s.Provider, s.Model = "deepseek", "deepseek-v4-flash"
	ans, err := NewClient(nil, nil).Stream(context.Background(), s, hello, Deltas{})
	require.NoError(t, err)
	require.Equal(t, int64(30), ans.OutputTokens)
	require.Equal(t, int64(25), ans.ReasoningTokens)
	ans, err = NewClient(nil, nil).Complete(context.Background(), s, hello.Messages, 24)
	require.NoError(t, err)
	require.Equal(t, int64(25), ans.ReasoningTokens)

	provider.Emulate(fakeopenai.OpenAI)
	provider.Enqueue(fakeopenai.Text("plain"))
	ans, err = NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
	require.NoError(t, err)
	require.Zero(t, ans.ReasoningTokens)
}

// The idle timeout bounds silence, not the call: a model that reasons for much longer than it,
// a piece at a time, completes; one whose provider sends nothing for that long is cut off as
// stalled, retryably, with what had arrived kept.
func TestIdleTimeoutCountsReasoningAsLife(t *testing.T) {
	const idle = 150 * time.Millisecond
	provider := fakeopenai.New(t)
	provider.Emulate(fakeopenai.DeepSeekThinking)
	s := trusted(provider.URL)
	s.Provider, s.Model = "deepseek", "deepseek-v4-flash"
	c := NewClient(nil, nil).WithIdleTimeout(idle)

	// Twenty pieces of reasoning, each well within the timeout, four times as long in all.
	thoughts := make([]string, 20)
	for i := range thoughts {
		thoughts[i] = fmt.Sprintf("step %d. ", i)
	}
	provider.Enqueue(fakeopenai.Reply{Reasoning: thoughts, Content: []string{"Done."}, ChunkDelay: idle / 5})
	ans, err := c.Stream(context.Background(), s, hello, Deltas{})
	require.NoError(t, err)
	require.Equal(t, "Done.", ans.Content)
	require.Equal(t, strings.Join(thoughts, ""), ans.Reasoning)
	require.Greater(t, ans.Took, 3*idle, "the call outlived the idle timeout")

	// Silence before the first piece, longer than the timeout.
	provider.Enqueue(fakeopenai.Reply{Reasoning: []string{"too late"}, Content: []string{"never"}, FirstChunkDelay: 4 * idle})
	ans, err = c.Stream(context.Background(), s, hello, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.ErrorIs(t, err, ErrStalled)
	require.True(t, failure.Retryable())
	require.Contains(t, failure.Message, "sent nothing for 150ms")
	require.Equal(t, llmconfig.ErrorTimeout, ans.ErrorClass)

	// A stall in the middle keeps the reasoning that arrived.
	provider.Enqueue(fakeopenai.Reply{Reasoning: []string{"first thought. ", "second"}, Hang: true, HangAfter: 1})
	ans, err = c.Stream(context.Background(), s, hello, Deltas{})
	require.ErrorIs(t, err, ErrStalled)
	require.Equal(t, "first thought. ", ans.Reasoning)
}

// Fragments without an index continue the call before them, whatever index it had, and a call
// that names itself without an index comes after the others (the fuzz target's seed had a call
// at index 7 whose next fragment opened a nameless call at 0).
func TestToolCallFragmentsWithoutIndexContinueTheCallBefore(t *testing.T) {
	frag := func(idx *int, id, name, args string) wireToolCallDelta {
		var f wireToolCallDelta
		f.Index, f.ID, f.Function.Name, f.Function.Arguments = idx, id, name, args
		return f
	}
	seven := 7
	var calls toolCallAccumulator
	calls.add(frag(&seven, "call_a", "get_gns3_topology", `{"a":`))
	calls.add(frag(nil, "", "", `1}`))
	calls.add(frag(nil, "call_b", "start_gns3_node", `{"node_ids":`))
	calls.add(frag(nil, "", "", `["PC1"]}`))
	got := calls.whole()
	require.Len(t, got, 2)
	require.Equal(t, ToolCall{Index: 7, ID: "call_a", Name: "get_gns3_topology", Arguments: `{"a":1}`}, got[0])
	require.Equal(t, ToolCall{Index: 8, ID: "call_b", Name: "start_gns3_node", Arguments: `{"node_ids":["PC1"]}`}, got[1])
}
