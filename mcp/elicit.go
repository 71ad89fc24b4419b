package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// An MCP client that declares the elicitation capability can put a question to its user
// during a call. A configuration or destructive call then asks there, with the same plan the
// chat shows, and the answer decides the approval; the approvals routes and the chat page can
// still decide it first. Other clients keep the approvals routes.

// elicits reports whether the client said it can ask its user (a form, the only kind we need).
func elicits(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// decisionSchema is the form: approve or reject, and what to change.
var decisionSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","enum":["approve","reject"],"title":"Decision","description":"approve runs it as shown; reject sends nothing"},` +
	`"comment":{"type":"string","title":"Comment","description":"Optional: why, or what to change"}},"required":["decision"]}`)

// elicitApprovals follows the call's events and asks the client's user about each approval
// the call waits for, until the call ends or the client goes.
func (f *frontDoor) elicitApprovals(ctx context.Context, ss *sdk.ServerSession, caller auth.Caller, callID string) {
	f.follow(ctx, callID, func(ev relay.Event) bool {
		switch ev.Type {
		case relay.TypeDone:
			return true
		case relay.TypeApprovalRequired:
			var p relay.Payload
			if json.Unmarshal(ev.Data, &p) == nil {
				if id := relay.ApprovalIDOf(ev.Data); id != "" {
					f.askByElicitation(ctx, ss, caller, id, p.Content)
				}
			}
		}
		return false
	})
}

// askByElicitation puts one approval's question to the client's user and hands the answer to
// the workflow. "decline" rejects; "cancel" (dismissed without a choice) leaves it waiting
// for the approvals routes.
func (f *frontDoor) askByElicitation(ctx context.Context, ss *sdk.ServerSession, caller auth.Caller, approvalID, question string) {
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: question, RequestedSchema: decisionSchema})
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("asking an MCP client's user about an approval", "approval", approvalID, "error", err)
		}
		return
	}
	d := workflows.ApprovalDecision{ApprovalID: approvalID, UserID: caller.ID, Username: caller.Username}
	switch res.Action {
	case "accept":
		d.Decision, _ = res.Content["decision"].(string)
		d.Comment, _ = res.Content["comment"].(string)
		if d.Decision != workflows.DecisionApprove && d.Decision != workflows.DecisionReject {
			d.Decision, d.Comment = workflows.DecisionReject, fmt.Sprintf("the answer %q was neither approve nor reject", d.Decision)
		}
	case "decline":
		d.Decision, d.Comment = workflows.DecisionReject, "declined in "+ss.InitializeParams().ClientInfo.Name
	default:
		return
	}
	a, err := f.d.Approvals.Get(ctx, approvalID)
	if err != nil {
		f.log.Warn("loading an approval answered by elicitation", "approval", approvalID, "error", err)
		return
	}
	if a.UserID != caller.ID {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := f.d.Workflows.DecideApproval(dctx, a.WorkflowID, d); err != nil {
		// Decided elsewhere first (the chat page, the approvals route): that decision stands.
		f.log.Info("an answer by elicitation was not taken", "approval", approvalID, "error", err)
	}
}
