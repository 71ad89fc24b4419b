package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
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
	ref := WorkRef{SessionID: in.SessionID, TurnID: in.TurnID, ProjectID: in.ProjectID, UserID: in.UserID, Mode: in.Mode}

	llmCtx := workflow.WithActivityOptions(ctx, llmOptions())

	// Turns recorded before approvals existed replay without them; injection turns run without.
	approvals := workflow.GetVersion(ctx, "approvals", workflow.DefaultVersion, 1) >= 1 && in.Approval != "" && !in.SkipApproval
	gate, err := newApprovalGate(ctx, ref)
	if err != nil {
		return ChatTurnResult{}, err
	}
	tools := newToolRunner(ctx, gate, toolSettings{ref: ref, approvals: approvals, approval: in.Approval, approvalTimeout: in.ApprovalTimeout,
		deviceConcurrency: in.DeviceConcurrency, searchAttributes: in.SearchAttributes})
	// Every turn since "lean-turn" starts renewing its credential only when it first runs a
	// tool, so a turn that only talks costs no timer, and names a new session inside the
	// finalizer: one activity and one workflow task fewer per turn.
	renewOnFirstTool := workflow.GetVersion(ctx, "lean-turn", workflow.DefaultVersion, 1) >= 1
	titleInFinalizer := renewOnFirstTool
	// Every turn since "local-model-finalize" calls its model and finalizes as local activities:
	// inside the worker's own workflow task, so its first model call starts as soon as the
	// (eager) start hands the worker that task, and a turn that only talks costs the Temporal
	// server a start and one more write. A crash mid-call fails the workflow task; its retry runs
	// the call again (LLMCall then tells the client to drop the partial text).
	stepsAsLocalActivities := titleInFinalizer && workflow.GetVersion(ctx, "local-model-finalize", workflow.DefaultVersion, 1) >= 1
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
		if renewOnFirstTool {
			first -= workflow.Now(ctx).Sub(workflow.GetInfo(ctx).WorkflowStartTime)
		}
		keepCredentialFrom(rctx, ref, in.CredentialTTL, first)
	}
	if !renewOnFirstTool {
		startRenewing()
	}

	res := ChatTurnResult{Status: domain.TurnCompleted}
	var inTokens, outTokens int64
	idx := 1 // 0 is the user message, stored when the turn was created

loop:
	for step := 1; step <= maxSteps; step++ {
		res.Steps = step
		var llm LLMResult
		err := runStep(llmCtx, stepsAsLocalActivities, llmSummary(step, in.Model, step == maxSteps), LLMActivity, LLMInput{
			Turn: ref, Step: step, MessageIndex: idx, NoTools: step == maxSteps,
		}).Get(ctx, &llm)
		// A call counts even if it did not finish (its tokens are then unknown).
		res.LLMCalls++
		if err != nil {
			if isCancel(ctx, err) {
				res.Status = domain.TurnCancelled
			} else {
				res.Status, res.Error = domain.TurnFailed, failureMessage(err)
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
			if approvals && (domain.IsConfigJobTool(call.Name) || domain.IsDestructiveTool(call.Name)) && in.SearchAttributes {
				if err := workflow.UpsertTypedSearchAttributes(ctx, temporal.NewSearchAttributeKeyKeyword(SearchAttrToolName).ValueSet(call.Name)); err != nil {
					workflow.GetLogger(ctx).Warn("setting the ToolName search attribute", "error", err)
				}
			}
			futures[i] = tools.start(ctx, call, idx+i)
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
			if ferr := tools.recordFailure(ctx, llm.ToolCalls[i], idx+i, err); ferr != nil {
				if isCancel(ctx, ferr) {
					cancelled = true
					continue
				}
				res.Status, res.Error = domain.TurnFailed, failureMessage(ferr)
				break loop
			}
		}
		idx += len(llm.ToolCalls)
		if cancelled || ctx.Err() != nil {
			res.Status = domain.TurnCancelled
			break
		}
	}

	stopRenewing() // the finalizer removes the credential

	// Finishing work must run even when the turn was cancelled.
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, finalizeOptions())
	if titleInFinalizer {
		var fin FinalizeResult
		title := res.Status == domain.TurnCompleted
		what := "finish the turn"
		if title {
			what = "finish the turn and name a new session"
		}
		err = runStep(fctx, stepsAsLocalActivities, fmt.Sprintf("%s: %s, %s, %d tokens", what, res.Status, plural(res.Steps, "step"), inTokens+outTokens), FinalizeActivity, FinalizeInput{
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
	if res.Status == domain.TurnCompleted {
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

func isCancel(ctx workflow.Context, err error) bool {
	var ce *temporal.CanceledError
	var ae *temporal.ApplicationError
	return errors.As(err, &ce) || errors.Is(ctx.Err(), workflow.ErrCanceled) ||
		(errors.As(err, &ae) && ae.Type() == domain.ErrTypeTurnAborted)
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
