package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// MCP calls: a tool call that arrives over the Model Context Protocol runs as a workflow of its
// own, with the same activities, device fan-out, configuration jobs and approvals as a tool call
// of a chat turn, so an external agent gets the copilot's safety and durability, not a raw API.
const (
	MCPCallWorkflow = "MCPCall"
	// FinishMCPCallActivity closes the call's record, its credential and its event log.
	FinishMCPCallActivity = "FinishMCPCall"
	// OriginMCPPrefix starts the Origin of every MCP call ("mcp:<client name>").
	OriginMCPPrefix = "mcp:"
)

// MCPCallID makes an MCP call readable in the Temporal UI ("mcp-call-<tool>-<call id>") and
// unique per call.
func MCPCallID(tool, callID string) string {
	return fmt.Sprintf("mcp-call-%s-%s", tool, callID)
}

// MCPCallInput carries identifiers and settings only, like a turn's: the arguments are the
// model-facing tool arguments (no secret), the token stays in the worker-side credential store
// under the call id.
type MCPCallInput struct {
	// Call is the call's reference: TurnID is the call id, SessionID the MCP session, Origin
	// "mcp:<client>".
	Call WorkRef
	Tool ToolCall
	// Approval and ApprovalTimeout are the operator's settings, as for chat turns.
	Approval        string
	ApprovalTimeout time.Duration
	// DeviceConcurrency bounds the devices the call talks to at once (0: the default).
	DeviceConcurrency int
	// SearchAttributes says the call was started with ProjectId, SessionId, UserId and
	// ToolName, so its configuration job may carry them too.
	SearchAttributes bool
	// CredentialTTL is the lifetime of the call's stored credential; a call that may wait for
	// an approval renews it.
	CredentialTTL time.Duration
	// Standing is the MCP session's "approve all" (decide_approval's approve_all), when its
	// user gave one before this call: the call's approvals are decided by it, stored for the
	// audit, and nobody is asked.
	Standing *ApprovalOutcome `json:",omitempty"`
}

// MCPCallResult is how the call ended; the tool's result itself is in the call's record.
type MCPCallResult struct {
	Status string
	Error  string
}

// FinishMCPCallInput closes an MCP call. Error is set when the tool could not run at all (its
// activity failed for good); the record then gets a failed standard result saying why.
type FinishMCPCallInput struct {
	Call  WorkRef
	Tool  ToolCall
	Error string
}

// MCPCall runs one tool call for an MCP client: a configuration tool as a ConfigJob child
// (approval, read before and after, diff), a destructive lab tool behind an approval under
// domain.ApprovalChanges, a device tool fanned out per device, any other tool as one activity. It
// always ends by finishing the call's record, so a client that comes back by call id finds
// the result.
func MCPCall(ctx workflow.Context, in MCPCallInput) (MCPCallResult, error) {
	ref := in.Call
	approvals := in.Approval != ""
	gate, err := newApprovalGate(ctx, ref)
	if err != nil {
		return MCPCallResult{}, err
	}
	// Calls started before Standing existed carry none: nothing changes for their histories.
	gate.standing = in.Standing
	// A call is a turn's tool call without the model: the same runner, options and summaries.
	tools := newToolRunner(ctx, gate, toolSettings{ref: ref, approvals: approvals, approval: in.Approval, approvalTimeout: in.ApprovalTimeout,
		deviceConcurrency: in.DeviceConcurrency, searchAttributes: in.SearchAttributes})
	stopRenewing := func() {}
	if approvals {
		var rctx workflow.Context
		rctx, stopRenewing = workflow.WithCancel(ctx)
		keepCredential(rctx, ref, in.CredentialTTL)
	}

	// The slot is a transcript position in a turn; an MCP call has one result and no transcript.
	const slot = 0
	err = tools.run(ctx, in.Tool, slot)
	stopRenewing()

	res := MCPCallResult{Status: domain.MCPCallCompleted}
	if err != nil {
		res = MCPCallResult{Status: domain.MCPCallFailed, Error: failureMessage(err)}
	}
	// The record must be closed even when the call was cancelled, or its result would never come.
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	fctx = workflow.WithActivityOptions(fctx, finalizeOptions())
	if ferr := workflow.ExecuteActivity(summarized(fctx, "finish the MCP call: "+res.Status), FinishMCPCallActivity, FinishMCPCallInput{Call: ref, Tool: in.Tool, Error: res.Error}).Get(fctx, nil); ferr != nil {
		return res, fmt.Errorf("finishing the MCP call: %w", ferr)
	}
	return res, nil
}
