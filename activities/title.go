package activities

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// GenerateTitle names a session after its first completed turn, unless the user already named
// it. The title call counts as an LLM call in the session's statistics, like any other. It is
// the title activity of turns recorded before the finalizer made the title (FinalizeTurn).
func (a *Activities) GenerateTitle(ctx context.Context, in workflows.TitleInput) (workflows.TitleResult, error) {
	result, err := a.proposeTitle(ctx, in.Turn)
	if err != nil || result.Title == "" {
		return result, err
	}
	titled, err := a.Repo.SetAutoTitle(ctx, in.Turn.SessionID, result.Title)
	if err != nil {
		return workflows.TitleResult{}, err
	}
	if !titled {
		result.Title = ""
	}
	return result, nil
}

// proposeTitle asks the model for a session's title after its first completed turn, unless the
// user already named it; it stores nothing. Called is set when the model was asked, with its
// usage, which the workflow adds to the turn's statistics exactly once.
func (a *Activities) proposeTitle(ctx context.Context, ref workflows.WorkRef) (workflows.TitleResult, error) {
	wanted, err := a.Repo.TitleWanted(ctx, ref.SessionID)
	if err != nil {
		return workflows.TitleResult{}, fmt.Errorf("loading session: %w", err)
	}
	if !wanted {
		return workflows.TitleResult{}, nil
	}
	turn, err := a.Repo.Turn(ctx, ref.TurnID)
	if err != nil {
		return workflows.TitleResult{}, err
	}
	transcript, privateTurns, err := a.Repo.Transcript(ctx, turn, tools.IsPrivateMode)
	if err != nil {
		return workflows.TitleResult{}, err
	}
	// A title is shown to the student: it must not be made of what an injection turn did.
	transcript = models.RedactPrivate(transcript, privateTurns, "")
	firstQuestion, lastAnswer := questionAndAnswer(transcript)
	settings, err := a.LLM.Load(ctx, turn.LLMConfigID)
	if err != nil {
		return workflows.TitleResult{}, err
	}
	answer, err := a.llmClient().Complete(ctx, settings, []llm.Message{
		llm.Text(openai.ChatMessageRoleSystem, a.Skills.Current().TitlePrompt()),
		llm.Text(openai.ChatMessageRoleUser, clip(firstQuestion, 2000)),
		llm.Text(openai.ChatMessageRoleAssistant, clip(lastAnswer, 2000)),
		llm.Text(openai.ChatMessageRoleUser, "Title for the conversation above:"),
	}, 24)
	a.recordLLMCall(settings, answer)
	if err != nil {
		return workflows.TitleResult{}, temporalLLMError(err)
	}
	return workflows.TitleResult{Called: true, InputTokens: answer.InputTokens, OutputTokens: answer.OutputTokens,
		ReasoningTokens: answer.ReasoningTokens, CachedTokens: answer.CachedTokens, Title: cleanTitle(answer.Content)}, nil
}

// questionAndAnswer is what a title is made of: the user's first message and the copilot's
// last words.
func questionAndAnswer(transcript []models.ChatMessage) (firstQuestion, lastAnswer string) {
	for _, m := range transcript {
		if m.ModelContext {
			continue
		}
		if m.Role == "user" && firstQuestion == "" {
			firstQuestion = m.Content
		}
		if m.Role == "assistant" && strings.TrimSpace(m.Content) != "" {
			lastAnswer = m.Content
		}
	}
	return firstQuestion, lastAnswer
}

// cleanTitle keeps a model's title to one short line without quotes.
func cleanTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Trim(s, "\"'`*#. ")
	if utf8.RuneCountInString(s) < 3 {
		return ""
	}
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:58]) + "…"
	}
	return s
}

// clip keeps at most n bytes of s, never cutting a character in two.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
