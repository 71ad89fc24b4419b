package activities

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// prompt assembles what one model call of a turn sends: the mode's system prompt and tools,
// the same for every call of the mode and skills set; the stored transcript, with what the model
// was told of the lab where it was told it; and, when the lab changed since the model last saw
// it, a note of what changed at its end, stored first so every later call shows it again. The
// whole is cut to the model's context. The last allowed step keeps the tools and forbids calling
// them (llm.Prompt.NoToolCalls), since a request without them would start differently.
func (a *Activities) prompt(ctx context.Context, in workflows.LLMInput, turn *models.ChatTurn, mode tools.Mode,
	settings llmconfig.Settings) (llm.Prompt, error) {
	// One set for the whole prompt: a reload in between must not pair one set's prompt with
	// another's recipes or scenarios.
	skillSet := a.Skills.Current()
	transcript, privateTurns, err := a.Repo.Transcript(ctx, turn, tools.IsPrivateMode)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("loading transcript: %w", err)
	}
	// A later turn's model must not be able to tell the student which fault was injected.
	transcript = models.RedactPrivate(transcript, privateTurns, turn.ID)
	rows, stale := callRows(transcript, turn.ID, in.MessageIndex)
	if lab := a.labContext(ctx, in, turn, mode, skillSet, rows, privateTurns); lab != nil {
		// Stored before the call, so the next call and later turns show exactly this.
		if err := a.Repo.SaveMessage(ctx, lab); err != nil {
			return llm.Prompt{}, fmt.Errorf("storing what the model is told of the lab: %w", err)
		}
		rows = append(rows, *lab)
	} else if stale {
		// An earlier run of this call sent a note that this run does not: it must not be shown
		// to later calls as if it had been read.
		if err := a.Repo.DeleteMessage(ctx, models.ContextMessageID(turn.ID, in.MessageIndex)); err != nil {
			return llm.Prompt{}, fmt.Errorf("taking back an earlier run's lab note: %w", err)
		}
	}
	offered := toolDefinitions(a.Tools.For(mode))
	msgs := a.fitContext(ctx, llm.Messages(settings, systemPrompt(skillSet, mode), rows), settings, offered)
	return llm.Prompt{Messages: msgs, Tools: offered, NoToolCalls: in.NoTools}, nil
}

// systemPrompt is the mode's prompt, with the skills' fault recipes in injection mode: nothing
// of the session, the project, the user or the time, so that it is the same for every call of a
// mode and skills set.
func systemPrompt(set *skills.Set, mode tools.Mode) string {
	p := set.SystemPrompt(mode)
	if mode == tools.TroubleshootingInjection {
		p += recipesSection(set.Recipes)
	}
	return p
}

// callRows is the transcript as this call sends it: without the messages of the call's own slot
// and after (a retry must not see its own failed attempt). stale reports a model-context row an
// earlier run of this call stored in its slot.
func callRows(transcript []models.ChatMessage, turnID string, ownIdx int) (rows []models.ChatMessage, stale bool) {
	rows = make([]models.ChatMessage, 0, len(transcript)+1)
	for _, m := range transcript {
		if m.TurnID == turnID && m.Idx >= ownIdx {
			stale = stale || (m.ModelContext && m.Idx == ownIdx)
			continue
		}
		rows = append(rows, m)
	}
	return rows, stale
}

func toolDefinitions(ts []tools.Tool) []openai.Tool {
	out := make([]openai.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name(), Description: t.Description(), Parameters: t.Parameters(),
		}})
	}
	return out
}
