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
// turns are dropped until the rest fits. The result's Messages are what to send; msgs is not
// modified.
func (s Settings) FitContext(msgs []openai.ChatCompletionMessage, tools []openai.Tool) contextwindow.Fitted {
	c := contextwindow.ForModel(s.Model)
	system := 0
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			system += c.Message(m)
		}
	}
	schemas := c.Tools(tools)
	budget := contextwindow.Budget(s.ContextLimitK, s.ContextStrategy, system, schemas)
	if s.MaxTokens > 0 {
		window := s.ContextLimitK
		if window <= 0 {
			window = contextwindow.DefaultContextLimitK
		}
		budget = min(budget, max(0, window*1000-s.MaxTokens-system-schemas))
	}
	capped, cut := c.CapToolOutputs(msgs, max(budget/ToolOutputShare, minToolOutputTokens))
	f := c.Fit(capped, budget)
	f.TruncatedToolOutputs += cut
	return f
}
