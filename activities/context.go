package activities

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/llmconfig"
)

// fitContext keeps the prompt inside the model's context window.
func (a *Activities) fitContext(msgs []openai.ChatCompletionMessage, _ llmconfig.Settings, _ []openai.Tool) []openai.ChatCompletionMessage {
	return msgs
}
