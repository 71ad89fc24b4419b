package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// A reset puts the lab back to the snapshot its injection turn took before it changed
// anything, and ends the exercise. Restoring loses work, so it waits for a decision as the other
// destructive actions do; the request, the question, the decision and the outcome make up a
// turn of the session (the API opens it), so the chat shows them like any other answer.
const (
	ExerciseResetUpdate = "reset"
	// ExerciseResetActivity restores the snapshot; ExerciseTurnFinishActivity ends the reset's
	// turn with what happened.
	ExerciseResetActivity      = "ResetExercise"
	ExerciseTurnFinishActivity = "FinishExerciseTurn"
	// ResetCallID is the tool call a reset's turn shows for the restore.
	ResetCallID = "exercise_reset"
)

// ExerciseResetInput restores an exercise's snapshot with the credential of the reset's turn.
type ExerciseResetInput struct {
	ExerciseID string
	Turn       WorkRef
	Call       ToolCall
}

// ExerciseResetResult says whether the lab is back, in words for the student.
type ExerciseResetResult struct {
	Restored bool
	Message  string
}

// ExerciseTurnFinishInput ends a reset's turn with the answer the student reads.
type ExerciseTurnFinishInput struct {
	ExerciseID string
	Turn       WorkRef
	Content    string
	// Status is the exercise's, after the reset.
	Status string
}

// validateReset refuses a reset the exercise cannot take: over, one already under way, or a
// request without the turn and snapshot the API gives it.
func (e *exercise) validateReset(ctx workflow.Context, req ExerciseRequest) error {
	if err := e.validateOpen(ctx, req); err != nil {
		return err
	}
	switch {
	case e.resetting:
		return errors.New("a reset of this exercise is already under way")
	case req.TurnID == "" || req.Snapshot == "":
		return errors.New("a reset needs its turn and the exercise's snapshot")
	}
	return nil
}

// reset starts the reset and answers at once: the decision may take the student a while, and
// the reset's turn tells them the rest.
func (e *exercise) reset(_ workflow.Context, req ExerciseRequest) (ExerciseAnswer, error) {
	e.resetting = true
	e.resets++
	workflow.Go(e.ctx, func(ctx workflow.Context) {
		defer func() { e.resets-- }()
		e.runReset(ctx, req)
	})
	ans := e.st
	ans.Message = "Resetting the lab to its snapshot from before the exercise."
	return ans, nil
}

// runReset asks (under the operator's "changes" setting), restores the snapshot, ends the
// exercise, and ends the reset's turn with what happened. A refusal or silence changes nothing
// and the exercise goes on.
func (e *exercise) runReset(ctx workflow.Context, req ExerciseRequest) {
	ref := WorkRef{SessionID: e.in.SessionID, TurnID: req.TurnID, ProjectID: e.in.ProjectID, UserID: e.in.UserID, Mode: domain.ModeLabAutomation}
	call := ToolCall{ID: ResetCallID, Name: domain.RestoreSnapshotTool, Arguments: fmt.Sprintf(`{"snapshot":%q}`, req.Snapshot)}
	content := ""
	if req.Approval == domain.ApprovalChanges {
		e.gate.turn = ref
		out, err := e.gate.ask(ctx, ApprovalRequest{Call: call, Kind: domain.ApprovalKindDestructive, MessageIndex: 1}, req.ApprovalTimeout)
		switch {
		case err != nil:
			content = "Nothing was reset: " + failureMessage(err)
		case !out.Approved():
			content = RejectionMessage(out) + " The lab was not reset; the exercise goes on."
		}
	}
	if content == "" {
		content = e.restore(ctx, ref, call)
	}
	// Decided and done: another reset may be asked while this one's answer is stored.
	e.resetting = false
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, exerciseFinishOptions())
	if err := workflow.ExecuteActivity(summarized(fctx, "reset's answer: "+e.st.Status), ExerciseTurnFinishActivity, ExerciseTurnFinishInput{
		ExerciseID: e.in.ExerciseID, Turn: ref, Content: content, Status: e.st.Status}).Get(fctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("ending the reset's turn failed", "error", err)
	}
}

// restore puts the snapshot back, once no check or hint is running, and ends the exercise when
// it took.
func (e *exercise) restore(ctx workflow.Context, ref WorkRef, call ToolCall) string {
	if err := e.one.Lock(ctx); err != nil {
		return "Nothing was reset: " + failureMessage(err)
	}
	defer e.one.Unlock()
	if e.st.Status != domain.ExerciseOpen {
		return fmt.Sprintf("Nothing was reset: the exercise ended meanwhile (%s).", e.st.Status)
	}
	rctx := workflow.WithActivityOptions(ctx, resetOptions())
	var res ExerciseResetResult
	if err := workflow.ExecuteActivity(summarized(rctx, "restore the snapshot from before the exercise"), ExerciseResetActivity,
		ExerciseResetInput{ExerciseID: e.in.ExerciseID, Turn: ref, Call: call}).Get(ctx, &res); err != nil {
		return "The lab could not be reset: " + failureMessage(err) + " The exercise goes on."
	}
	if !res.Restored {
		return "The lab could not be reset: " + res.Message + " The exercise goes on."
	}
	e.st.Status, e.st.Message = domain.ExerciseReset, res.Message
	return res.Message
}

// resetOptions: a restore reloads the whole project; heartbeats prove it goes on.
func resetOptions() workflow.ActivityOptions {
	o := toolOptions()
	o.StartToCloseTimeout = 10 * time.Minute
	return o
}
