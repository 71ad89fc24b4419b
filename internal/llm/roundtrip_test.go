package llm

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// conversation plays the copilot's side of a session against a provider, as the activity does:
// each call's request is built from the stored rows (Messages), and its answer stored as a row
// (AnswerRow), with the tools' results between.
type conversation struct {
	t      *testing.T
	client *Client
	rows   []models.ChatMessage
}

func (c *conversation) user(text string) {
	c.rows = append(c.rows, models.ChatMessage{Role: "user", Content: text})
}

// call makes one model call with s and stores its answer and a result for each of its calls.
func (c *conversation) call(s llmconfig.Settings) Answer {
	c.t.Helper()
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_gns3_topology",
		Parameters: map[string]any{"type": "object"}}}}
	var reasoning strings.Builder
	ans, err := c.client.Stream(context.Background(), s, Prompt{Messages: Messages(s, "You are the GNS3 copilot.", c.rows), Tools: tools},
		Deltas{Reasoning: func(t string) { reasoning.WriteString(t) }})
	require.NoError(c.t, err)
	require.NotContains(c.t, ans.Content, "Thinking about", "reasoning reached the answer")
	c.rows = append(c.rows, AnswerRow(s, ans, true))
	for _, tc := range ans.ToolCalls {
		c.rows = append(c.rows, models.ChatMessage{Role: "tool", ToolCallID: tc.ID, Name: tc.Name, Content: `{"success":true}`})
	}
	return ans
}

// script answers the conversation's calls in order: two calls at once, one more, an answer,
// then a later turn's answer.
func script(p *fakeopenai.Server) {
	p.Enqueue(
		fakeopenai.Reply{Reasoning: []string{"Thinking about ", "the lab."}, ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_a", Name: "get_gns3_topology", Arguments: `{"project_id":"p1"}`},
			{ID: "call_b", Name: "get_gns3_topology", Arguments: `{"project_id":"p2"}`}}},
		fakeopenai.Reply{Reasoning: []string{"Thinking about R1."}, ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_c", Name: "get_gns3_topology", Arguments: `{}`}}},
		fakeopenai.Reply{Reasoning: []string{"Thinking about the answer."}, Content: fakeopenai.Words("Two projects, R1 is up.")},
		fakeopenai.Reply{Reasoning: []string{"Thinking about thanks."}, Content: fakeopenai.Words("You're welcome.")},
	)
}

// Through each provider's emulator, a turn with several tool calls and a later turn of the
// same session complete: what each provider needs back goes back from the stored rows alone,
// and no reasoning reaches an answer.
func TestReasoningRoundTripsThroughEachProvider(t *testing.T) {
	for _, e := range fakeopenai.Thinkers {
		t.Run(e.Name, func(t *testing.T) {
			p := fakeopenai.New(t)
			p.Emulate(e.Emulate)
			script(p)
			s := llmconfig.Settings{Provider: e.Provider, BaseURL: p.URL, Model: e.Model, APIKey: "k", Trusted: true}
			c := &conversation{t: t, client: NewClient(nil, nil)}
			c.user("What is in my lab?")
			first := c.call(s)
			require.Len(t, first.ToolCalls, 2)
			if e.Emulate != fakeopenai.Gemini3 {
				require.Equal(t, "Thinking about the lab.", first.Reasoning)
			}
			c.call(s)
			final := c.call(s)
			require.Equal(t, "Two projects, R1 is up.", final.Content)
			c.user("Thanks!")
			later := c.call(s)
			require.Equal(t, "You're welcome.", later.Content)
			require.Zero(t, p.Stats().Rejected)
			for _, row := range c.rows {
				require.NotContains(t, row.Content, "Thinking about")
			}
			reqs := p.Requests()
			require.Len(t, reqs, 4)
			if e.Emulate == fakeopenai.LlamaCppThink || e.Emulate == fakeopenai.LlamaCppThinkOpenInPrompt {
				// Past reasoning is not sent back to a server whose template drops it.
				require.NotContains(t, string(reqs[3].Raw), "Thinking about")
			}
		})
	}
}

// A session that changes its model configuration midway keeps working: what the first model
// left is not sent to the second where it would be refused or mean nothing.
func TestReasoningAfterAModelSwitch(t *testing.T) {
	for _, from := range fakeopenai.Thinkers {
		for _, to := range fakeopenai.Thinkers {
			if from.Name == to.Name {
				continue
			}
			t.Run(from.Name+" then "+to.Name, func(t *testing.T) {
				p1, p2 := fakeopenai.New(t), fakeopenai.New(t)
				p1.Emulate(from.Emulate)
				p2.Emulate(to.Emulate)
				script(p1)
				p2.Enqueue(
					fakeopenai.Reply{Reasoning: []string{"Thinking again."}, ToolCalls: []fakeopenai.ToolCall{{ID: "call_d", Name: "get_gns3_topology", Arguments: `{}`}}},
					fakeopenai.Reply{Reasoning: []string{"Thinking about the end."}, Content: fakeopenai.Words("Still two projects.")},
				)
				s1 := llmconfig.Settings{Provider: from.Provider, BaseURL: p1.URL, Model: from.Model, APIKey: "k", Trusted: true}
				s2 := llmconfig.Settings{Provider: to.Provider, BaseURL: p2.URL, Model: to.Model, APIKey: "k", Trusted: true}
				c := &conversation{t: t, client: NewClient(nil, nil)}
				c.user("What is in my lab?")
				c.call(s1)
				c.call(s1)
				c.call(s1)
				c.user("Check again.")
				c.call(s2)
				require.Equal(t, "Still two projects.", c.call(s2).Content)
				require.Zero(t, p2.Stats().Rejected)
				for _, r := range p2.Requests() {
					require.NotContains(t, string(r.Raw), "Thinking about the lab", "the first model's reasoning went to the second")
				}
			})
		}
	}
}
