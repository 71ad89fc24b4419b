package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// ChatTurn answers one user message: it calls the model, runs the tools it asks for, feeds their
// results back, and repeats until the model answers in words or the step limit is reached. It
// always ends by finalizing the turn, also when cancelled or failed, so nothing the user saw is
// lost and the client always gets exactly one terminal event.
func ChatTurn(ctx workflow.Context, in ChatTurnInput) (ChatTurnResult, error) {
	t, err := startTurn(ctx, in)
	if err != nil {
		return ChatTurnResult{}, err
	}
	maxSteps := in.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	for step := 1; step <= maxSteps && t.startingPoint(ctx, step); step++ {
		if !t.step(ctx, step, step == maxSteps) {
			break
		}
	}
	t.renewal.stop() // the finalizer removes the credential

	// Finishing work must run even when the turn was cancelled.
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, finalizeOptions())
	if !t.versions.titleInFinalizer() {
		return t.res, t.finalizeWithTitleActivity(ctx, fctx)
	}
	return t.res, t.finalize(fctx)
}

// turnVersions are the turn's version branches (VERSIONING.md), asked in the order turns
// have always asked them, so every recorded history meets its markers where it wrote them.
type turnVersions struct {
	// approvals: the turn runs with approvals ("approvals", and the turn asks for them).
	approvals bool
	// renewOnFirstTool ("lean-turn"): the credential is renewed only once the turn first runs a
	// tool, so a turn that only talks costs no timer; the finalizer names a new session.
	renewOnFirstTool bool
	// localSteps ("local-model-finalize", only after "lean-turn"): model calls and the finalizer
	// run as local activities, inside the worker's own workflow task, so the first model call
	// starts as soon as the (eager) start hands the worker that task and a turn that only talks
	// costs the Temporal server a start and one more write. A crash mid-call fails the workflow
	// task; its retry runs the call again (LLMCall then tells the client to drop the partial text).
	localSteps bool
}

func resolveTurnVersions(ctx workflow.Context, in ChatTurnInput) turnVersions {
	// Turns recorded before approvals existed replay without them; injection turns run without.
	v := turnVersions{approvals: workflow.GetVersion(ctx, "approvals", workflow.DefaultVersion, 1) >= 1 && in.Approval != "" && !in.SkipApproval}
	v.renewOnFirstTool = workflow.GetVersion(ctx, "lean-turn", workflow.DefaultVersion, 1) >= 1
	v.localSteps = v.renewOnFirstTool && workflow.GetVersion(ctx, "local-model-finalize", workflow.DefaultVersion, 1) >= 1
	return v
}

// titleInFinalizer: since "lean-turn" the finalizer names a new session, one activity and one
// workflow task fewer per turn than the separate title activity before it.
func (v turnVersions) titleInFinalizer() bool { return v.renewOnFirstTool }

// chatTurn is one turn's state as its steps go.
type chatTurn struct {
	in       ChatTurnInput
	ref      WorkRef
	versions turnVersions
	gate     *approvalGate
	tools    *toolRunner
	renewal  *credentialRenewal
	llmCtx   workflow.Context
	res      ChatTurnResult
	// inTokens, outTokens, reasonTokens (a part of outTokens) and cachedTokens (a part of
	// inTokens) add up the model's usage; idx is the next transcript slot (0 is the user message,
	// stored when the turn was created).
	inTokens, outTokens, reasonTokens, cachedTokens int64
	idx                                             int
}

func startTurn(ctx workflow.Context, in ChatTurnInput) (*chatTurn, error) {
	t := &chatTurn{in: in, idx: 1, res: ChatTurnResult{Status: domain.TurnCompleted},
		ref:    WorkRef{SessionID: in.SessionID, TurnID: in.TurnID, ProjectID: in.ProjectID, UserID: in.UserID, Mode: in.Mode},
		llmCtx: workflow.WithActivityOptions(ctx, llmOptions())}
	t.versions = resolveTurnVersions(ctx, in)
	gate, err := newApprovalGate(ctx, t.ref)
	if err != nil {
		return nil, err
	}
	t.gate = gate
	t.tools = newToolRunner(ctx, gate, toolSettings{ref: t.ref, approvals: t.versions.approvals, approval: in.Approval, approvalTimeout: in.ApprovalTimeout,
		deviceConcurrency: in.DeviceConcurrency, searchAttributes: in.SearchAttributes})
	t.renewal = &credentialRenewal{ref: t.ref, ttl: in.CredentialTTL, enabled: t.versions.approvals, lateStart: t.versions.renewOnFirstTool}
	if !t.versions.renewOnFirstTool {
		t.renewal.start(ctx)
	}
	return t, nil
}

// startingPoint saves the lab before an injection turn's first step, so its exercise can be
// reset to how the lab was (since "injection-snapshot"; a save point that pauses a running lab
// since "save-point"); a lab that cannot be saved is not broken. It reports whether the turn goes on; other turns and later steps always do.
func (t *chatTurn) startingPoint(ctx workflow.Context, step int) bool {
	if step > 1 || t.in.Mode != domain.ModeTroubleshootingInjection ||
		workflow.GetVersion(ctx, "injection-snapshot", workflow.DefaultVersion, 1) < 1 {
		return true
	}
	var refused string
	var err error
	if savePoints(ctx) {
		// A running lab is paused for the snapshot (since "save-point"): the exercise the student
		// asked for needs it, so nobody is asked.
		refused, err = injectionSavePoint(ctx, t.ref)
	} else {
		err = workflow.ExecuteActivity(summarized(workflow.WithActivityOptions(ctx, toolOptions()), "snapshot the lab before the injection"),
			SnapshotInjectionActivity, InjectionSnapshotInput{Turn: t.ref}).Get(ctx, nil)
	}
	const notSaved = "Nothing was injected: the lab could not be saved first, so the exercise could not be reset. "
	switch {
	case err == nil && refused == "":
		return true
	case err == nil:
		t.res.Status, t.res.Error = domain.TurnFailed, notSaved+refused
	case isCancel(ctx, err):
		t.res.Status = domain.TurnCancelled
	default:
		t.res.Status, t.res.Error = domain.TurnFailed, notSaved+failureMessage(err)
	}
	return false
}

// step makes one model call and runs the tools it asks for; it reports whether the turn goes on.
func (t *chatTurn) step(ctx workflow.Context, step int, last bool) bool {
	t.res.Steps = step
	var llm LLMResult
	err := runStep(t.llmCtx, t.versions.localSteps, llmSummary(step, t.in.Model, last), LLMActivity, LLMInput{
		Turn: t.ref, Step: step, MessageIndex: t.idx, NoTools: last,
	}).Get(ctx, &llm)
	// A call counts even if it did not finish (its tokens are then unknown).
	t.res.LLMCalls++
	if err != nil {
		if isCancel(ctx, err) {
			t.res.Status = domain.TurnCancelled
		} else {
			t.res.Status, t.res.Error = domain.TurnFailed, failureMessage(err)
		}
		return false
	}
	t.idx++
	t.inTokens += llm.InputTokens
	t.outTokens += llm.OutputTokens
	t.reasonTokens += llm.ReasoningTokens
	t.cachedTokens += llm.CachedTokens
	if len(llm.ToolCalls) == 0 {
		return false
	}
	t.renewal.start(ctx)
	return t.runTools(ctx, llm.ToolCalls)
}

// runTools runs one step's tool calls concurrently, each result in a fixed slot of the
// transcript; it reports whether the turn goes on.
func (t *chatTurn) runTools(ctx workflow.Context, calls []ToolCall) bool {
	futures := make([]workflow.Future, len(calls))
	for i, call := range calls {
		if t.versions.approvals && (domain.IsConfigJobTool(call.Name) || domain.IsDestructiveTool(call.Name)) && t.in.SearchAttributes {
			if err := workflow.UpsertTypedSearchAttributes(ctx, temporal.NewSearchAttributeKeyKeyword(SearchAttrToolName).ValueSet(call.Name)); err != nil {
				workflow.GetLogger(ctx).Warn("setting the ToolName search attribute", "error", err)
			}
		}
		futures[i] = t.tools.start(ctx, call, t.idx+i)
	}
	cancelled := false
	for i, f := range futures {
		// A configuration job's result carries its approval: an "approve all" given there
		// decides the turn's later approvals.
		var tr struct{ Approval ApprovalOutcome }
		err := f.Get(ctx, &tr)
		if err == nil {
			t.gate.stand(tr.Approval)
			continue
		}
		if isCancel(ctx, err) {
			cancelled = true
			continue
		}
		// The model gets the failure as the tool's result and can react to it; the turn goes on.
		if ferr := t.tools.recordFailure(ctx, calls[i], t.idx+i, err); ferr != nil {
			if isCancel(ctx, ferr) {
				cancelled = true
				continue
			}
			t.res.Status, t.res.Error = domain.TurnFailed, failureMessage(ferr)
			return false
		}
	}
	t.idx += len(calls)
	if cancelled || ctx.Err() != nil {
		t.res.Status = domain.TurnCancelled
		return false
	}
	return true
}

// finalize closes the turn in one step, naming a new session after a completed first turn.
func (t *chatTurn) finalize(fctx workflow.Context) error {
	var fin FinalizeResult
	title := t.res.Status == domain.TurnCompleted
	what := "finish the turn"
	if title {
		what = "finish the turn and name a new session"
	}
	err := runStep(fctx, t.versions.localSteps, fmt.Sprintf("%s: %s, %s, %d tokens", what, t.res.Status, plural(t.res.Steps, "step"), t.inTokens+t.outTokens), FinalizeActivity, FinalizeInput{
		Turn: t.ref, Status: t.res.Status, Error: t.res.Error, LLMCalls: t.res.LLMCalls,
		InputTokens: t.inTokens, OutputTokens: t.outTokens, ReasoningTokens: t.reasonTokens, CachedTokens: t.cachedTokens, GenerateTitle: title,
	}).Get(fctx, &fin)
	if err != nil {
		return fmt.Errorf("finalizing turn: %w", err)
	}
	if fin.TitleCalled {
		t.res.LLMCalls++
	}
	return nil
}

// finalizeWithTitleActivity is how turns from before "lean-turn" close: a separate title
// activity, then the finalizer.
func (t *chatTurn) finalizeWithTitleActivity(ctx, fctx workflow.Context) error {
	var title TitleResult
	if t.res.Status == domain.TurnCompleted {
		tctx := workflow.WithActivityOptions(fctx, titleOptions())
		// A title is a nicety: if it cannot be made the session keeps its first-message title.
		if err := workflow.ExecuteActivity(summarized(tctx, "session title"), TitleActivity, TitleInput{Turn: t.ref}).Get(fctx, &title); err != nil {
			workflow.GetLogger(ctx).Warn("title generation failed", "error", err)
			title = TitleResult{}
		}
		if title.Called {
			t.res.LLMCalls++
			t.inTokens += title.InputTokens
			t.outTokens += title.OutputTokens
			t.reasonTokens += title.ReasoningTokens
			t.cachedTokens += title.CachedTokens
		}
	}
	err := workflow.ExecuteActivity(summarized(fctx, fmt.Sprintf("finish the turn: %s, %s, %d tokens", t.res.Status, plural(t.res.Steps, "step"), t.inTokens+t.outTokens)), FinalizeActivity, FinalizeInput{
		Turn: t.ref, Status: t.res.Status, Error: t.res.Error, LLMCalls: t.res.LLMCalls,
		InputTokens: t.inTokens, OutputTokens: t.outTokens, ReasoningTokens: t.reasonTokens, CachedTokens: t.cachedTokens, Title: title.Title,
	}).Get(fctx, nil)
	if err != nil {
		return fmt.Errorf("finalizing turn: %w", err)
	}
	return nil
}

// credentialRenewal keeps a turn's GNS3 credential alive while the turn may wait on approvals.
type credentialRenewal struct {
	ref     WorkRef
	ttl     time.Duration
	enabled bool
	// lateStart: the renewal starts at the turn's first tool call, not at its start, and keeps
	// the schedule it would have had from the start.
	lateStart bool
	started   bool
	cancel    workflow.CancelFunc
}

// start begins renewing once (and only for a turn with approvals).
func (r *credentialRenewal) start(ctx workflow.Context) {
	if !r.enabled || r.started {
		return
	}
	r.started = true
	var rctx workflow.Context
	rctx, r.cancel = workflow.WithCancel(ctx)
	// The first renewal is due when it always was: half the credential's lifetime after the
	// turn started.
	first := r.ttl / 2
	if r.lateStart {
		first -= workflow.Now(ctx).Sub(workflow.GetInfo(ctx).WorkflowStartTime)
	}
	keepCredentialFrom(rctx, r.ref, r.ttl, first)
}

func (r *credentialRenewal) stop() {
	if r.cancel != nil {
		r.cancel()
	}
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
