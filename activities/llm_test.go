package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Long tool-call arguments streamed in small chunks are not re-sent whole on every chunk: each
// tool_call event still carries the arguments so far (the seed's shape), but only when they
// have doubled, so the bytes sent grow with the length and not with its square.
func TestToolCallArgumentsAreNotResentOnEveryChunk(t *testing.T) {
	provider := fakeopenai.New(t)
	args, _ := json.Marshal(map[string]any{"commands": strings.Repeat("show running-config | section interface\n", 150)})
	provider.Enqueue(fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "execute_multiple_device_commands", Arguments: string(args)}))
	events := relay.NewMemory(relay.MemoryOptions{})
	defer events.Close()
	a := &Activities{Events: events}
	settings := llmconfig.Settings{BaseURL: provider.URL, Model: "m", Trusted: true} // the operator's own endpoint, on loopback
	out, err := a.streamToTurn(context.Background(), settings, llm.Prompt{
		Messages: []llm.Message{llm.Text("user", "hi")}}, workflows.WorkRef{SessionID: "s", TurnID: "turn"}, "msg")
	require.NoError(t, err)
	require.Len(t, out.ToolCalls, 1)
	require.Equal(t, string(args), out.ToolCalls[0].Arguments)

	evs, err := events.Range(context.Background(), "turn", "", 0)
	require.NoError(t, err)
	chunks := len(args)/7 + 1
	sentBytes, prev := 0, ""
	for i, ev := range evs {
		var p relay.Payload
		require.NoError(t, json.Unmarshal(ev.Data, &p))
		require.Equal(t, relay.TypeToolCall, p.Type)
		got := p.ToolCall.Function.Arguments
		require.True(t, strings.HasPrefix(string(args), got), "event %d carries the arguments so far", i)
		require.GreaterOrEqual(t, len(got), len(prev), "event %d does not go back", i)
		require.Equal(t, i == len(evs)-1, p.ToolCall.Function.Complete)
		sentBytes += len(got)
		prev = got
	}
	require.Equal(t, string(args), prev, "the last event has the whole arguments")
	// Doubling from 7 bytes: about log2(len/7) events, plus the complete one. The time rule may add
	// a few on a slow machine; every chunk would be hundreds.
	require.Less(t, len(evs), 30, "%d tool_call events for %d chunks", len(evs), chunks)
	require.Less(t, sentBytes, 8*len(args), "sent %d bytes for %d bytes of arguments", sentBytes, len(args))
}

func TestArgsDue(t *testing.T) {
	require.False(t, argsDue(10, 10, time.Hour), "nothing new")
	require.True(t, argsDue(20, 10, 0), "doubled")
	require.False(t, argsDue(19, 10, argsEvery-time.Millisecond))
	require.True(t, argsDue(11, 10, argsEvery))
}

// A model call run as a local activity starts again as attempt 1 when its workflow task was lost
// with its worker; what that earlier run streamed is then the newest thing in the turn's log, and
// the client must be told to drop it.
func TestALocalModelCallSeesWhatItsLostRunLeft(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	cases := []struct {
		name   string
		events []relay.Payload
		local  bool
		want   bool
	}{
		{"nothing streamed yet", nil, true, false},
		{"the turn only started", []relay.Payload{{Type: relay.TypeTurnStarted}}, true, false},
		{"text of this message", []relay.Payload{{Type: relay.TypeTurnStarted}, {Type: relay.TypeContent, Content: "Hel", MessageID: "m2"}}, true, true},
		{"text of the previous message", []relay.Payload{{Type: relay.TypeContent, Content: "Hi", MessageID: "m1"}}, true, false},
		{"reasoning of this message", []relay.Payload{{Type: relay.TypeTurnStarted}, {Type: relay.TypeReasoning, Reasoning: "Let me", MessageID: "m2"}}, true, true},
		{"a tool call not yet run", []relay.Payload{{Type: relay.TypeContent, Content: "Let me look", MessageID: "m2"},
			{Type: relay.TypeToolCall, ToolCall: &relay.ToolCall{ID: "c1", Function: relay.ToolCallFunction{Name: "get_gns3_topology"}}}}, true, true},
		{"the previous step's tools ran", []relay.Payload{{Type: relay.TypeToolCall, ToolCall: &relay.ToolCall{ID: "c1"}},
			{Type: relay.TypeToolEnd, ToolName: "get_gns3_topology"}}, true, false},
		{"an activity counts its own attempts", []relay.Payload{{Type: relay.TypeContent, Content: "Hel", MessageID: "m2"}}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := relay.NewMemory(relay.MemoryOptions{})
			defer events.Close()
			for _, p := range tc.events {
				b, err := json.Marshal(p)
				require.NoError(t, err)
				_, err = events.Append(context.Background(), "turn", p.Type, b)
				require.NoError(t, err)
			}
			a := &Activities{Events: events}
			probe := func(ctx context.Context) (bool, error) { return a.lostRunStreamed(ctx, "turn", "m2"), nil }
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(probe)
			var got bool
			if tc.local {
				v, err := env.ExecuteLocalActivity(probe)
				require.NoError(t, err)
				require.NoError(t, v.Get(&got))
			} else {
				v, err := env.ExecuteActivity(probe)
				require.NoError(t, err)
				require.NoError(t, v.Get(&got))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// A thinking model's reasoning streams as reasoning events of its own, never as content, so the
// content events carry the answer alone; a private (injection) turn streams none of it, since it
// would tell the student the fault.
func TestReasoningStreamsApartFromTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		mode string
		// reasoning: the turn's events carry it; content: the answer as its content events carry it.
		reasoning bool
		content   string
	}{
		{"teaching_assistant", true, "Two nodes."},
		{"troubleshooting_injection", false, ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			provider := fakeopenai.New(t)
			provider.Emulate(fakeopenai.DeepSeekThinking)
			provider.Enqueue(fakeopenai.Reply{Reasoning: []string{"The user ", "asks about ", "nodes."}, Content: []string{"Two ", "nodes."}})
			events := relay.NewMemory(relay.MemoryOptions{})
			defer events.Close()
			a := &Activities{Events: events}
			settings := llmconfig.Settings{Provider: "deepseek", BaseURL: provider.URL, Model: "deepseek-v4-flash", Trusted: true}
			ref := workflows.WorkRef{SessionID: "s", TurnID: "turn", Mode: tc.mode}
			out, err := a.streamToTurn(context.Background(), settings, llm.Prompt{Messages: []llm.Message{llm.Text("user", "hi")}}, ref, "msg")
			require.NoError(t, err)
			require.Equal(t, "Two nodes.", out.Content)
			require.Equal(t, "The user asks about nodes.", out.Reasoning)

			evs, err := events.Range(context.Background(), "turn", "", 0)
			require.NoError(t, err)
			var reasoning, content strings.Builder
			for _, ev := range evs {
				var p relay.Payload
				require.NoError(t, json.Unmarshal(ev.Data, &p))
				switch p.Type {
				case relay.TypeReasoning:
					require.Empty(t, p.Content, "reasoning is never content")
					require.Equal(t, "msg", p.MessageID)
					reasoning.WriteString(p.Reasoning)
				case relay.TypeContent:
					require.Empty(t, p.Reasoning)
					content.WriteString(p.Content)
				}
			}
			if tc.reasoning {
				require.Equal(t, "The user asks about nodes.", reasoning.String())
				require.Equal(t, tc.content, content.String())
			} else {
				require.Empty(t, reasoning.String(), "a private turn streams no reasoning")
				require.NotContains(t, content.String(), "asks about")
			}
		})
	}
}
