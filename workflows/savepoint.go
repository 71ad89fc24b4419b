package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// A save point is a GNS3 snapshot of a running lab. GNS3 takes a snapshot only of a stopped
// project, so the nodes that run are saved on their consoles, stopped, snapshotted and started
// again. Each part is a step of the workflow, so the list of nodes that ran is in the history
// before any node stops: a worker that dies between the stop and the start leaves a workflow
// that starts them again (the pause's own retries, then ResumeSavePointActivity in a
// disconnected context, which even a cancelled turn runs).
//
// create_gns3_snapshot takes this path in chat turns and MCP calls, behind an approval when it
// must pause nodes under domain.ApprovalChanges; an injection turn takes it for the exercise's
// own starting point, without asking. Workflows recorded before it took the snapshot in one
// activity and replay so (savePointChange).
const (
	// PlanSavePointActivity checks the call and lists the running nodes; a call it can answer
	// at once (refused, or nothing runs) it answers.
	PlanSavePointActivity = "PlanSavePoint"
	// SaveDevicesActivity saves each running node's configuration on its console.
	SaveDevicesActivity = "SaveDevicesForSavePoint"
	// PauseSavePointActivity stops the nodes, takes the snapshot, starts them again and waits
	// until their consoles answer.
	PauseSavePointActivity = "PauseForSavePoint"
	// ResumeSavePointActivity starts again what a pause that failed for good left stopped.
	ResumeSavePointActivity = "ResumeAfterSavePoint"
	// FinishSavePointActivity gives the call its result (or records an injection's snapshot).
	FinishSavePointActivity = "FinishSavePoint"
	// InjectionSavePointCallID names an injection turn's own save point among its tool calls.
	InjectionSavePointCallID = "injection_save_point"
	// savePointChange is the GetVersion id of save points.
	savePointChange = "save-point"
)

// SavePointInput is one step of a save point.
type SavePointInput struct {
	Turn WorkRef
	// Call is the create_gns3_snapshot call (an injection's: InjectionSavePointCallID).
	Call         ToolCall
	MessageIndex int
	// Injection is an injection turn's starting point: its name is the exercise's, its
	// snapshot is recorded on the turn's plan, and nobody is asked.
	Injection bool `json:",omitempty"`
	// Name and Running are the plan's: the snapshot's name and the nodes that ran.
	Name    string                 `json:",omitempty"`
	Running []domain.SavePointNode `json:",omitempty"`
}

// SavePointPlan is what PlanSavePointActivity found.
type SavePointPlan struct {
	// Done: the call is answered already (refused, or no node runs and the snapshot is taken).
	Done    bool
	Name    string
	Running []domain.SavePointNode
}

// SavePointSaved says whether every running node's configuration that can be saved was;
// Refused says, for people, why nothing is paused.
type SavePointSaved struct {
	Refused string `json:",omitempty"`
}

// SavePointPaused is how the pause went: the snapshot taken (or why not), how long the lab was
// paused and what each part took, and the nodes that did not come back.
type SavePointPaused struct {
	SnapshotID string `json:",omitempty"`
	// CreatedAt is the snapshot's time, Unix seconds as GNS3 lists it.
	CreatedAt int64  `json:",omitempty"`
	Refused   string `json:",omitempty"`
	// PausedMS is from the first stop to the last console answering; StopMS, SnapshotMS, StartMS
	// and ConsoleMS are its parts.
	PausedMS, StopMS, SnapshotMS, StartMS, ConsoleMS int64 `json:",omitempty"`
	// NotBack says, per node that did not run again or whose console did not answer, why.
	NotBack map[string]string `json:",omitempty"`
}

// SavePointResumed is what a resume after a failed pause brought back.
type SavePointResumed struct {
	NotBack map[string]string `json:",omitempty"`
}

// SavePointFinish gives the save point its answer from what each step said.
type SavePointFinish struct {
	SavePointInput
	Saved   *SavePointSaved   `json:",omitempty"`
	Paused  *SavePointPaused  `json:",omitempty"`
	Resumed *SavePointResumed `json:",omitempty"`
	// Failure is a step that failed for good, in words.
	Failure string `json:",omitempty"`
}

// SavePointResult says whether the snapshot was taken, in words.
type SavePointResult struct {
	Taken   bool
	Message string
}

// savePoints reports whether this workflow takes snapshots as save points.
func savePoints(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, savePointChange, workflow.DefaultVersion, 1) >= 1
}

// savePoint runs a create_gns3_snapshot call as a save point: plan, the approval when it must
// pause nodes (lab automation under ApprovalChanges), then the pause.
func (r *toolRunner) savePoint(ctx workflow.Context, call ToolCall, slot int) error {
	in := SavePointInput{Turn: r.ref, Call: call, MessageIndex: slot}
	var plan SavePointPlan
	if err := workflow.ExecuteActivity(summarized(r.toolCtx, "plan "+toolSummary(call)), PlanSavePointActivity, in).Get(ctx, &plan); err != nil {
		return err
	}
	if plan.Done {
		return nil
	}
	in.Name, in.Running = plan.Name, plan.Running
	if r.approvals && r.approval == domain.ApprovalChanges && r.ref.Mode == domain.ModeLabAutomation {
		out, err := r.gate.ask(ctx, ApprovalRequest{Call: call, Kind: domain.ApprovalKindDestructive, MessageIndex: slot}, r.approvalTimeout)
		if err != nil {
			return err
		}
		if !out.Approved() {
			return workflow.ExecuteActivity(summarized(r.recordCtx, fmt.Sprintf("%s not run: approval %s", call.Name, out.Status)), ToolFailedActivity, ToolFailureInput{
				Turn: r.ref, Call: call, MessageIndex: slot, Error: RejectionMessage(out) + " Nothing was saved and nothing was paused.",
			}).Get(ctx, nil)
		}
	}
	_, err := runSavePoint(ctx, in)
	return err
}

// injectionSavePoint saves an injection turn's lab before the model may change it. It returns
// why it could not, in words ("" when the snapshot is taken).
func injectionSavePoint(ctx workflow.Context, ref WorkRef) (string, error) {
	in := SavePointInput{Turn: ref, Call: ToolCall{ID: InjectionSavePointCallID, Name: domain.CreateSnapshotTool}, Injection: true}
	var plan SavePointPlan
	pctx := workflow.WithActivityOptions(ctx, toolOptions())
	if err := workflow.ExecuteActivity(summarized(pctx, "plan the save point before the injection"), PlanSavePointActivity, in).Get(ctx, &plan); err != nil {
		return "", err
	}
	if plan.Done {
		return "", nil
	}
	in.Name, in.Running = plan.Name, plan.Running
	res, err := runSavePoint(ctx, in)
	if err != nil {
		return "", err
	}
	if !res.Taken {
		return res.Message, nil
	}
	return "", nil
}

// runSavePoint saves the devices, pauses the lab for the snapshot and answers. A pause that
// failed for good (its attempts used up, the turn cancelled) is followed by a resume that
// starts again every node that ran, whatever became of the turn. The error is a cancellation,
// or the answer's own failure.
func runSavePoint(ctx workflow.Context, in SavePointInput) (SavePointResult, error) {
	fin := SavePointFinish{SavePointInput: in}
	what := fmt.Sprintf("%q: %d running node(s)", in.Name, len(in.Running))
	var stepErr error
	var saved SavePointSaved
	sctx := workflow.WithActivityOptions(ctx, saveDevicesOptions())
	if err := workflow.ExecuteActivity(summarized(sctx, "save the running configurations for snapshot "+what), SaveDevicesActivity, in).Get(ctx, &saved); err != nil {
		stepErr, fin.Failure = err, "Nothing was paused: the devices' configurations could not be saved first: "+failureMessage(err)
	} else {
		fin.Saved = &saved
	}
	if stepErr == nil && saved.Refused == "" {
		var paused SavePointPaused
		pctx := workflow.WithActivityOptions(ctx, pauseOptions())
		if err := workflow.ExecuteActivity(summarized(pctx, "pause the lab for snapshot "+what), PauseSavePointActivity, in).Get(ctx, &paused); err != nil {
			stepErr, fin.Failure = err, "The snapshot could not be taken: "+failureMessage(err)
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			dctx = workflow.WithActivityOptions(dctx, resumeOptions())
			var resumed SavePointResumed
			if rerr := workflow.ExecuteActivity(summarized(dctx, "start again the nodes the pause stopped"), ResumeSavePointActivity, in).Get(dctx, &resumed); rerr != nil {
				resumed.NotBack = map[string]string{}
				for _, n := range in.Running {
					resumed.NotBack[n.Name] = "it may still be stopped: starting it again failed (" + failureMessage(rerr) + "); start it with start_gns3_node"
				}
			}
			fin.Resumed = &resumed
		} else {
			fin.Paused = &paused
		}
	}
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, deviceFinishOptions())
	var res SavePointResult
	if err := workflow.ExecuteActivity(summarized(fctx, "answer snapshot "+what), FinishSavePointActivity, fin).Get(fctx, &res); err != nil {
		return res, err
	}
	if stepErr != nil && isCancel(ctx, stepErr) {
		return res, stepErr
	}
	return res, nil
}

// saveDevicesOptions: saving is one command per device, all at once; a busy console waits for
// its lock.
func saveDevicesOptions() workflow.ActivityOptions {
	return heartbeating(10*time.Minute, temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{domain.ErrTypeNoCredentials, domain.ErrTypeTurnAborted},
	})
}

// pauseOptions: stopping, the snapshot, starting and the consoles (a router may take minutes to
// boot). A crashed attempt is retried within seconds (the heartbeat), and more often than a
// tool: each retry starts again what the pause stopped.
func pauseOptions() workflow.ActivityOptions {
	return heartbeating(20*time.Minute, temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 20 * time.Second, MaximumAttempts: 5,
		NonRetryableErrorTypes: []string{domain.ErrTypeNoCredentials},
	})
}

// resumeOptions: the last word on a lab a pause left stopped, so it is retried for longer; a
// credential that is gone cannot come back.
func resumeOptions() workflow.ActivityOptions {
	return heartbeating(20*time.Minute, temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 20,
		NonRetryableErrorTypes: []string{domain.ErrTypeNoCredentials},
	})
}

// SavePointID names a save point's row: the turn (or MCP call) and its tool call.
func SavePointID(turnID, callID string) string {
	return strings.Join([]string{turnID, callID}, "/")
}
