package llmconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
)

func TestFitContextBudgetsForTheSettings(t *testing.T) {
	config := strings.Repeat("interface GigabitEthernet0/1\n ip address 10.1.1.1 255.255.255.0\n no shutdown\n!\n", 300)
	var msgs []openai.ChatCompletionMessage
	msgs = append(msgs, openai.ChatCompletionMessage{Role: "system", Content: "You are the GNS3 copilot."})
	for turn := 0; turn < 6; turn++ {
		id := fmt.Sprintf("call_%d", turn)
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprintf("show the config of R%d", turn)},
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
				Function: openai.FunctionCall{Name: "run_show", Arguments: fmt.Sprintf(`{"node":"R%d"}`, turn)}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: config},
			openai.ChatCompletionMessage{Role: "assistant", Content: "Here it is."})
	}
	tools := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "run_show", Parameters: map[string]any{"type": "object"}}}}
	s := Settings{Model: "gpt-4o", ContextLimitK: 16, ContextStrategy: "conservative"}
	c := contextwindow.ForModel("gpt-4o")
	budget := contextwindow.Budget(16, "conservative", c.Message(msgs[0]), c.Tools(tools))

	f := s.FitContext(msgs, tools)
	if err := contextwindow.Validate(f.Messages); err != nil {
		t.Fatal(err)
	}
	if !f.Fits || f.Tokens > budget || f.DroppedTurns == 0 || f.TruncatedToolOutputs == 0 {
		t.Fatalf("tokens %d budget %d dropped %d cut %d fits %v", f.Tokens, budget, f.DroppedTurns, f.TruncatedToolOutputs, f.Fits)
	}
	for _, m := range f.Messages {
		if m.Role == "tool" && c.Text(m.Content) > budget/ToolOutputShare {
			t.Fatalf("a tool output of %d tokens exceeds its share %d", c.Text(m.Content), budget/ToolOutputShare)
		}
	}
	if msgs[3].Content != config {
		t.Fatal("the transcript keeps full outputs")
	}
	// max_tokens leaves its room: a window of 16K with 8K reserved for the answer.
	s.MaxTokens = 8000
	reserved := s.FitContext(msgs, tools)
	if reserved.Tokens > 16000-8000-c.Message(msgs[0])-c.Tools(tools) || reserved.Tokens >= f.Tokens {
		t.Fatalf("max_tokens not reserved: %d vs %d", reserved.Tokens, f.Tokens)
	}
	// A window that holds everything changes nothing.
	big := Settings{Model: "llama3", ContextLimitK: 1000}
	if all := big.FitContext(msgs, tools); len(all.Messages) != len(msgs) || all.TruncatedToolOutputs != 0 {
		t.Fatalf("trimmed a transcript that fits: %d of %d", len(all.Messages), len(msgs))
	}
}

// A call that fits its window whole is proved so by bounds, and what is sent is what the exact
// count would have sent; one near its window is still counted exactly and trimmed.
func TestFitContextByBoundsSendsWhatTheCountWould(t *testing.T) {
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are the GNS3 copilot."},
		{Role: "user", Content: "What is in my lab?"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "run_show", Arguments: `{"node":"R1"}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "R1#show ip interface brief\nGi0/0 10.0.0.1 up up\n"},
		{Role: "tool", ToolCallID: "call_orphan", Content: "a result without its call is dropped either way"},
		{Role: "assistant", Content: "R1 has one interface up."},
	}
	tools := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "run_show", Parameters: map[string]any{"type": "object"}}}}
	for _, model := range []string{"gpt-4o", "llama3"} {
		s := Settings{Model: model, ContextLimitK: 8, ContextStrategy: "balanced"}
		c := contextwindow.ForModel(model)
		f, ok := s.fitsByBound(c.Bounded(), msgs, tools)
		if !ok {
			t.Fatalf("%s: a short conversation in an 8K window was not proved to fit", model)
		}
		system := systemTokens(c, msgs)
		exact := c.Fit(msgs, s.budget(system, c.Tools(tools)))
		if !reflect.DeepEqual(f.From, []int{0, 1, 2, 3, 5}) || !reflect.DeepEqual(exact.From, f.From) {
			t.Fatalf("%s: kept messages come from %v by bounds, %v exactly; want all but the orphan", model, f.From, exact.From)
		}
		if !reflect.DeepEqual(f.Messages, exact.Messages) || exact.DroppedTurns != 0 || exact.TruncatedToolOutputs != 0 {
			t.Fatalf("%s: by bounds %d messages, exactly %d (dropped %d, cut %d)", model, len(f.Messages), len(exact.Messages), exact.DroppedTurns, exact.TruncatedToolOutputs)
		}
		if f.Tokens < exact.Tokens || !f.Fits {
			t.Fatalf("%s: bound %d below the exact %d tokens", model, f.Tokens, exact.Tokens)
		}
		if got := s.FitContext(msgs, tools); !reflect.DeepEqual(got.Messages, exact.Messages) {
			t.Fatalf("%s: FitContext sent other messages than the exact fit", model)
		}
	}
	// A tool output above its share of the budget by bytes is counted exactly, and cut only if
	// its tokens are above it too.
	long := strings.Repeat("interface GigabitEthernet0/1\n ip address 10.1.1.1 255.255.255.0\n!\n", 60)
	withLong := append([]openai.ChatCompletionMessage(nil), msgs...)
	withLong[3].Content = long
	s := Settings{Model: "gpt-4o", ContextLimitK: 8, ContextStrategy: "balanced"}
	if _, ok := s.fitsByBound(contextwindow.ForModel("gpt-4o").Bounded(), withLong, tools); ok {
		t.Fatal("a 4 KB tool output in an 8K window was proved to fit by bytes")
	}
	if f := s.FitContext(withLong, tools); !f.Fits || len(f.Messages) == 0 {
		t.Fatalf("the exact fit of a long output: %+v", f)
	}
}
