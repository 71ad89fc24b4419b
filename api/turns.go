package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// TemporalTurns runs turns as ChatTurn workflows on a Temporal cluster.
type TemporalTurns struct {
	Client    client.Client
	TaskQueue string
}

// TurnDescription is what the Temporal UI shows of a turn: names and ids only, never a token,
// a key or the conversation's text.
type TurnDescription struct {
	Summary string // one line, e.g. "turn 3 of session 1f2e…, project lab2, user alice"
	Details string // a few lines of Markdown
	// Model names the model in the summaries of the turn's LLM activities ("step 2: model …").
	Model string
}

// describeTurn words a turn for the Temporal UI. The session's title is left out: the first one
// is made of the user's message.
func describeTurn(seq int, in workflows.ChatTurnInput, projectName, username, provider, model string) TurnDescription {
	return TurnDescription{
		Summary: fmt.Sprintf("turn %d of session %.8s…, project %s, user %s", seq, in.SessionID, projectName, username),
		Details: fmt.Sprintf("**project** %s (`%s`)  \n**user** %s (`%s`)  \n**session** `%s`  \n**turn** %d (`%s`)  \n**mode** %s  \n**model** %s / %s",
			projectName, in.ProjectID, username, in.UserID, in.SessionID, seq, in.TurnID, in.Mode, provider, model),
		Model: model,
	}
}

// queue is the task queue the workflows start on.
func (t TemporalTurns) queue() string {
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

// updateAndWait sends an Update to the workflow and waits for its result.
func updateAndWait[T any](ctx context.Context, c client.Client, workflowID, update string, arg any) (T, error) {
	var out T
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: update, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &out)
	}
	return out, err
}

// StartTurn starts the workflow. The memo names the project, session and user so a turn can be
// found in the Temporal UI, and the static summary and details tell its story there; none of
// them is a secret.
func (t TemporalTurns) StartTurn(ctx context.Context, workflowID string, in workflows.ChatTurnInput, d TurnDescription) error {
	opts := client.StartWorkflowOptions{
		ID:               workflowID,
		TaskQueue:        t.queue(),
		EnableEagerStart: true,
		// A workflow task the dev server lost on its way to the worker (under load, see package
		// worker) is given to another poll after this long instead of the default 10 s. The
		// turn's workflow code takes milliseconds per task.
		WorkflowTaskTimeout:   5 * time.Second,
		Memo:                  map[string]any{"project_id": in.ProjectID, "session_id": in.SessionID, "user_id": in.UserID, "turn_id": in.TurnID},
		StaticSummary:         d.Summary,
		StaticDetails:         d.Details,
		TypedSearchAttributes: SearchAttributes(in.ProjectID, in.SessionID, in.UserID),
	}
	in.SearchAttributes = true
	in.Revision = workflows.ChatTurnRevision
	in.Model = d.Model
	_, err := t.Client.ExecuteWorkflow(ctx, opts, workflows.ChatTurnWorkflow, in)
	if UnregisteredAttributes(err) {
		// A cluster where the attributes are not registered (README: "Temporal search
		// attributes") still runs turns, only without them.
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		in.SearchAttributes = false
		_, err = t.Client.ExecuteWorkflow(ctx, opts, workflows.ChatTurnWorkflow, in)
	}
	return err
}

// CancelTurn asks the workflow to stop; a workflow that already ended is not an error.
func (t TemporalTurns) CancelTurn(ctx context.Context, workflowID string) error {
	err := t.Client.CancelWorkflow(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// TurnEnded reports whether the workflow has closed, and whether it exists at all.
func (t TemporalTurns) TurnEnded(ctx context.Context, workflowID string) (ended, started bool, err error) {
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
