package llmconfig

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
)

// ToolOutputShare is the largest part of the conversation budget one tool result may take in
// a request (1/ToolOutputShare): a 20-device running-config must not push every earlier turn
// out of the window. The full output stays in the transcript and in the SSE tool_end.
const ToolOutputShare = 4

// minToolOutputTokens keeps a useful head and tail of a tool output even in a tiny window.
const minToolOutputTokens = 256

// FitContext prepares the messages of one LLM call (system prompt first, as sent) for these
// settings: tokens are counted for the model, the budget is context_limit × the strategy's ratio
// minus the system prompt and the tool schemas (and never more than what leaves max_tokens of
// room for the answer), long tool results are cut to a share of it with a note, and whole old
// turns are dropped until the rest fits. The result's Messages are what to send, and its From
// indexes msgs; msgs is not modified. A call that fits whole by upper bounds is not counted further (fitsByBound), and its
// Tokens is then that bound.
func (s Settings) FitContext(msgs []openai.ChatCompletionMessage, tools []openai.Tool) contextwindow.Fitted {
	return s.FitContextOpening(msgs, tools, nil)
}

// FitContextOpening is FitContext for a conversation whose kept part opens with a restatement of
// what was dropped: opening(c, i) is what that costs, counted with c, when the kept part starts at
// msgs[i] (see contextwindow.Counter.FitOpening).
func (s Settings) FitContextOpening(msgs []openai.ChatCompletionMessage, tools []openai.Tool,
	opening func(c *contextwindow.Counter, i int) int) contextwindow.Fitted {
	c := contextwindow.ForModel(s.Model)
	if f, ok := s.fitsByBound(c.Bounded(), msgs, tools); ok {
		return f // nothing is dropped, so nothing is restated
	}
	system := systemTokens(c, msgs)
	budget := s.budget(system, c.Tools(tools))
	capped, cut := c.CapToolOutputs(msgs, max(budget/ToolOutputShare, minToolOutputTokens))
	var open func(int) int
	if opening != nil {
		open = func(i int) int { return opening(c, i) }
	}
	f := c.FitOpening(capped, budget, open)
	f.TruncatedToolOutputs += cut
	return f
}

// fitsByBound reports whether msgs fit whole, measured with b's upper bounds: then nothing is
// cut or dropped (every exact count is at most its bound, so the exact budget is at least this
// one and the exact total at most this total), and the result, with Tokens an upper bound, is
// the exact one's. Measured this way, a conversation that stays well inside its window never
// builds a vocabulary.
func (s Settings) fitsByBound(b *contextwindow.Counter, msgs []openai.ChatCompletionMessage, tools []openai.Tool) (contextwindow.Fitted, bool) {
	budget := s.budget(systemTokens(b, msgs), b.Tools(tools))
	share := max(budget/ToolOutputShare, minToolOutputTokens)
	total := 0
	for _, m := range msgs {
		if isSystem(m) {
			continue
		}
		if m.Role == openai.ChatMessageRoleTool && b.Text(m.Content) > share {
			return contextwindow.Fitted{}, false
		}
		total += b.Message(m)
	}
	if total > budget {
		return contextwindow.Fitted{}, false
	}
	kept, from := contextwindow.SanitizeFrom(msgs)
	return contextwindow.Fitted{Messages: kept, From: from, Tokens: total, Fits: true}, true
}

func isSystem(m openai.ChatCompletionMessage) bool {
	return m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper
}

// systemTokens is what the system messages of msgs cost, counted with c.
func systemTokens(c *contextwindow.Counter, msgs []openai.ChatCompletionMessage) int {
	n := 0
	for _, m := range msgs {
		if isSystem(m) {
			n += c.Message(m)
		}
	}
	return n
}

// budget is what the conversation may take beside a system prompt and tool schemas of these
// sizes, leaving max_tokens of room for the answer when it is set.
func (s Settings) budget(system, schemas int) int {
	budget := contextwindow.Budget(s.ContextLimitK, s.ContextStrategy, system, schemas)
	if s.MaxTokens > 0 {
		window := s.ContextLimitK
		if window <= 0 {
			window = contextwindow.DefaultContextLimitK
		}
		budget = min(budget, max(0, window*1000-s.MaxTokens-system-schemas))
	}
	return budget
}
