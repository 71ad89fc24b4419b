package durable

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// TurnDescription is what the Temporal UI shows of a turn: names and ids only, never a token,
// a key or the conversation's text.
type TurnDescription struct {
	Summary string // one line, e.g. "turn 3 of session 1f2e…, project lab2, user alice"
	Details string // a few lines of Markdown
	// Model names the model in the summaries of the turn's LLM activities ("step 2: model …").
	Model string
}

// DescribeTurn words a turn for the Temporal UI. The session's title is left out: the first one
// is made of the user's message.
func DescribeTurn(seq int, in workflows.ChatTurnInput, projectName, username, provider, model string) TurnDescription {
	return TurnDescription{
		Summary: fmt.Sprintf("turn %d of session %.8s…, project %s, user %s", seq, in.SessionID, projectName, username),
		Details: fmt.Sprintf("**project** %s (`%s`)  \n**user** %s (`%s`)  \n**session** `%s`  \n**turn** %d (`%s`)  \n**mode** %s  \n**model** %s / %s",
			projectName, in.ProjectID, username, in.UserID, in.SessionID, seq, in.TurnID, in.Mode, provider, model),
		Model: model,
	}
}

// StartTurn starts a ChatTurn workflow. The memo names the project, session and user so a turn
// can be found in the Temporal UI, and the static summary and details tell its story there;
// none of them is a secret.
func (t Temporal) StartTurn(ctx context.Context, workflowID string, in workflows.ChatTurnInput, d TurnDescription) error {
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
	in.Model = d.Model
	with, without := in, in
	with.SearchAttributes, without.SearchAttributes = true, false
	return t.start(ctx, opts, workflows.ChatTurnWorkflow, with, without)
}

// StartMCPCall starts an MCPCall workflow, findable like a turn by project, (MCP) session, user
// and tool.
func (t Temporal) StartMCPCall(ctx context.Context, workflowID string, in workflows.MCPCallInput, username, clientName string) error {
	opts := client.StartWorkflowOptions{
		ID: workflowID, TaskQueue: t.queue(), EnableEagerStart: true,
		Memo: map[string]any{"project_id": in.Call.ProjectID, "session_id": in.Call.SessionID, "user_id": in.Call.UserID,
			"call_id": in.Call.TurnID, "client": clientName},
		StaticSummary: fmt.Sprintf("MCP call %s from %s, user %s", in.Tool.Name, clientName, username),
		StaticDetails: fmt.Sprintf("**tool** %s  \n**client** %s  \n**user** %s (`%s`)  \n**project** `%s`  \n**MCP session** `%s`  \n**call** `%s`  \n**mode** %s",
			in.Tool.Name, clientName, username, in.Call.UserID, in.Call.ProjectID, in.Call.SessionID, in.Call.TurnID, in.Call.Mode),
		TypedSearchAttributes: SearchAttributes(in.Call.ProjectID, in.Call.SessionID, in.Call.UserID,
			temporal.NewSearchAttributeKeyKeyword(workflows.SearchAttrToolName).ValueSet(in.Tool.Name)),
	}
	with, without := in, in
	with.SearchAttributes, without.SearchAttributes = true, false
	return t.start(ctx, opts, workflows.MCPCallWorkflow, with, without)
}
