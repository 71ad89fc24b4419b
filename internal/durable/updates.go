package durable

import (
	"context"
	"errors"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ErrNotWaiting means the workflow no longer waits (it ended, or never asked).
var ErrNotWaiting = errors.New("the workflow is no longer waiting for this approval")

// DecisionRefusedError is the workflow's validator saying no; Message is for people.
type DecisionRefusedError struct{ Message string }

func (e *DecisionRefusedError) Error() string { return e.Message }

// DecideApproval sends the decision as an Update and returns once the workflow has stored it.
func (t Temporal) DecideApproval(ctx context.Context, workflowID string, d workflows.ApprovalDecision) (workflows.ApprovalOutcome, error) {
	return update[workflows.ApprovalOutcome](ctx, t.Client, workflowID, workflows.ApprovalUpdate, d, ErrNotWaiting,
		func(ae *temporal.ApplicationError) error { return &DecisionRefusedError{Message: ae.Message()} })
}

// ErrExerciseOver means the exercise's workflow no longer takes requests.
var ErrExerciseOver = errors.New("the exercise is over")

// StartExercise starts an Exercise workflow under its readable id with the search attributes
// every turn carries; one that already runs (a retried tool call) is left as it is.
func (t Temporal) StartExercise(ctx context.Context, in workflows.ExerciseInput) error {
	opts := client.StartWorkflowOptions{
		ID:                    in.ExerciseID,
		TaskQueue:             t.queue(),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		Memo:                  map[string]any{"project_id": in.ProjectID, "session_id": in.SessionID, "user_id": in.UserID},
		StaticSummary:         "troubleshooting exercise of session " + in.SessionID,
		TypedSearchAttributes: SearchAttributes(in.ProjectID, in.SessionID, in.UserID),
	}
	err := t.start(ctx, opts, workflows.ExerciseWorkflow, in, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	return err
}

// AskExercise sends a request as an Update and returns the workflow's answer.
func (t Temporal) AskExercise(ctx context.Context, workflowID, name string, req workflows.ExerciseRequest) (workflows.ExerciseAnswer, error) {
	return update[workflows.ExerciseAnswer](ctx, t.Client, workflowID, name, req, ErrExerciseOver,
		func(ae *temporal.ApplicationError) error {
			if ae.Type() == domain.ErrTypeExerciseOver {
				return ErrExerciseOver
			}
			return nil
		})
}
