package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// toolRoute is how a tool call runs, in a chat turn and in an MCP call alike.
type toolRoute int

const (
	routeActivity  toolRoute = iota // one ToolActivity
	routeConfigJob                  // a ConfigJob child: plan, approval, read before and after
	routeApproved                   // a destructive lab tool behind the owner's approval
	routeDevices                    // a device tool fanned out per device
)

// routeTool chooses a tool call's route. approvals says the caller runs with approvals (and,
// for a turn, was started after they existed); approval is the operator's setting.
func routeTool(approvals bool, approval, mode, tool string) toolRoute {
	switch {
	case approvals && domain.IsConfigJobTool(tool):
		return routeConfigJob
	case approvals && approval == domain.ApprovalChanges && domain.IsDestructiveTool(tool) && mode == domain.ModeLabAutomation:
		return routeApproved
	case domain.IsDeviceTool(tool):
		return routeDevices
	}
	return routeActivity
}

// toolSettings say how a chat turn or an MCP call runs its tool calls.
type toolSettings struct {
	ref WorkRef
	// approvals says the work runs with approvals; approval and approvalTimeout are the
	// operator's settings.
	approvals       bool
	approval        string
	approvalTimeout time.Duration
	// deviceConcurrency bounds the devices one call talks to at once (0: the default).
	deviceConcurrency int
	// searchAttributes says the cluster knows the copilot's search attributes, so a
	// configuration job may carry them.
	searchAttributes bool
}

// toolRunner runs the tool calls of one chat turn or one MCP call: the same routes, activity
// options and summaries for both, so a call behaves alike whichever door it came through.
type toolRunner struct {
	toolSettings
	gate *approvalGate
	// toolCtx carries the tools' activity options, recordCtx those of storing a failed or
	// refused call's result.
	toolCtx, recordCtx workflow.Context
}

func newToolRunner(ctx workflow.Context, gate *approvalGate, settings toolSettings) *toolRunner {
	return &toolRunner{toolSettings: settings, gate: gate,
		toolCtx:   workflow.WithActivityOptions(ctx, toolOptions()),
		recordCtx: workflow.WithActivityOptions(ctx, toolFailureOptions())}
}

// start begins a tool call whose result goes to transcript slot and returns its future, so a
// turn's parallel calls run at once. A configuration job's future holds its ConfigJobResult.
// A plain activity and a configuration job are scheduled before start returns; the routes that
// take several steps run in a coroutine of their own.
func (r *toolRunner) start(ctx workflow.Context, call ToolCall, slot int) workflow.Future {
	if call.Name == domain.CreateSnapshotTool && savePoints(ctx) {
		return r.inCoroutine(ctx, func(gctx workflow.Context) error { return r.savePoint(gctx, call, slot) })
	}
	switch routeTool(r.approvals, r.approval, r.ref.Mode, call.Name) {
	case routeConfigJob:
		return r.configJob(ctx, call, slot)
	case routeActivity:
		return r.activity(ctx, call, slot)
	}
	return r.inCoroutine(ctx, func(gctx workflow.Context) error { return r.run(gctx, call, slot) })
}

// inCoroutine runs fn in a coroutine of its own and returns its future.
func (r *toolRunner) inCoroutine(ctx workflow.Context, fn func(workflow.Context) error) workflow.Future {
	f, settable := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(gctx workflow.Context) {
		settable.Set(nil, fn(gctx))
	})
	return f
}

// run runs a tool call to its end in the calling coroutine.
func (r *toolRunner) run(ctx workflow.Context, call ToolCall, slot int) error {
	if call.Name == domain.CreateSnapshotTool && savePoints(ctx) {
		return r.savePoint(ctx, call, slot)
	}
	switch routeTool(r.approvals, r.approval, r.ref.Mode, call.Name) {
	case routeConfigJob:
		return r.configJob(ctx, call, slot).Get(ctx, nil)
	case routeApproved:
		return r.approved(ctx, call, slot)
	case routeDevices:
		return r.devices(ctx, call, slot)
	}
	return r.activity(ctx, call, slot).Get(ctx, nil)
}

func (r *toolRunner) activity(ctx workflow.Context, call ToolCall, slot int) workflow.Future {
	return workflow.ExecuteActivity(summarized(r.toolCtx, toolSummary(call)), ToolActivity, ToolInput{Turn: r.ref, Call: call, MessageIndex: slot})
}

// configJob starts the call's ConfigJob child. A standing "approve all" given earlier in the
// turn decides the job's approval.
func (r *toolRunner) configJob(ctx workflow.Context, call ToolCall, slot int) workflow.ChildWorkflowFuture {
	copts := workflow.ChildWorkflowOptions{WorkflowID: ConfigJobID(r.ref.TurnID, call.ID), WaitForCancellation: true,
		StaticSummary: clipSummary("configuration job " + toolSummary(call))}
	if r.searchAttributes {
		copts.TypedSearchAttributes = jobSearchAttributes(r.ref, call.Name)
	}
	return workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, copts), ConfigJobWorkflow, ConfigJobInput{
		Turn: r.ref, Call: call, MessageIndex: slot, Approval: r.approval,
		ApprovalTimeout: r.approvalTimeout, DeviceConcurrency: r.deviceConcurrency, Standing: r.gate.standing,
	})
}

// approved asks the owner before a destructive lab tool runs, once its check found that it can
// run as asked; a refusal (or silence) becomes the tool's result, with the owner's comment, so
// the model can answer it.
func (r *toolRunner) approved(ctx workflow.Context, call ToolCall, slot int) error {
	if refused, err := r.refusedBeforeAsking(ctx, call, slot); err != nil || refused {
		return err
	}
	out, err := r.gate.ask(ctx, ApprovalRequest{Call: call, Kind: domain.ApprovalKindDestructive, MessageIndex: slot}, r.approvalTimeout)
	if err != nil {
		return err
	}
	if !out.Approved() {
		return workflow.ExecuteActivity(summarized(r.recordCtx, fmt.Sprintf("%s not run: approval %s", call.Name, out.Status)), ToolFailedActivity, ToolFailureInput{
			Turn: r.ref, Call: call, MessageIndex: slot, Error: RejectionMessage(out),
		}).Get(ctx, nil)
	}
	return r.activity(ctx, call, slot).Get(ctx, nil)
}

// devices runs a device tool as one activity per device, a bounded number at a time, so fifty
// devices take about as long as the slowest one and a crash repeats no device's work. The
// call's result is stored even when the work is cancelled half-way.
func (r *toolRunner) devices(ctx workflow.Context, call ToolCall, slot int) error {
	var planned DevicePlanResult
	if err := workflow.ExecuteActivity(summarized(r.toolCtx, fmt.Sprintf("plan %s", toolSummary(call))), DevicePlanActivity, ToolInput{Turn: r.ref, Call: call, MessageIndex: slot}).Get(ctx, &planned); err != nil {
		return err
	}
	if planned.Done {
		return nil
	}
	return runPlannedDevices(ctx, r.ref, call, slot, planned.Plan, r.deviceConcurrency)
}

// recordFailure stores a call whose run failed for good as the call's result, so the model
// still gets one and can react to it.
func (r *toolRunner) recordFailure(ctx workflow.Context, call ToolCall, slot int, err error) error {
	return workflow.ExecuteActivity(summarized(r.recordCtx, fmt.Sprintf("%s failed: storing its error as the result", call.Name)), ToolFailedActivity, ToolFailureInput{
		Turn: r.ref, Call: call, MessageIndex: slot, Error: failureMessage(err),
	}).Get(ctx, nil)
}

// runPlannedDevices applies a validated plan and stores the call's aggregated result.
func runPlannedDevices(ctx workflow.Context, ref WorkRef, call ToolCall, slot int, plan domain.DevicePlan, concurrency int) error {
	cref := ToolCallRef{WorkRef: ref, CallID: call.ID, ToolName: call.Name}
	errs, cancelErr := applyDevices(ctx, cref, plan, concurrency)
	var waits map[string][]domain.WaitOutcome
	if cancelErr == nil && ctx.Err() == nil {
		waits = waitForChecks(ctx, cref, plan, errs, concurrency)
	}
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, deviceFinishOptions())
	if err := workflow.ExecuteActivity(summarized(fctx, fmt.Sprintf("%s result: %s", call.Name, planDevices(plan))), DeviceFinishActivity, DeviceFinishInput{
		Turn: ref, Call: call, MessageIndex: slot, Plan: plan, Errors: errs, Waits: waits,
	}).Get(fctx, nil); err != nil {
		return err
	}
	if cancelErr == nil && ctx.Err() != nil {
		cancelErr = ctx.Err()
	}
	return cancelErr
}

// applyDevices runs every device's job, one activity per device and a bounded number at once.
// It returns the devices whose activity failed for good, and the cancellation if one stopped it.
func applyDevices(ctx workflow.Context, ref ToolCallRef, plan domain.DevicePlan, concurrency int) (map[string]string, error) {
	errs := map[string]string{}
	var cancelErr error
	notRun := forEachDevice(ctx, plan, concurrency, func(gctx workflow.Context, job domain.DeviceJob) {
		opts := deviceOptions(deviceTimeout(job))
		opts.Summary = clipSummary(deviceSummary(job))
		dctx := workflow.WithActivityOptions(gctx, opts)
		if err := workflow.ExecuteActivity(dctx, DeviceRunActivity, DeviceInput{Turn: ref, Job: job}).Get(gctx, nil); err != nil {
			if isCancel(gctx, err) {
				cancelErr = err
			}
			errs[job.NodeID] = failureMessage(err)
		}
	})
	for _, job := range notRun {
		errs[job.NodeID] = "not run: the turn was cancelled"
	}
	return errs, cancelErr
}
