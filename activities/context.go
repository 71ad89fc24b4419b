package activities

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// fitContext keeps the prompt inside the model's context window: whole old turns go first and
// long tool results are cut for the model (the transcript keeps them whole).
func (a *Activities) fitContext(ctx context.Context, msgs []llm.Message, settings llmconfig.Settings, offered []openai.Tool) []llm.Message {
	kept, f := llm.Fit(settings, msgs, offered)
	if !f.Fits {
		// Sent anyway: the provider's own error says more than a guess of ours would.
		a.logger(ctx).Warn("the current turn alone is larger than the model's context budget", "model", settings.Model)
	}
	return kept
}
