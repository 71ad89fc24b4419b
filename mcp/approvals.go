package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Approvals in two phases, for every MCP host. A configuration or destructive call that must
// wait for its owner answers at once with the plan, the approval's id and its expiry, and
// nothing is applied; the workflow goes on waiting (its approval is a Temporal Update on it, its
// pending approval the row RequestApproval wrote). decide_approval then hands the owner's
// decision to that workflow and returns the call's own result. A host that can ask its user
// (elicitation) is asked first, for a bounded time, and falls back to the same two phases.

// DefaultElicitTimeout is how long an elicitation may stay unanswered before the call answers
// with the two-phase plan instead.
const DefaultElicitTimeout = 60 * time.Second

// decisionTimeout bounds how long a decision waits for a worker to take it.
const decisionTimeout = 30 * time.Second

// DecisionApproveAll approves the call and every later change asked in the same MCP session.
const DecisionApproveAll = "approve_all"

const decideToolName = "decide_approval"

var decideTool = &sdk.Tool{
	Name: decideToolName,
	Description: "Decide an approval that a configuration or destructive call is waiting for (its result gave approval_id). " +
		"Show the user the plan first and decide only as they say: approve runs it as planned and returns what was applied, " +
		"read back and changed; reject sends nothing (say why in comment); approve_all approves it and every later change " +
		"asked in this MCP session. Only your own approvals can be decided.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"approval_id":{"type":"string","description":"The approval's id, from the waiting call's result (metadata.approval.approval_id)."},` +
		`"decision":{"type":"string","enum":["approve","reject","approve_all"],"description":"The user's decision."},` +
		`"comment":{"type":"string","maxLength":2000,"description":"Optional: why, or what to change."}},` +
		`"required":["approval_id","decision"],"additionalProperties":false}`),
	Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true)},
}

func ptr[T any](v T) *T { return &v }

// waitingPlan is the part of an approval's stored plan (activities.ApprovalPlan) the two-phase
// answer lists per device.
type waitingPlan struct {
	Summary string `json:"summary"`
	Devices []struct {
		NodeID string `json:"node_id"`
		Name   string `json:"name"`
		Lines  []struct {
			Command string `json:"command"`
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
		} `json:"lines"`
		ReadCommand   string `json:"read_command"`
		CurrentConfig string `json:"current_config"`
		ReadError     string `json:"read_error"`
	} `json:"devices"`
	Failed []tools.Item `json:"failed"`
}

// pendingResult is the two-phase answer for a call waiting for approval a: per device the
// lines with their verdicts and the configuration they touch, the approval with its id and
// expiry, the panel's question, and how to decide. Nothing has been applied.
func (f *frontDoor) pendingResult(ctx context.Context, a *models.Approval, wfID string) *sdk.CallToolResult {
	var plan waitingPlan
	_ = json.Unmarshal([]byte(a.Plan), &plan)
	items := append([]tools.Item(nil), plan.Failed...)
	for _, d := range plan.Devices {
		var b strings.Builder
		b.WriteString("would send (nothing sent yet):\n")
		for _, l := range d.Lines {
			switch l.Verdict {
			case "blocked":
				fmt.Fprintf(&b, "  %s    [blocked, will not be sent: %s]\n", l.Command, l.Reason)
			default:
				fmt.Fprintf(&b, "  %s    [%s]\n", l.Command, l.Verdict)
			}
		}
		switch {
		case d.ReadError != "":
			fmt.Fprintf(&b, "current configuration: could not be read (%s)", d.ReadError)
		case d.CurrentConfig != "":
			fmt.Fprintf(&b, "current configuration (%s):\n%s", d.ReadCommand, strings.TrimRight(d.CurrentConfig, "\n"))
		}
		items = append(items, tools.Item{ID: d.NodeID, Name: d.Name, Status: domain.JobWaiting, Result: strings.TrimRight(b.String(), "\n")})
	}
	if len(plan.Devices) == 0 {
		// A destructive lab tool: one item, what it would do.
		items = append(items, tools.Item{ID: a.ID, Name: a.ToolName, Status: domain.JobWaiting, Result: plan.Summary + " (not done yet)"})
	}
	r := tools.Result{Data: items, Total: len(items), Failed: len(plan.Failed)}
	r.Success = r.Failed == 0
	expires := a.ExpiresAt.UTC().Format(time.RFC3339)
	next := fmt.Sprintf("Nothing was applied: this call waits for the user's approval %s until %s. Show the user the plan "+
		"(metadata.approval.question) and ask them; then call decide_approval with approval_id %q and decision approve, "+
		"reject (with a comment saying why) or approve_all (also approves later changes in this MCP session). Its result "+
		"is this call's own. Without a decision by then nothing is done.", a.ID, expires, a.ID)
	r.Metadata = map[string]any{"tool_name": a.ToolName, "version": tools.FormatVersion, "next_step": next,
		"approval": map[string]any{"approval_id": a.ID, "status": a.Status, "kind": a.Kind, "expires_at": expires,
			"summary": plan.Summary, "question": f.questionOf(ctx, a)}}
	return standardResult(r.JSON(), sdk.Meta{"call_id": a.TurnID, "workflow_id": wfID, "status": domain.JobWaiting, "approval_id": a.ID})
}

// questionOf is the approval's question as the panel shows it, from the call's event log.
func (f *frontDoor) questionOf(ctx context.Context, a *models.Approval) string {
	evs, err := f.d.Events.Range(ctx, a.TurnID, "", 0)
	if err == nil {
		for _, ev := range evs {
			if ev.Type == relay.TypeApprovalRequired && relay.ApprovalIDOf(ev.Data) == a.ID {
				var p relay.Payload
				if json.Unmarshal(ev.Data, &p) == nil && p.Content != "" {
					return p.Content
				}
			}
		}
	}
	return fmt.Sprintf("Approval needed before `%s` changes the lab.", a.ToolName)
}

// decideApproval is the decide_approval tool.
func (s *session) decideApproval(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	caller, ok := callerOf(req.Extra)
	if !ok || caller.ID != s.st.userID {
		return nil, errors.New("this session belongs to another user")
	}
	var in struct {
		ApprovalID string  `json:"approval_id"`
		Decision   string  `json:"decision"`
		Comment    *string `json:"comment"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return failure(decideToolName, `arguments must be {"approval_id": string, "decision": "approve"|"reject"|"approve_all", "comment": string}: `+err.Error()), nil
		}
	}
	comment := ""
	if in.Comment != nil {
		comment = strings.TrimSpace(*in.Comment)
	}
	switch {
	case in.ApprovalID == "":
		return failure(decideToolName, "approval_id is required: the id the waiting call's result gave (metadata.approval.approval_id)"), nil
	case in.Decision != workflows.DecisionApprove && in.Decision != workflows.DecisionReject && in.Decision != DecisionApproveAll:
		return failure(decideToolName, fmt.Sprintf("decision must be approve, reject or approve_all, got %q", respond.Truncate(in.Decision, 40))), nil
	case !utf8.ValidString(comment) || utf8.RuneCountInString(comment) > workflows.MaxApprovalComment:
		return failure(decideToolName, fmt.Sprintf("comment must be UTF-8 text of at most %d characters", workflows.MaxApprovalComment)), nil
	}
	a, call, res := s.f.ownApproval(ctx, caller, in.ApprovalID)
	if res != nil {
		return res, nil
	}
	meta := sdk.Meta{"call_id": call.ID, "workflow_id": call.WorkflowID, "approval_id": a.ID}
	switch {
	case a.Status != domain.ApprovalPending:
		return failureMeta(decideToolName, a.AlreadyDecided()+" get_mcp_call_result with call_id "+call.ID+" returns the call's result.", meta), nil
	case time.Now().After(a.ExpiresAt):
		return failureMeta(decideToolName, "This approval expired at "+a.ExpiresAt.UTC().Format(time.RFC3339)+"; nothing was done. Call the tool again.", meta), nil
	}
	// The owner's fresh token keeps the call able to act for them after a long wait.
	if err := s.f.d.Credentials.Put(ctx, call.ID, caller.Token, s.f.d.Work.CredentialTTL); err != nil {
		s.f.log.Warn("refreshing the call's credential with the decider's token", "call", call.ID, "error", err)
	}
	standing := in.Decision == DecisionApproveAll
	d := workflows.ApprovalDecision{ApprovalID: a.ID, Decision: in.Decision, Comment: comment, UserID: caller.ID,
		Username: caller.Username, Standing: standing}
	if standing {
		d.Decision = workflows.DecisionApprove
	}
	if msg := s.f.hand(ctx, a, d); msg != "" {
		return failureMeta(decideToolName, msg, meta), nil
	}
	if standing {
		// approve_all also answers the session's other approvals already waiting.
		s.f.approveWaiting(ctx, caller, a)
	}
	return s.f.await(ctx, req, caller, call.ID, call.WorkflowID, call.ToolName)
}

// ownApproval loads an approval of one of the caller's MCP calls; anyone else's, or an approval
// of a chat turn, reads as not found.
func (f *frontDoor) ownApproval(ctx context.Context, caller auth.Caller, id string) (*models.Approval, *models.MCPCall, *sdk.CallToolResult) {
	notFound := failure(decideToolName, fmt.Sprintf("Approval %q not found among the approvals of your MCP calls.", respond.Truncate(id, 80)))
	a, err := f.d.Approvals.Get(ctx, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && a.UserID != caller.ID) {
		return nil, nil, notFound
	}
	if err != nil {
		f.log.Error("loading an approval", "approval", id, "error", err)
		return nil, nil, failure(decideToolName, "Loading the approval failed; try again in a moment.")
	}
	call, err := f.d.Calls.Get(ctx, a.TurnID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && call.UserID != caller.ID) {
		return nil, nil, notFound
	}
	if err != nil {
		f.log.Error("loading an approval's MCP call", "approval", id, "error", err)
		return nil, nil, failure(decideToolName, "Loading the approval's call failed; try again in a moment.")
	}
	return a, call, nil
}

// hand gives a decision to the workflow that waits for it; "" when it was taken, else what a
// person reads.
func (f *frontDoor) hand(ctx context.Context, a *models.Approval, d workflows.ApprovalDecision) string {
	dctx, cancel := context.WithTimeout(ctx, decisionTimeout)
	defer cancel()
	_, err := f.d.Workflows.DecideApproval(dctx, a.WorkflowID, d)
	var refused *durable.DecisionRefusedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &refused):
		if now, gerr := f.d.Approvals.Get(ctx, a.ID); gerr == nil && now.Status != domain.ApprovalPending {
			return now.AlreadyDecided()
		}
		return "The decision was refused: " + refused.Message
	case errors.Is(err, durable.ErrNotWaiting):
		return "The call is no longer waiting for this approval; nothing was changed."
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return "No copilot worker took the decision within " + decisionTimeout.String() + "; it was not recorded. Decide again in a moment."
	}
	f.log.Error("handing an MCP decision to the workflow failed", "approval", a.ID, "error", err)
	return "Handing the decision to the workflow failed; try again in a moment."
}

// approveWaiting approves, as part of an approve_all on approval given, the other approvals of
// the same MCP session and user still waiting.
func (f *frontDoor) approveWaiting(ctx context.Context, caller auth.Caller, given *models.Approval) {
	rows, err := f.d.Approvals.ForSession(ctx, given.SessionID)
	if err != nil {
		f.log.Warn("approve_all: listing the session's approvals", "session", given.SessionID, "error", err)
		return
	}
	for i := range rows {
		a := &rows[i]
		if a.ID == given.ID || a.UserID != caller.ID || a.Status != domain.ApprovalPending {
			continue
		}
		d := workflows.ApprovalDecision{ApprovalID: a.ID, Decision: workflows.DecisionApprove, UserID: caller.ID, Username: caller.Username, Standing: true}
		if msg := f.hand(ctx, a, d); msg != "" {
			f.log.Warn("approve_all: a further approval of the session was not decided", "approval", a.ID, "reason", msg)
		}
	}
}

// standingOf is the MCP session's approve_all, when its user gave one: later calls of the
// session are approved by it, and the audit names it.
func (f *frontDoor) standingOf(ctx context.Context, sessionID, userID string) *workflows.ApprovalOutcome {
	rows, err := f.d.Approvals.ForSession(ctx, sessionID)
	if err != nil {
		f.log.Warn("reading the session's approve_all", "session", sessionID, "error", err)
		return nil
	}
	for _, a := range rows {
		if a.Standing && a.Status == domain.ApprovalApproved && a.UserID == userID {
			return &workflows.ApprovalOutcome{ApprovalID: a.ID, Status: a.Status, DecidedBy: a.DecidedBy, Standing: true}
		}
	}
	return nil
}

// pendingApproval is the approval a call waits for now, if any.
func (f *frontDoor) pendingApproval(ctx context.Context, callID string) *models.Approval {
	rows, err := f.d.Approvals.PendingForTurn(ctx, callID)
	if err != nil || len(rows) == 0 {
		return nil
	}
	return &rows[0]
}
