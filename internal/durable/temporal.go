// The copilot's one client of Temporal for its own workflows: it starts chat turns, MCP calls
// and exercises (with the search attributes, and without them on a cluster that lacks them),
// hands Updates to waiting workflows (approval decisions, exercise requests), cancels and
// describes them. Handlers and activities use it through small interfaces declared where they
// are used; it knows nothing of HTTP.

package durable

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Temporal runs the copilot's workflows on a Temporal cluster.
type Temporal struct {
	Client    client.Client
	TaskQueue string
}

// queue is the task queue the workflows start on.
func (t Temporal) queue() string {
	if t.TaskQueue == "" {
		return workflows.TaskQueue
	}
	return t.TaskQueue
}

// SearchAttributes are the keyword attributes turns, exercises and MCP calls carry, so all
// three are found the same way in the Temporal UI; more adds a workflow's own.
func SearchAttributes(projectID, sessionID, userID string, more ...temporal.SearchAttributeUpdate) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append([]temporal.SearchAttributeUpdate{
		temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttrProjectID).ValueSet(projectID),
		temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttrSessionID).ValueSet(sessionID),
		temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttrUserID).ValueSet(userID),
	}, more...)...)
}

// UnregisteredAttributes reports a start refused because the cluster lacks the search
// attributes; the caller starts again without them.
func UnregisteredAttributes(err error) bool {
	var bad *serviceerror.InvalidArgument
	return errors.As(err, &bad) && strings.Contains(strings.ToLower(bad.Error()), "search attribute")
}

// start starts workflow wf with input with, and on a cluster where the search attributes of opts
// are not registered (README: "Temporal search attributes") starts it again without them and
// with input without: such a cluster still runs the copilot's workflows, only without them.
func (t Temporal) start(ctx context.Context, opts client.StartWorkflowOptions, wf, with, without any) error {
	_, err := t.Client.ExecuteWorkflow(ctx, opts, wf, with)
	if UnregisteredAttributes(err) {
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		_, err = t.Client.ExecuteWorkflow(ctx, opts, wf, without)
	}
	return err
}

// update sends an Update to the workflow and waits for its result. A workflow that is gone
// answers gone; an error the workflow raised answers what refused makes of it (nil keeps it).
func update[T any](ctx context.Context, c client.Client, workflowID, name string, arg any, gone error,
	refused func(*temporal.ApplicationError) error) (T, error) {
	var out T
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &out)
	}
	var nf *serviceerror.NotFound
	var ae *temporal.ApplicationError
	switch {
	case err == nil:
	case errors.As(err, &nf):
		return out, gone
	case errors.As(err, &ae):
		if r := refused(ae); r != nil {
			return out, r
		}
	}
	return out, err
}

// CancelTurn asks a turn's (or a call's) workflow to stop; a workflow that already ended is not
// an error.
func (t Temporal) CancelTurn(ctx context.Context, workflowID string) error {
	err := t.Client.CancelWorkflow(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// TurnEnded reports whether a turn's (or a call's) workflow has closed, and whether it exists
// at all.
func (t Temporal) TurnEnded(ctx context.Context, workflowID string) (ended, started bool, err error) {
	d, err := t.Client.DescribeWorkflowExecution(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING, true, nil
}

// Wait waits for the workflow to end, whatever its outcome (ctx bounds the wait).
func (t Temporal) Wait(ctx context.Context, workflowID string) error {
	return t.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
}
