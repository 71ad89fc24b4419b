package llm

import (
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/models"
)

func labRow(content, restate string) models.ChatMessage {
	meta := ""
	if restate != "" {
		meta = fmt.Sprintf(`{"restate":%q}`, restate)
	}
	return models.ChatMessage{Role: "user", Content: content, Metadata: meta, ModelContext: true}
}

// What the copilot told the model about the lab goes at the end of the message before it, a
// person's or a tool's, so the request is a valid sequence for every template; after an
// assistant message it is a user message of its own. Later requests show it the same way.
func TestMessagesAddModelContextToTheMessageBefore(t *testing.T) {
	s := llmconfig.Settings{Provider: "openai", Model: "gpt-4o"}
	rows := []models.ChatMessage{
		{Role: "user", Content: "What is in my lab?"},
		labRow("<lab>PC1</lab>", "<lab>PC1</lab>"),
		{Role: "assistant", ToolCalls: `[{"id":"c1","type":"function","function":{"name":"create_gns3_node","arguments":"{}"}}]`},
		{Role: "tool", ToolCallID: "c1", Content: `{"success":true}`},
		labRow("<lab_update>PC2 added</lab_update>", "<lab>PC1 PC2</lab>"),
		{Role: "assistant", Content: "PC1 and PC2."},
		labRow("<lab_update>PC2 stopped</lab_update>", "<lab>PC1 PC2 stopped</lab>"),
		{Role: "user", Content: "And now?"},
	}
	msgs := Messages(s, "system", rows)
	got := make([]string, len(msgs))
	for i, m := range msgs {
		got[i] = m.Role + ": " + m.Content
	}
	require.Equal(t, []string{
		"system: system",
		"user: What is in my lab?\n\n<lab>PC1</lab>",
		"assistant: ",
		"tool: {\"success\":true}\n\n<lab_update>PC2 added</lab_update>",
		"assistant: PC1 and PC2.",
		"user: <lab_update>PC2 stopped</lab_update>",
		"user: And now?",
	}, got)

	// The request of the call before this one is a prefix of this one, byte for byte.
	before, err := requestBody(openai.ChatCompletionRequest{Model: "gpt-4o"}, Messages(s, "system", rows[:5]), nil)
	require.NoError(t, err)
	after, err := requestBody(openai.ChatCompletionRequest{Model: "gpt-4o"}, msgs, nil)
	require.NoError(t, err)
	cut := strings.LastIndex(string(before), "]") // the end of the messages array
	require.True(t, strings.HasPrefix(string(after), string(before[:cut])), "a later request starts with the earlier one")
}

// When old turns no longer fit, the first message kept opens with what the dropped lab notes
// amount to, so the model still knows every id; a cut tool result keeps its lab note whole.
func TestFitRestatesTheLabOfDroppedTurns(t *testing.T) {
	s := llmconfig.Settings{Provider: "openai", Model: "gpt-4o", ContextLimitK: 4, ContextStrategy: "balanced"}
	big := strings.Repeat("R1#show running-config\ninterface GigabitEthernet0/1\n ip address 10.1.1.1 255.255.255.0\n!\n", 60)
	var rows []models.ChatMessage
	for turn := 0; turn < 6; turn++ {
		id := fmt.Sprintf("c%d", turn)
		rows = append(rows, models.ChatMessage{Role: "user", Content: fmt.Sprintf("question %d", turn)})
		if turn == 0 {
			rows = append(rows, labRow("<lab>R1 node_id n1</lab>", "<lab>R1 node_id n1</lab>"))
		}
		rows = append(rows,
			models.ChatMessage{Role: "assistant", ToolCalls: `[{"id":"` + id + `","type":"function","function":{"name":"show","arguments":"{}"}}]`},
			models.ChatMessage{Role: "tool", ToolCallID: id, Content: big})
		if turn == 1 {
			rows = append(rows, labRow("<lab_update>R2 added: node_id n2</lab_update>", "<lab>R1 node_id n1, R2 node_id n2</lab>"))
		}
		rows = append(rows, models.ChatMessage{Role: "assistant", Content: "done"})
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "show", Parameters: map[string]any{"type": "object"}}}}
	kept, f := Fit(s, Messages(s, "system", rows), tools)
	require.Positive(t, f.DroppedTurns)
	require.True(t, f.Fits)
	require.Equal(t, "user", kept[1].Role)
	require.True(t, strings.HasPrefix(kept[1].Content, "<lab>R1 node_id n1, R2 node_id n2</lab>\n\nquestion "), kept[1].Content)
	for _, m := range kept {
		require.NotContains(t, m.Content, "<lab_update>", "the dropped note is restated, not repeated")
	}

	// A tool result cut to fit keeps the note at its end.
	s.ContextLimitK = 2
	last := append(rows[:len(rows)-1:len(rows)-1], labRow("<lab_update>R1 stopped: node_id n1</lab_update>", "<lab>R1 stopped</lab>"))
	kept, f = Fit(s, Messages(s, "system", last), tools)
	require.Positive(t, f.TruncatedToolOutputs)
	tail := kept[len(kept)-1]
	require.Equal(t, "tool", tail.Role)
	require.Contains(t, tail.Content, "were cut here")
	require.True(t, strings.HasSuffix(tail.Content, "\n\n<lab_update>R1 stopped: node_id n1</lab_update>"), tail.Content[len(tail.Content)-200:])
}

// A long session in a small window, its lab changing as it goes, keeps its prefix for most of
// its calls: old turns go in large steps, and each request that starts after a cut opens with
// the lab as it was there, the same on every call until the next cut.
func TestALongSessionKeepsItsPrefixThroughItsCuts(t *testing.T) {
	s := llmconfig.Settings{Provider: "openai", Model: "gpt-4o", ContextLimitK: 16, ContextStrategy: "balanced"}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "show", Parameters: map[string]any{"type": "object"}}}}
	output := strings.Repeat("Gi0/0 10.0.0.1 up up\n", 60)
	var rows []models.ChatMessage
	var prev []Message
	calls, broken, call := 0, 0, 0
	request := func() {
		kept, f := Fit(s, Messages(s, "system", rows), tools)
		require.True(t, f.Fits)
		if f.DroppedTurns > 0 {
			require.True(t, strings.HasPrefix(kept[1].Content, "<lab>"), "a request after a cut opens with the lab")
		}
		calls++
		if prev != nil && (len(kept) < len(prev) || !sameMessages(kept[:len(prev)], prev)) {
			broken++
		}
		prev = kept
	}
	lab := 1
	for turn := 0; turn < 50; turn++ {
		rows = append(rows, models.ChatMessage{Role: "user", Content: fmt.Sprintf("turn %d: add a router and look", turn)})
		if turn == 0 {
			rows = append(rows, labRow("<lab>R1 node_id n1</lab>", "<lab>R1 node_id n1</lab>"))
		}
		for step := 0; step < 2; step++ {
			request()
			call++
			id := fmt.Sprintf("c%d", call)
			rows = append(rows, models.ChatMessage{Role: "assistant", ToolCalls: `[{"id":"` + id + `","type":"function","function":{"name":"show","arguments":"{}"}}]`},
				models.ChatMessage{Role: "tool", ToolCallID: id, Content: output})
			if step == 0 {
				lab++
				rows = append(rows, labRow(fmt.Sprintf("<lab_update>R%d added: node_id n%d</lab_update>", lab, lab),
					fmt.Sprintf("<lab>R1 … R%d</lab>", lab)))
			}
		}
		request()
		rows = append(rows, models.ChatMessage{Role: "assistant", Content: "R" + fmt.Sprint(lab) + " is there."})
	}
	require.Positive(t, broken, "the session outgrew its window")
	require.Less(t, broken*10, calls, "%d of %d requests do not extend the one before", broken, calls)
	t.Logf("%d of %d requests start differently from the one before", broken, calls)
}

// sameMessages compares what the wire shows of two requests' messages.
func sameMessages(a, b []Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Role != b[i].Role || a[i].Content != b[i].Content || a[i].ToolCallID != b[i].ToolCallID || len(a[i].ToolCalls) != len(b[i].ToolCalls) {
			return false
		}
	}
	return true
}
