package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// maxOfferedScenarios bounds the scenarios one injection turn's prompt lists.
const maxOfferedScenarios = 12

// maxExerciseHints bounds a fault's hints: the scenario's, then the model's own.
const maxExerciseHints = 10

// scenarioHints are the hints an exercise gives for a fault: the scenario's in its order, then
// the model's own that say something else. A fault that names a scenario the skills do not
// hold is refused, so the model can correct it.
func (a *Activities) scenarioHints(f tools.InjectedFault) ([]string, error) {
	if f.Scenario == "" {
		return f.Hints, nil
	}
	sc, ok := a.Skills.Current().Scenario(f.Scenario)
	if !ok {
		return nil, fmt.Errorf("no scenario %q in the skills; give the id of one from your instructions, or leave scenario out", f.Scenario)
	}
	hints := slices.Clone(sc.Hints)
	for _, h := range f.Hints {
		if !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return nil, fmt.Errorf("scenario %q has no troubleshooting hints; give hints of your own", f.Scenario)
	}
	return hints[:min(len(hints), maxExerciseHints)], nil
}

// labSkills is what the skills say of this lab's platforms (the platforms with it), for the lab
// the model is shown; "" when they say nothing or the lab could not be read. client, the turn's
// user's, reads template names when a node's own fields do not tell its platform.
func (a *Activities) labSkills(ctx context.Context, set *skills.Set, client *gns3.Client, snap *livetopo.Snapshot) (string, []string) {
	if snap == nil || (len(set.Devices) == 0 && len(set.Scenarios) == 0) {
		return "", nil
	}
	platforms := tools.LabPlatforms(ctx, client, snap)
	return set.DeviceContext(platforms), platforms
}

// scenarioOffer is, for an injection turn, the scenarios of the skills it may choose from: the
// ones that fit the lab's platforms and the difficulty the student asked for, minus the ones
// the student had; "" when the skills hold none.
func (a *Activities) scenarioOffer(ctx context.Context, set *skills.Set, ref workflows.WorkRef, platforms []string,
	transcript []models.ChatMessage) string {
	if len(set.Scenarios) == 0 {
		return ""
	}
	var had []string
	if a.Exercises.DB != nil {
		had, _ = a.Exercises.ScenariosHad(ctx, ref.UserID) // without the list, every scenario is offered
	}
	difficulty := skills.RequestedDifficulty(turnMessage(transcript, ref.TurnID))
	return scenariosSection(set.Choose(skills.Choice{Platforms: platforms, Difficulty: difficulty, Had: had,
		Seed: ref.TurnID, Max: maxOfferedScenarios}), difficulty, platforms)
}

// turnMessage is the user's message that started the turn.
func turnMessage(transcript []models.ChatMessage, turnID string) string {
	for _, m := range transcript {
		if m.TurnID == turnID && m.Role == "user" && !m.ModelContext {
			return m.Content
		}
	}
	return ""
}

// scenariosSection offers an injection turn the scenarios it may choose from.
func scenariosSection(offer []skills.Scenario, difficulty string, platforms []string) string {
	var b strings.Builder
	b.WriteString("## Fault scenarios you may choose from\n\n")
	if len(offer) == 0 {
		fmt.Fprintf(&b, "No scenario of the skills fits this lab (platforms: %s", orNone(platforms))
		if difficulty != "" {
			fmt.Fprintf(&b, ", difficulty %s", difficulty)
		}
		b.WriteString(") that this student has not already had: choose a fault yourself.\n")
		return b.String()
	}
	b.WriteString("Choose one of these (they fit the lab's platforms")
	if difficulty != "" {
		fmt.Fprintf(&b, " and the %s difficulty asked for", difficulty)
	}
	b.WriteString(", and the student has not had them). Make it on a device whose platform it lists, and pass its id as " +
		"`scenario` to record_injected_fault: its hints are recorded for the exercise, so add hints only for what is particular to this lab.\n")
	for _, sc := range offer {
		fmt.Fprintf(&b, "\n- `%s` (%s, severity %s; platforms %s): %s. %s\n", sc.ID, orDash(sc.Difficulty), orDash(sc.Severity),
			strings.Join(sc.Platforms, ", "), sc.Name, sc.Description)
		if len(sc.Symptoms) > 0 {
			fmt.Fprintf(&b, "  symptoms: %s\n", strings.Join(sc.Symptoms, "; "))
		}
	}
	return b.String()
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none known"
	}
	return strings.Join(l, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "unspecified"
	}
	return s
}
