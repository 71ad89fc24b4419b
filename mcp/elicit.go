package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// An MCP client that declares the elicitation capability can put a question to its user
// during a call. A configuration or destructive call then asks there, with the same plan the
// chat shows, and the answer decides the approval; the approvals routes, the chat page and
// decide_approval can still decide it first. A question left unanswered for ElicitTimeout, or
// dismissed, gives way to the two-phase answer (approvals.go).

// elicits reports whether the client said it can ask its user (a form, the only kind we need).
func elicits(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// decisionSchema is the form: approve or reject, and what to change.
var decisionSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","enum":["approve","reject"],"title":"Decision","description":"approve runs it as shown; reject sends nothing"},` +
	`"comment":{"type":"string","title":"Comment","description":"Optional: why, or what to change"}},"required":["decision"]}`)

// askByElicitation puts one approval's question to the client's user for at most
// ElicitTimeout and hands the answer to the workflow; it reports whether the approval is
// decided. "decline" rejects; "cancel" (dismissed without a choice), no answer in time or an
// answer that is not one leave it to the two phases.
func (f *frontDoor) askByElicitation(ctx context.Context, ss *sdk.ServerSession, caller auth.Caller, a *models.Approval, question string) bool {
	ectx, cancel := context.WithTimeout(ctx, f.d.ElicitTimeout)
	res, err := ss.Elicit(ectx, &sdk.ElicitParams{Message: question, RequestedSchema: decisionSchema})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			f.log.Info("an approval asked by elicitation was not answered; answering with the plan", "approval", a.ID, "error", err)
		}
		return false
	}
	d := workflows.ApprovalDecision{ApprovalID: a.ID, UserID: caller.ID, Username: caller.Username}
	switch res.Action {
	case "accept":
		d.Decision, _ = res.Content["decision"].(string)
		d.Comment, _ = res.Content["comment"].(string)
		if d.Decision != workflows.DecisionApprove && d.Decision != workflows.DecisionReject {
			return false
		}
	case "decline":
		d.Decision, d.Comment = workflows.DecisionReject, "declined in "+ss.InitializeParams().ClientInfo.Name
	default:
		return false
	}
	if msg := f.hand(ctx, a, d); msg != "" {
		// Decided elsewhere first (the chat page, decide_approval): that decision stands.
		f.log.Info("an answer by elicitation was not taken", "approval", a.ID, "reason", msg)
		now, err := f.d.Approvals.Get(context.WithoutCancel(ctx), a.ID)
		return err == nil && now.Status != domain.ApprovalPending
	}
	return true
}
