package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The lab the model knows is part of the conversation, not of the system prompt: the system
// prompt and the tools stay byte for byte the same for every call of a mode and skills set,
// whoever asks about whichever project, so a model server's prefix cache serves them to a whole
// class. The project is shown once, at the session's first call, and every later change as a
// short note where the model reads it next. Each is a model-context row of the transcript
// (models.ChatMessage.ModelContext), so every later request shows it again exactly as it was.

// Tags around the lab's text, so the model tells it from the message it is added to.
const (
	labOpen, labClose       = "<lab>\n", "</lab>"
	updateOpen, updateClose = "<lab_update>\n", "</lab_update>"
	labHeading              = "The project the user has open in GNS3:\n"
	skillsHeading           = "\nWhat the skills say about this lab's devices:\n"
)

// labContext is what this model call is to be told about the lab, and for an injection turn's
// first call the exercise's brief, as the model-context row to store before the call's answer;
// nil when the model already knows the lab as it is. rows are the conversation the call sends
// (redacted, up to the call's own slot); private are the session's private turns.
func (a *Activities) labContext(ctx context.Context, in workflows.LLMInput, turn *models.ChatTurn, mode tools.Mode, set *skills.Set,
	rows []models.ChatMessage, private map[string]bool) *models.ChatMessage {
	known := knownLab(rows, private, turn.ID)
	snap, client, err := a.currentProject(ctx, in.Turn)
	var parts []string
	var platforms []string
	restate := ""
	switch {
	case err != nil && known == "":
		parts = append(parts, labOpen+labHeading+fmt.Sprintf("Project id: %s\n(The topology could not be read just now: %v. Use get_gns3_topology.)\n",
			in.Turn.ProjectID, err)+labClose)
	case err != nil:
		// The model keeps what it knows; the next call tries again.
	default:
		var deviceSkills string
		deviceSkills, platforms = a.labSkills(ctx, set, client, snap)
		restate = labText(tools.SnapshotContext(snap, a.GNS3.Host()), deviceSkills)
		var outside []string
		if in.Step == 1 {
			outside = a.outsideChanges(ctx, in.Turn, snap)
		}
		if note := labNote(known, restate, outside); note != "" {
			parts = append(parts, note)
		}
	}
	if mode == tools.TroubleshootingInjection && in.Step == 1 {
		parts = append(parts, a.exerciseBrief(ctx, set, in.Turn, platforms, rows))
	}
	if len(parts) == 0 {
		return nil
	}
	meta := ""
	if restate != "" {
		meta = models.ContextMetadata(restate)
	}
	return &models.ChatMessage{ID: models.ContextMessageID(turn.ID, in.MessageIndex), SessionID: turn.SessionID, TurnID: turn.ID,
		TurnSeq: turn.Seq, Idx: in.MessageIndex, Sub: -1, Role: "user", Content: strings.Join(parts, "\n\n"), Metadata: meta,
		ModelContext: true}
}

// currentProject is the project as the turn's user may see it now, with the client that read it
// as that user, which the rest of the call reuses rather than unseal the credentials again.
func (a *Activities) currentProject(ctx context.Context, ref workflows.WorkRef) (*livetopo.Snapshot, *gns3.Client, error) {
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		return nil, nil, fmt.Errorf("the turn's GNS3 credentials are unavailable")
	}
	client := a.GNS3.WithToken(token)
	snap, err := a.readProject(ctx, client, ref.ProjectID)
	return snap, client, err
}

// knownLab is the lab as the model knows it from rows: the restatement of the last model-context
// row that has one, or "" when the model knows none, or when a private turn other than this one
// came after it. That turn's notes were taken from the model (RedactPrivate), and telling the
// model what changed since would name the fault it injected: the model is shown the whole lab
// again instead, as it is, which says nothing of how it came to be so.
//
// Each restatement is a whole lab and only the last counts, so rows are read from the end.
func knownLab(rows []models.ChatMessage, private map[string]bool, turnID string) string {
	for i := len(rows) - 1; i >= 0; i-- {
		m := &rows[i]
		if private[m.TurnID] && m.TurnID != turnID {
			return ""
		}
		if m.ModelContext {
			if known := models.Restatement(m.Metadata); known != "" {
				return known
			}
		}
	}
	return ""
}

// labText is the whole lab as the model is shown it: the project, then what the skills say of
// its devices.
func labText(project, deviceSkills string) string {
	text := labOpen + labHeading + project
	if deviceSkills != "" {
		text += skillsHeading + deviceSkills
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
	}
	return text + labClose
}

// splitLab takes a labText apart again.
func splitLab(text string) (project, deviceSkills string) {
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, labOpen), labHeading), labClose)
	project, deviceSkills, _ = strings.Cut(text, skillsHeading)
	return project, deviceSkills
}

// labNote is what the model is told of the lab now: the whole lab when it knows none, else what
// changed since it last saw it ("" when nothing did). outside are the changes made since the
// session's previous turn ended, which a turn's first call names as made outside the chat.
func labNote(known, now string, outside []string) string {
	if known == "" {
		return now
	}
	if now == known && len(outside) == 0 {
		return "" // the usual case for a turn's later calls: nothing to take apart
	}
	oldProject, oldSkills := splitLab(known)
	project, deviceSkills := splitLab(now)
	changes := tools.LabChanges(oldProject, project)
	if len(changes) == 0 && len(outside) == 0 && deviceSkills == oldSkills {
		return ""
	}
	var b strings.Builder
	b.WriteString(updateOpen)
	if len(outside) > 0 {
		b.WriteString(livetopo.OutsideChangeNote(outside) + "\n")
	}
	if len(changes) > 0 {
		b.WriteString("The lab changed since you last saw it:\n" + strings.Join(changes, "\n") + "\n")
	}
	if deviceSkills != oldSkills {
		b.WriteString(skillsHeading[1:] + deviceSkills)
		if !strings.HasSuffix(deviceSkills, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString(updateClose)
	return b.String()
}

// exerciseBrief is what an injection turn's model is told of its exercise: how many faults, the
// ones the student already had, whether this GNS3 takes link faults, and the scenarios it may
// choose from. It belongs to the turn, a
// private one: later turns never see it.
func (a *Activities) exerciseBrief(ctx context.Context, set *skills.Set, ref workflows.WorkRef, platforms []string, rows []models.ChatMessage) string {
	brief := strings.TrimLeft(a.injectionBrief(ctx, ref)+a.linkFaultsNote(ctx), "\n")
	if offer := a.scenarioOffer(ctx, set, ref, platforms, rows); offer != "" {
		brief += "\n" + offer
	}
	return strings.TrimRight(brief, "\n")
}
