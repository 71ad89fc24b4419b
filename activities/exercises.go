package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ExerciseStarter starts an Exercise workflow; starting one that already runs is not an error,
// so a retried tool call starts it once (durable.Temporal).
type ExerciseStarter interface {
	StartExercise(ctx context.Context, in workflows.ExerciseInput) error
}

// faultRecorder binds record_injected_fault to the turn and the call: the fault goes to the
// private table, and the first one of a turn opens its exercise and starts its workflow.
func (a *Activities) faultRecorder(ref workflows.WorkRef, call workflows.ToolCall) tools.FaultRecorder {
	return func(ctx context.Context, f tools.InjectedFault) error {
		if a.Exercises.DB == nil || a.ExerciseStarter == nil {
			return errors.New("exercises are not enabled on this worker")
		}
		// The check runs this command for the student later: the forbidden list applies now.
		if a.Devices.Policy != nil {
			if ok, reason := a.Devices.Policy.Check(f.VerifyCommand); !ok {
				return fmt.Errorf("verify_command is not allowed: %s", reason)
			}
		}
		turn, err := a.Repo.Turn(ctx, ref.TurnID)
		if err != nil {
			return fmt.Errorf("loading the turn: %w", err)
		}
		ttl := a.ExerciseTTL
		if ttl <= 0 {
			ttl = workflows.DefaultExerciseTTL
		}
		ex := &models.Exercise{ID: models.ExerciseID(ref.SessionID, turn.Seq), SessionID: ref.SessionID, TurnID: ref.TurnID,
			Seq: turn.Seq, ProjectID: ref.ProjectID, UserID: ref.UserID, ExpiresAt: time.Now().UTC().Add(ttl), Requested: 1}
		if plan, err := a.Exercises.Plan(ctx, ref.TurnID); err == nil {
			ex.Requested, ex.SnapshotID, ex.SnapshotName, ex.SnapshotAt = plan.Requested, plan.SnapshotID, plan.SnapshotName, plan.SnapshotAt
		}
		hints, err := a.scenarioHints(f)
		if err != nil {
			return err
		}
		rec := faultRecord(call, f)
		rec.Hints, rec.Scenario = models.StringListJSON(hints), f.Scenario
		if err := a.admitFault(ctx, ref, ex, rec, ex.Requested); err != nil {
			return err
		}
		created, err := a.Exercises.RecordFaultWithin(ctx, ex, rec, ex.Requested)
		if errors.Is(err, models.ErrFaultLimit) {
			return fmt.Errorf("the exercise asked for %s and all are recorded: do not inject more; answer the student", plural(ex.Requested, "fault"))
		}
		if err != nil {
			return fmt.Errorf("storing the fault: %w", err)
		}
		// Started also when the row existed: an earlier attempt may have stored it and died
		// before the start.
		if err := a.ExerciseStarter.StartExercise(ctx, workflows.ExerciseInput{ExerciseID: ex.ID, SessionID: ref.SessionID,
			ProjectID: ref.ProjectID, UserID: ref.UserID, TTL: ttl}); err != nil {
			return fmt.Errorf("starting the exercise: %w", err)
		}
		if created {
			a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeExerciseStarted, SessionID: ref.SessionID, TurnID: ref.TurnID,
				Exercise: ex.View()})
		}
		return nil
	}
}

// faultRecord is a fault as the private table keeps it.
func faultRecord(call workflows.ToolCall, f tools.InjectedFault) *models.InjectedFault {
	rec := &models.InjectedFault{ToolCallID: call.ID, NodeID: f.NodeID, Device: f.Device, Lines: models.StringListJSON(f.Lines),
		Description: f.Description, VerifyCommand: f.VerifyCommand, VerifyExpect: f.VerifyExpect, Hints: models.StringListJSON(f.Hints)}
	if l := f.Link; l != nil {
		rec.LinkNodes, rec.LinkID, rec.Conditions = models.StringListJSON([]string{l.NodeA, l.NodeB}), l.LinkID, l.Conditions
		rec.ConditionKinds = models.StringListJSON(l.Kinds)
	}
	return rec
}

// VerifyExercise re-runs every fault's verification command on its device, through the same
// device runner as the chat's tools (console lock, records, audit), with the asking user's
// GNS3 credential.
func (a *Activities) VerifyExercise(ctx context.Context, in workflows.ExerciseVerifyInput) (workflows.ExerciseVerifyResult, error) {
	var out workflows.ExerciseVerifyResult
	faults, err := a.Exercises.Faults(ctx, in.ExerciseID)
	if err != nil {
		return out, fmt.Errorf("loading the exercise's faults: %w", err)
	}
	if len(faults) == 0 {
		return out, temporal.NewNonRetryableApplicationError("the exercise has no recorded fault", domain.ErrTypeExerciseEmpty, nil)
	}
	token, err := a.Credentials.Get(ctx, in.CredentialKey)
	if err != nil {
		return out, credentialsError(err)
	}
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	env := tools.Env{ProjectID: in.ProjectID, GNS3: a.GNS3.WithToken(token), GNS3Host: a.GNS3.Host(), Attempt: attempt(ctx), Topology: a.Live}
	out.Total = len(faults)
	for _, f := range faults {
		if f.IsLink() {
			env.Console = a.console(ctx, workflows.ToolCallRef{WorkRef: workflows.WorkRef{SessionID: in.SessionID,
				TurnID: fmt.Sprintf("%s-check-%d", in.ExerciseID, in.Check), ProjectID: in.ProjectID, UserID: in.UserID,
				Mode: string(tools.TroubleshootingInjection)}, CallID: fmt.Sprintf("verify-%d", f.ID), ToolName: tools.ShowCommandsTool})
			fixed, left, err := linkRepaired(ctx, env, f)
			switch {
			case err != nil:
				out.Problems = append(out.Problems, fmt.Sprintf("the link %s could not be checked: %v", f.Device, err))
			case fixed:
				out.Passed++
			default:
				a.logger(ctx).Debug("a link fault is not repaired yet", "link", f.Device, "conditions", left)
			}
			continue
		}
		// By name first: a restored snapshot gives every node a new id.
		device := f.Device
		if device == "" {
			device = f.NodeID
		}
		args, _ := json.Marshal(map[string]any{"device_configs": []map[string]any{{"device_name": device, "commands": []string{f.VerifyCommand}}}})
		plan, fail := tools.PlanDevices(ctx, env, tools.ShowCommandsTool, args, a.Devices.Policy)
		if fail != nil || len(plan.Jobs) == 0 {
			out.Problems = append(out.Problems, fmt.Sprintf("%s could not be checked: %s", f.Device, planProblem(plan, fail)))
			continue
		}
		job := plan.Jobs[0]
		if len(job.Commands) == 0 {
			out.Problems = append(out.Problems, fmt.Sprintf("%s could not be checked: its verification command is not allowed", f.Device))
			continue
		}
		ref := workflows.ToolCallRef{WorkRef: workflows.WorkRef{SessionID: in.SessionID, TurnID: fmt.Sprintf("%s-check-%d", in.ExerciseID, in.Check),
			ProjectID: in.ProjectID, UserID: in.UserID, Mode: string(tools.TroubleshootingInjection)},
			CallID: fmt.Sprintf("verify-%d", f.ID), ToolName: tools.ShowCommandsTool}
		o := a.deviceRunner(ref).RunDevice(ctx, job)
		if o.Err != "" {
			out.Problems = append(out.Problems, fmt.Sprintf("%s could not be checked: %s", f.Device, o.Err))
			continue
		}
		var output strings.Builder
		for _, r := range o.Results {
			output.WriteString(r.Output)
			output.WriteString("\n")
		}
		if FaultFixed(output.String(), f.VerifyExpect) {
			out.Passed++
		}
	}
	out.Fixed = out.Passed == out.Total
	return out, ctx.Err()
}

// FaultFixed tells whether a verification output shows the repair: the expected text appears,
// ignoring case and runs of spaces (consoles pad their columns).
func FaultFixed(output, expect string) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	e := norm(expect)
	return e != "" && strings.Contains(norm(output), e)
}

func planProblem(plan tools.DevicePlan, fail *tools.Result) string {
	if fail != nil {
		return fail.Error
	}
	for _, f := range plan.Failed {
		return f.Error
	}
	return "the device was not found"
}

// ExerciseHint gives the hint of a level: the faults' hints level by level, vague first, and
// last the device to look at.
func (a *Activities) ExerciseHint(ctx context.Context, in workflows.ExerciseHintInput) (workflows.ExerciseHintResult, error) {
	faults, err := a.Exercises.Faults(ctx, in.ExerciseID)
	if err != nil {
		return workflows.ExerciseHintResult{}, fmt.Errorf("loading the exercise's faults: %w", err)
	}
	hints := ExerciseHints(faults)
	if len(hints) == 0 {
		return workflows.ExerciseHintResult{Hint: "No hints were recorded for this exercise.", Last: true}, nil
	}
	l := min(max(in.Level, 0), len(hints)-1)
	return workflows.ExerciseHintResult{Hint: hints[l], Last: l == len(hints)-1}, nil
}

// ExerciseHints orders an exercise's hints from vague to strong: every fault's first hint,
// then every fault's second, and so on, and finally which devices to look at.
func ExerciseHints(faults []models.InjectedFault) []string {
	var out []string
	lists := make([][]string, len(faults))
	longest := 0
	for i, f := range faults {
		lists[i] = f.HintList()
		longest = max(longest, len(lists[i]))
	}
	for level := range longest {
		for _, l := range lists {
			if level < len(l) {
				out = append(out, l[level])
			}
		}
	}
	var places []string
	for _, f := range faults {
		place := f.Device
		if f.IsLink() {
			place = "the link " + f.Device
		}
		if !slices.Contains(places, place) {
			places = append(places, place)
		}
	}
	if len(places) > 0 {
		out = append(out, "Look closely at "+strings.Join(places, " and ")+".")
	}
	return out
}

// SaveExerciseProgress stores an open exercise's counters and last answer for the page.
func (a *Activities) SaveExerciseProgress(ctx context.Context, in workflows.ExerciseProgressInput) error {
	return a.Exercises.SaveProgress(ctx, in.ExerciseID, in.Checks, in.HintsUsed, in.Message)
}

// FinishExercise stores how the exercise ended.
func (a *Activities) FinishExercise(ctx context.Context, in workflows.ExerciseProgressInput) error {
	if err := a.Exercises.SaveProgress(ctx, in.ExerciseID, in.Checks, in.HintsUsed, in.Message); err != nil {
		return err
	}
	return a.Exercises.Finish(ctx, in.ExerciseID, in.Status, in.Checks, in.HintsUsed)
}

// private reports whether a turn's events and messages are kept from the student.
func private(ref workflows.WorkRef) bool { return tools.IsPrivateMode(ref.Mode) }

// redactEvent strips what an injection turn's events would tell the student: tool arguments,
// results and progress, and the model's own words.
func redactEvent(p relay.Payload) (relay.Payload, bool) {
	switch p.Type {
	case relay.TypeToolProgress:
		return p, false
	case relay.TypeContent:
		return p, false // the fixed sentence is sent once the model's answer is complete
	case relay.TypeReasoning:
		return p, false // it would name the fault; heartbeats keep the stream alive meanwhile
	case relay.TypeToolCall:
		if p.ToolCall != nil {
			tc := *p.ToolCall
			tc.Function.Arguments = "{}"
			p.ToolCall = &tc
		}
	case relay.TypeToolEnd:
		p.ToolOutput = models.HiddenToolResult
	}
	return p, true
}

// publishTurn publishes an event of a turn, redacted when the turn is private.
func (a *Activities) publishTurn(ctx context.Context, ref workflows.WorkRef, p relay.Payload) {
	if private(ref) {
		var keep bool
		if p, keep = redactEvent(p); !keep {
			return
		}
	}
	a.publish(ctx, ref.TurnID, p)
}

// recipesSection offers the skills' injection recipes to the injection prompt.
func recipesSection(recipes []skills.Recipe) string {
	if len(recipes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n## Fault recipes you may use\n\nPick one whose platforms include the device's.\n")
	for _, r := range recipes {
		fmt.Fprintf(&b, "\n- %s (%s): %s\n  commands: %s\n  verify: `%s` shows %q\n", r.Name, strings.Join(r.Platforms, ", "),
			r.Description, strings.Join(r.Commands, " / "), r.Verify.Command, r.Verify.Expect)
	}
	return b.String()
}
