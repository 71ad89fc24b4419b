package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/vocab"
)

// ChatTurn answers one user message: it calls the model, runs the tools it asks for, feeds their
// results back, and repeats until the model answers in words or the step limit is reached. It
// always ends by finalizing the turn, also when cancelled or failed, so nothing the user saw is
// lost and the client always gets exactly one terminal event.
func ChatTurn(ctx workflow.Context, in ChatTurnInput) (ChatTurnResult, error) {
	maxSteps := in.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	ref := TurnRef{SessionID: in.SessionID, TurnID: in.TurnID, ProjectID: in.ProjectID, UserID: in.UserID, Mode: in.Mode}

	llmCtx := workflow.WithActivityOptions(ctx, llmOptions())
	toolCtx := workflow.WithActivityOptions(ctx, toolOptions())
	recordCtx := workflow.WithActivityOptions(ctx, toolFailureOptions())

	// Turns recorded before approvals existed replay without them.
	approvals := workflow.GetVersion(ctx, "approvals", workflow.DefaultVersion, 1) >= 1 && in.Approval != ""
	gate, err := newApprovalGate(ctx, ref)
	if err != nil {
		return ChatTurnResult{}, err
	}
	// A lean turn (every turn since "lean-turn") starts renewing its credential only when it
	// first runs a tool, so a turn that only talks costs no timer, and generates its title
	// inside the finalizer: one activity and one workflow task fewer per turn.
	lean := workflow.GetVersion(ctx, "lean-turn", workflow.DefaultVersion, 1) >= 1
	// Every turn since "local-model-finalize" calls its model and finalizes as local activities:
	// inside the worker's own workflow task, so its first model call starts as soon as the
	// (eager) start hands the worker that task, and a turn that only talks costs the Temporal
	// server a start and one more write. A crash mid-call fails the workflow task; its retry runs
	// the call again (LLMCall then tells the client to drop the partial text).
	local := lean && workflow.GetVersion(ctx, "local-model-finalize", workflow.DefaultVersion, 1) >= 1
	stopRenewing := func() {}
	renewing := false
	startRenewing := func() {
		if !approvals || renewing {
			return
		}
		renewing = true
		var rctx workflow.Context
		rctx, stopRenewing = workflow.WithCancel(ctx)
		// The first renewal is due when it always was: half the credential's lifetime after
		// the turn started.
		first := in.CredentialTTL / 2
		if lean {
			first -= workflow.Now(ctx).Sub(workflow.GetInfo(ctx).WorkflowStartTime)
		}
		keepCredentialFrom(rctx, ref, in.CredentialTTL, first)
	}
	if !lean {
		startRenewing()
	}

	res := ChatTurnResult{Status: vocab.TurnCompleted}
	var inTokens, outTokens int64
	idx := 1 // 0 is the user message, stored when the turn was created

loop:
	for step := 1; step <= maxSteps; step++ {
		res.Steps = step
		var llm LLMResult
		err := inTurn(llmCtx, local, llmSummary(step, in.Model, step == maxSteps), LLMActivity, LLMInput{
			Turn: ref, Step: step, MessageIndex: idx, NoTools: step == maxSteps,
		}).Get(ctx, &llm)
		// A call counts even if it did not finish (its tokens are then unknown).
		res.LLMCalls++
		if err != nil {
			if isCancel(ctx, err) {
				res.Status = vocab.TurnCancelled
			} else {
				res.Status, res.Error = vocab.TurnFailed, failureMessage(err)
			}
			break
		}
		idx++
		inTokens += llm.InputTokens
		outTokens += llm.OutputTokens
		if len(llm.ToolCalls) == 0 {
			break
		}

		startRenewing()
		// Parallel tool calls run concurrently; each result has a fixed slot in the transcript.
		futures := make([]workflow.Future, len(llm.ToolCalls))
		for i, call := range llm.ToolCalls {
			if approvals && (vocab.IsConfigJobTool(call.Name) || vocab.IsDestructiveTool(call.Name)) && in.SearchAttributes {
				if err := workflow.UpsertTypedSearchAttributes(ctx, temporal.NewSearchAttributeKeyKeyword(SearchAttrToolName).ValueSet(call.Name)); err != nil {
					workflow.GetLogger(ctx).Warn("setting the ToolName search attribute", "error", err)
				}
			}
			switch routeTool(approvals, in.Approval, ref.Mode, call.Name) {
			case routeConfigJob:
				copts := workflow.ChildWorkflowOptions{WorkflowID: ConfigJobID(ref.TurnID, call.ID), WaitForCancellation: true,
					StaticSummary: clipSummary("configuration job " + toolSummary(call))}
				if in.SearchAttributes {
					copts.TypedSearchAttributes = jobSearchAttributes(ref, call.Name)
				}
				cctx := workflow.WithChildOptions(ctx, copts)
				futures[i] = workflow.ExecuteChildWorkflow(cctx, ConfigJobWorkflow, ConfigJobInput{
					Turn: ref, Call: call, MessageIndex: idx + i, Approval: in.Approval,
					ApprovalTimeout: in.ApprovalTimeout, DeviceConcurrency: in.DeviceConcurrency, Standing: gate.standing,
				})
			case routeApproved:
				f, settable := workflow.NewFuture(ctx)
				slot := idx + i
				workflow.Go(ctx, func(gctx workflow.Context) {
					settable.Set(nil, runApprovedTool(gctx, toolCtx, recordCtx, gate, ref, call, slot, in.ApprovalTimeout))
				})
				futures[i] = f
			case routeDevices:
				f, settable := workflow.NewFuture(ctx)
				slot := idx + i
				workflow.Go(ctx, func(gctx workflow.Context) {
					settable.Set(nil, runDeviceTool(gctx, toolCtx, ref, call, slot, in.DeviceConcurrency))
				})
				futures[i] = f
			default:
				futures[i] = workflow.ExecuteActivity(summarized(toolCtx, toolSummary(call)), ToolActivity, ToolInput{Turn: ref, Call: call, MessageIndex: idx + i})
			}
		}
		cancelled := false
		for i, f := range futures {
			// A configuration job's result carries its approval: an "approve all" given there
			// decides the turn's later approvals.
			var tr struct{ Approval ApprovalOutcome }
			err := f.Get(ctx, &tr)
			if err == nil {
				gate.stand(tr.Approval)
				continue
			}
			if isCancel(ctx, err) {
				cancelled = true
				continue
			}
			// The model gets the failure as the tool's result and can react to it; the turn goes on.
			if ferr := workflow.ExecuteActivity(summarized(recordCtx, fmt.Sprintf("%s failed: storing its error as the result", llm.ToolCalls[i].Name)), ToolFailedActivity, ToolFailureInput{
				Turn: ref, Call: llm.ToolCalls[i], MessageIndex: idx + i, Error: failureMessage(err),
			}).Get(ctx, nil); ferr != nil {
				if isCancel(ctx, ferr) {
					cancelled = true
					continue
				}
				res.Status, res.Error = vocab.TurnFailed, failureMessage(ferr)
				break loop
			}
		}
		idx += len(llm.ToolCalls)
		if cancelled || ctx.Err() != nil {
			res.Status = vocab.TurnCancelled
			break
		}
	}

	stopRenewing() // the finalizer removes the credential

	// Finishing work must run even when the turn was cancelled.
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, finalizeOptions())
	if lean {
		var fin FinalizeResult
		title := res.Status == vocab.TurnCompleted
		what := "finish the turn"
		if title {
			what = "finish the turn and name a new session"
		}
		err = inTurn(fctx, local, fmt.Sprintf("%s: %s, %s, %d tokens", what, res.Status, plural(res.Steps, "step"), inTokens+outTokens), FinalizeActivity, FinalizeInput{
			Turn: ref, Status: res.Status, Error: res.Error, LLMCalls: res.LLMCalls,
			InputTokens: inTokens, OutputTokens: outTokens, GenerateTitle: title,
		}).Get(fctx, &fin)
		if err != nil {
			return res, fmt.Errorf("finalizing turn: %w", err)
		}
		if fin.TitleCalled {
			res.LLMCalls++
		}
		return res, nil
	}
	var title TitleResult
	if res.Status == vocab.TurnCompleted {
		tctx := workflow.WithActivityOptions(fctx, titleOptions())
		// A title is a nicety: if it cannot be made the session keeps its first-message title.
		if err := workflow.ExecuteActivity(summarized(tctx, "session title"), TitleActivity, TitleInput{Turn: ref}).Get(fctx, &title); err != nil {
			workflow.GetLogger(ctx).Warn("title generation failed", "error", err)
			title = TitleResult{}
		}
		if title.Called {
			res.LLMCalls++
			inTokens += title.InputTokens
			outTokens += title.OutputTokens
		}
	}
	err = workflow.ExecuteActivity(summarized(fctx, fmt.Sprintf("finish the turn: %s, %s, %d tokens", res.Status, plural(res.Steps, "step"), inTokens+outTokens)), FinalizeActivity, FinalizeInput{
		Turn: ref, Status: res.Status, Error: res.Error, LLMCalls: res.LLMCalls,
		InputTokens: inTokens, OutputTokens: outTokens, Title: title.Title,
	}).Get(fctx, nil)
	if err != nil {
		return res, fmt.Errorf("finalizing turn: %w", err)
	}
	return res, nil
}

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
	case approvals && vocab.IsConfigJobTool(tool):
		return routeConfigJob
	case approvals && approval == vocab.ApprovalChanges && vocab.IsDestructiveTool(tool) && mode == vocab.ModeLabAutomation:
		return routeApproved
	case vocab.IsDeviceTool(tool):
		return routeDevices
	}
	return routeActivity
}

// runApprovedTool asks the owner before a destructive lab tool runs; a refusal (or silence)
// becomes the tool's result, with the owner's comment, so the model can answer it.
func runApprovedTool(ctx, toolCtx, recordCtx workflow.Context, gate *approvalGate, ref TurnRef, call ToolCall, slot int, timeout time.Duration) error {
	out, err := gate.ask(ctx, ApprovalRequest{Call: call, Kind: vocab.ApprovalKindDestructive, MessageIndex: slot}, timeout)
	if err != nil {
		return err
	}
	if !out.Approved() {
		return workflow.ExecuteActivity(summarized(recordCtx, fmt.Sprintf("%s not run: approval %s", call.Name, out.Status)), ToolFailedActivity, ToolFailureInput{
			Turn: ref, Call: call, MessageIndex: slot, Error: RejectionMessage(out),
		}).Get(ctx, nil)
	}
	return workflow.ExecuteActivity(summarized(toolCtx, toolSummary(call)), ToolActivity, ToolInput{Turn: ref, Call: call, MessageIndex: slot}).Get(ctx, nil)
}

// runDeviceTool runs a device tool as one activity per device, a bounded number at a time, so
// fifty devices take about as long as the slowest one and a crash repeats no device's work.
// The call's result is stored even when the turn is cancelled half-way.
func runDeviceTool(ctx, toolCtx workflow.Context, ref TurnRef, call ToolCall, slot, concurrency int) error {
	var planned DevicePlanResult
	if err := workflow.ExecuteActivity(summarized(toolCtx, fmt.Sprintf("plan %s", toolSummary(call))), DevicePlanActivity, ToolInput{Turn: ref, Call: call, MessageIndex: slot}).Get(ctx, &planned); err != nil {
		return err
	}
	if planned.Done {
		return nil
	}
	return runPlannedDevices(ctx, ref, call, slot, planned.Plan, concurrency)
}

// runPlannedDevices applies a validated plan and stores the call's aggregated result.
func runPlannedDevices(ctx workflow.Context, ref TurnRef, call ToolCall, slot int, plan vocab.DevicePlan, concurrency int) error {
	errs, cancelErr := applyDevices(ctx, ToolCallRef{TurnRef: ref, CallID: call.ID, ToolName: call.Name}, plan, concurrency)
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, deviceFinishOptions())
	if err := workflow.ExecuteActivity(summarized(fctx, fmt.Sprintf("%s result: %s", call.Name, planDevices(plan))), DeviceFinishActivity, DeviceFinishInput{
		Turn: ref, Call: call, MessageIndex: slot, Plan: plan, Errors: errs,
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
func applyDevices(ctx workflow.Context, ref ToolCallRef, plan vocab.DevicePlan, concurrency int) (map[string]string, error) {
	errs := map[string]string{}
	var cancelErr error
	notRun := forEachDevice(ctx, plan, concurrency, func(gctx workflow.Context, job vocab.DeviceJob) {
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

func isCancel(ctx workflow.Context, err error) bool {
	var ce *temporal.CanceledError
	var ae *temporal.ApplicationError
	return errors.As(err, &ce) || errors.Is(ctx.Err(), workflow.ErrCanceled) ||
		(errors.As(err, &ae) && ae.Type() == vocab.ErrTypeTurnAborted)
}

// failureMessage extracts the innermost application message, which is the one written for people.
func failureMessage(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return "the operation timed out (" + te.TimeoutType().String() + ")"
	}
	return err.Error()
}
