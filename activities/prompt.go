package activities

import (
	"context"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// prompt assembles what one model call of a turn sends: the mode's system prompt with the
// project as it is now, the stored transcript cut to the model's context, the tools of the mode
// (none on the last allowed step) and, on the turn's first call, what changed in the lab since
// the session last looked.
func (a *Activities) prompt(ctx context.Context, in workflows.LLMInput, turn *models.ChatTurn, mode tools.Mode,
	settings llmconfig.Settings) (llm.Prompt, error) {
	// One set for the whole prompt: a reload in between must not pair one set's prompt with
	// another's recipes or scenarios.
	skillSet := a.Skills.Current()
	system, snap := a.systemPrompt(ctx, in.Turn, mode, skillSet)
	transcript, privateTurns, err := a.Repo.Transcript(ctx, turn, tools.IsPrivateMode)
	if err != nil {
		return llm.Prompt{}, fmt.Errorf("loading transcript: %w", err)
	}
	system += a.labSections(ctx, skillSet, in.Turn, mode, snap, transcript)
	// A later turn's model must not be able to tell the student which fault was injected.
	transcript = models.RedactPrivate(transcript, privateTurns, turn.ID)
	var offered []openai.Tool
	if !in.NoTools {
		offered = toolDefinitions(a.Tools.For(mode))
	}
	msgs := a.promptMessages(ctx, system, transcript, in.MessageIndex, turn.ID, settings, offered)
	if in.Step == 1 {
		// Only the turn's first call: later calls of the turn already had the note.
		if note := a.driftNote(ctx, in.Turn, snap); note != "" {
			msgs = append(msgs, llm.Text(openai.ChatMessageRoleSystem, note))
		}
	}
	return llm.Prompt{Messages: msgs, Tools: offered}, nil
}

// systemPrompt is the mode's prompt plus the project as it is now, so the user never has to tell
// the model ids the copilot can look up itself. It also returns that project (nil when it could
// not be read).
func (a *Activities) systemPrompt(ctx context.Context, ref workflows.WorkRef, mode tools.Mode, skillSet *skills.Set) (string, *livetopo.Snapshot) {
	var b strings.Builder
	b.WriteString(skillSet.SystemPrompt(mode))
	if mode == tools.TroubleshootingInjection {
		b.WriteString(recipesSection(skillSet.Recipes))
		b.WriteString(a.injectionBrief(ctx, ref))
		b.WriteString(a.linkFaultsNote(ctx))
	}
	b.WriteString("\n\n## The project the user has open\n\n")
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		b.WriteString("(The topology could not be read: the turn's GNS3 credentials are unavailable.)\n")
		return b.String(), nil
	}
	snap, err := a.readProject(ctx, a.GNS3.WithToken(token), ref.ProjectID)
	if err != nil {
		fmt.Fprintf(&b, "Project id: %s\n(The current topology could not be read: %v. Use get_gns3_topology.)\n", ref.ProjectID, err)
		return b.String(), nil
	}
	b.WriteString(tools.SnapshotContext(snap, a.GNS3.Host()))
	return b.String(), snap
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

// promptMessages is the request's messages: the system prompt and the stored transcript as
// the model's dialect takes them (llm.Messages), fitted to its context, leaving out the message
// this call is about to write (a retry must not see its own failed attempt).
func (a *Activities) promptMessages(ctx context.Context, system string, transcript []models.ChatMessage, ownIdx int, turnID string,
	settings llmconfig.Settings, offered []openai.Tool) []llm.Message {
	rows := make([]models.ChatMessage, 0, len(transcript))
	for _, m := range transcript {
		if m.TurnID == turnID && m.Idx >= ownIdx {
			continue
		}
		rows = append(rows, m)
	}
	return a.fitContext(ctx, llm.Messages(settings, system, nil, rows), settings, offered)
}
