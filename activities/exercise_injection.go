package activities

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// An injection turn, beyond its model and tools: the snapshot it takes first, the number of
// faults it must record and the faults it must not repeat (both told to the model and held by
// record_injected_fault), and, at its end, what it recorded against what was asked.

// SnapshotBeforeInjection saves the lab before the injection turn changes anything, with the
// user's own credential, and records the snapshot on the turn's plan (and so on its exercise).
// It is the one step of injection turns recorded before save points ("save-point"), which
// replay through it: it stops nothing, so a running lab is refused in GNS3's words. A retry
// finds the snapshot an earlier attempt took, by the plan or by its name.
func (a *Activities) SnapshotBeforeInjection(ctx context.Context, in workflows.InjectionSnapshotInput) error {
	ref := in.Turn
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	name, err := a.injectionSnapshotName(ctx, ref)
	if err != nil || name == "" {
		return err
	}
	env, err := a.toolEnv(ctx, ref)
	if err != nil {
		return err
	}
	snap, err := tools.TakeSnapshot(ctx, env, name)
	if err != nil {
		return gns3Refusal(err)
	}
	return a.Exercises.SetSnapshot(ctx, ref.TurnID, snap.SnapshotID, snap.Name, snap.Created())
}

func shortSession(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// injectionBrief tells the model of an injection turn how many faults to inject and which
// faults this user already had on this project, which it must not inject again.
func (a *Activities) injectionBrief(ctx context.Context, ref workflows.WorkRef) string {
	requested := 1
	if plan, err := a.Exercises.Plan(ctx, ref.TurnID); err == nil && plan.Requested > 0 {
		requested = plan.Requested
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n## This exercise\n\nInject exactly %s, each on a different device or link where the lab allows, "+
		"and record every one with record_injected_fault before you answer: a fault that is not recorded does not count, "+
		"and a record beyond %d is refused.\n", plural(requested, "fault"), requested)
	past, err := a.pastFaults(ctx, ref)
	if err != nil {
		a.logger(ctx).Warn("listing the user's past faults", "error", err)
	}
	if len(past) == 0 {
		return b.String()
	}
	b.WriteString("\nFaults this student already had in this project (do not inject any of them again; a repeat is refused):\n")
	if len(past) > maxPastFaultsShown {
		past = past[len(past)-maxPastFaultsShown:]
	}
	for _, f := range past {
		fmt.Fprintf(&b, "- %s\n", describeFault(f.InjectedFault))
	}
	return b.String()
}

// maxPastFaultsShown bounds the list of past faults in the prompt to the most recent.
const maxPastFaultsShown = 20

// describeFault says what a fault was, for the model and the teacher.
func describeFault(f models.InjectedFault) string {
	if f.IsLink() {
		return fmt.Sprintf("the link %s: %s (%s)", f.Device, f.Conditions, f.Description)
	}
	return fmt.Sprintf("%s: %s (%s)", f.Device, strings.Join(f.LinesList(), " / "), f.Description)
}

// pastFaults are the faults of the user's other exercises on the project.
func (a *Activities) pastFaults(ctx context.Context, ref workflows.WorkRef) ([]models.PastFault, error) {
	turn, err := a.Repo.Turn(ctx, ref.TurnID)
	if err != nil {
		return nil, err
	}
	return a.Exercises.PastFaults(ctx, ref.ProjectID, ref.UserID, models.ExerciseID(ref.SessionID, turn.Seq))
}

// faultSignature is what makes two faults the same: the device and its lines, or the link and
// the kinds of its conditions, whatever the case and order.
func faultSignature(f models.InjectedFault) string {
	if f.IsLink() {
		nodes := f.LinkNodeList()
		for i := range nodes {
			nodes[i] = strings.ToLower(nodes[i])
		}
		sort.Strings(nodes)
		kinds := f.ConditionKindList()
		sort.Strings(kinds)
		return "link|" + strings.Join(nodes, "|") + "|" + strings.Join(kinds, ",")
	}
	lines := f.LinesList()
	for i := range lines {
		lines[i] = strings.ToLower(strings.Join(strings.Fields(lines[i]), " "))
	}
	sort.Strings(lines)
	return "device|" + strings.ToLower(f.Device) + "|" + strings.Join(lines, "\n")
}

// admitFault refuses a fault the turn must not record: one more than asked, or one the user
// already had on this project. A retried record of the same call is admitted (it is kept once).
func (a *Activities) admitFault(ctx context.Context, ref workflows.WorkRef, ex *models.Exercise, rec *models.InjectedFault, requested int) error {
	have, err := a.Exercises.Faults(ctx, ex.ID)
	if err != nil {
		return fmt.Errorf("loading the exercise's faults: %w", err)
	}
	if slices.ContainsFunc(have, func(f models.InjectedFault) bool { return f.ToolCallID == rec.ToolCallID }) {
		return nil
	}
	if len(have) >= requested {
		return fmt.Errorf("the exercise asked for %s and %d %s recorded: do not inject more; answer the student", plural(requested, "fault"),
			len(have), map[bool]string{true: "is", false: "are"}[len(have) == 1])
	}
	past, err := a.Exercises.PastFaults(ctx, ref.ProjectID, ref.UserID, ex.ID)
	if err != nil {
		return fmt.Errorf("loading the user's past faults: %w", err)
	}
	sig := faultSignature(*rec)
	for _, p := range append(have, pastOnly(past)...) {
		if faultSignature(p) == sig || (rec.Scenario != "" && p.Scenario == rec.Scenario) {
			return fmt.Errorf("this student already had this fault in this project (%s); undo it on the device and inject a different one", describeFault(p))
		}
	}
	return nil
}

func pastOnly(past []models.PastFault) []models.InjectedFault {
	out := make([]models.InjectedFault, len(past))
	for i, p := range past {
		out[i] = p.InjectedFault
	}
	return out
}

// injectionOutcome tells the student, at the end of an injection turn, how many faults were
// injected against how many were asked for, and keeps the same words on the exercise. A turn
// started without a plan says nothing more.
func (a *Activities) injectionOutcome(ctx context.Context, ref workflows.WorkRef) {
	plan, err := a.Exercises.Plan(ctx, ref.TurnID)
	if err != nil || plan.Requested <= 0 {
		return
	}
	injected := 0
	ex, err := a.Exercises.ByTurn(ctx, ref.TurnID)
	if err == nil {
		injected = ex.Faults
	}
	note := countNote(plan.Requested, injected)
	if ex != nil && injected < plan.Requested {
		if err := a.Exercises.SetNote(ctx, ex.ID, note); err != nil {
			a.logger(ctx).Warn("storing the exercise's note", "error", err)
		}
	}
	a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeContent, SessionID: ref.SessionID, Content: "\n\n" + note})
}

// countNote says plainly how many faults an injection recorded against the number asked for.
func countNote(requested, injected int) string {
	switch {
	case injected == 0:
		return fmt.Sprintf("No fault was injected (%s asked for): there is nothing to find. Ask for an injection again.", plural(requested, "fault"))
	case injected < requested:
		verb := "were"
		if injected == 1 {
			verb = "was"
		}
		return fmt.Sprintf("Only %d of the %d faults asked for %s injected: the exercise has %s.", injected, requested, verb, plural(injected, "fault"))
	case requested == 1:
		return "One fault was injected, as asked."
	}
	return fmt.Sprintf("%d faults were injected, as asked.", injected)
}

// isInjectionMode reports whether a turn injects faults.
func isInjectionMode(mode string) bool { return mode == domain.ModeTroubleshootingInjection }
