package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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

// run records the call, hands its credential to the worker side, starts its workflow and waits
// for its result, relaying its progress. If the client goes away the workflow goes on; its
// result stays in the call's record.
func (f *frontDoor) run(ctx context.Context, req *sdk.CallToolRequest, caller auth.Caller, st sessionSettings, tool, projectID, args string) (*sdk.CallToolResult, error) {
	callID := uuid.NewString()
	wfID := workflows.MCPCallID(tool, callID)
	sessionID := req.Session.ID()
	// Setting the call up must not be cut short by a client that hangs up: it is either fully
	// started or fully undone.
	bg := context.WithoutCancel(ctx)
	w := f.d.Work
	call := &mcpCall{f: f, caller: caller, client: st.client,
		row: &models.MCPCall{ID: callID, WorkflowID: wfID, SessionID: sessionID, UserID: caller.ID, ProjectID: projectID,
			ToolName: tool, Client: st.client, Mode: string(st.mode)},
		in: workflows.MCPCallInput{Call: workflows.WorkRef{SessionID: sessionID, TurnID: callID, ProjectID: projectID, UserID: caller.ID,
			Mode: string(st.mode), Origin: workflows.OriginMCPPrefix + st.client},
			Tool:     workflows.ToolCall{ID: callID, Name: tool, Arguments: args},
			Approval: w.Approval, ApprovalTimeout: w.ApprovalTimeout, DeviceConcurrency: w.DeviceConcurrency, CredentialTTL: w.CredentialTTL}}
	if w.Approval != "" {
		call.in.Standing = f.standingOf(bg, sessionID, caller.ID)
	}
	err := f.launcher.Launch(bg, call, caller.Token)
	var step *durable.StepError
	var limit *models.LimitError
	switch {
	case errors.As(err, &step):
		return failure(tool, step.What+"; nothing was done, try again in a moment."), nil
	case errors.As(err, &limit):
		return failure(tool, fmt.Sprintf("You already have %d MCP calls running (at most %d at once per user); "+
			"wait for one to finish (get_mcp_call_result without call_id lists them) and call again.", limit.Running, limit.Max)), nil
	case err != nil:
		f.log.Error("recording an MCP call", "error", err)
		return nil, errors.New("recording the call failed; the copilot logged the details")
	}
	return f.await(ctx, req, caller, callID, wfID, tool)
}

// mcpCall is an MCP call being launched (durable.Work): its record and its MCPCall workflow.
type mcpCall struct {
	f      *frontDoor
	caller auth.Caller
	client string
	row    *models.MCPCall
	in     workflows.MCPCallInput
}

func (c *mcpCall) ID() string   { return c.row.ID }
func (c *mcpCall) Noun() string { return "call" }

func (c *mcpCall) Claim(ctx context.Context) error {
	return c.f.d.Calls.Start(ctx, c.row, c.f.d.MaxCallsPerUser)
}

// Repair closes the user's calls still recorded as running whose workflow is gone (ended
// without finishing the record, e.g. terminated by an operator), so they stop counting against
// the limit.
func (c *mcpCall) Repair(ctx context.Context, err error) bool {
	var limit *models.LimitError
	return errors.As(err, &limit) && c.f.closeStale(ctx, c.caller.ID) > 0
}

func (c *mcpCall) Start(ctx context.Context) error {
	return c.f.d.Workflows.StartMCPCall(ctx, c.row.WorkflowID, c.in, c.caller.Username, c.client)
}

func (c *mcpCall) Abandon(ctx context.Context, why string) error {
	return c.f.d.Calls.Finish(ctx, c.row.ID, domain.MCPCallFailed, failureJSON(c.row.ToolName, why), time.Now())
}

// closeStale closes the user's calls whose workflow is gone and returns how many it closed.
func (f *frontDoor) closeStale(ctx context.Context, userID string) int {
	rows, err := f.d.Calls.Running(ctx, userID)
	if err != nil {
		f.log.Warn("listing running MCP calls", "user", userID, "error", err)
		return 0
	}
	closed := 0
	for _, r := range rows {
		if gone, err := f.launcher.Gone(ctx, r.WorkflowID, r.CreatedAt); err != nil || !gone {
			continue
		}
		if err := f.d.Calls.Finish(ctx, r.ID, domain.MCPCallFailed, failureJSON(r.ToolName, "The call's workflow ended without finishing the call."), time.Now()); err == nil {
			closed++
		}
	}
	return closed
}

// await waits for the call's workflow, relaying its progress when the client asked for it. A
// call that comes to wait for an approval answers at once with its plan (the two-phase answer,
// pendingResult) unless the client can ask its user, who then has ElicitTimeout to answer.
func (f *frontDoor) await(ctx context.Context, req *sdk.CallToolRequest, caller auth.Caller, callID, wfID, tool string) (*sdk.CallToolResult, error) {
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	relayed := make(chan struct{})
	// toldWaiting hears each approval the progress has announced, so that a client that gets
	// the plan as its answer has had the announcement first.
	var toldWaiting chan string
	if token := req.Params.GetProgressToken(); token != nil {
		toldWaiting = make(chan string, 8)
		go func() {
			defer close(relayed)
			f.relayProgress(pctx, req.Session, token, callID, wfID, toldWaiting)
		}()
	} else {
		close(relayed)
	}
	ended := make(chan error, 1)
	go func() { ended <- f.d.Workflows.Wait(pctx, wfID) }()
	asked := make(chan approvalAsked, 4)
	go f.follow(pctx, callID, func(ev relay.Event) bool {
		switch ev.Type {
		case relay.TypeDone:
			return true
		case relay.TypeApprovalRequired:
			var p relay.Payload
			if id := relay.ApprovalIDOf(ev.Data); id != "" && json.Unmarshal(ev.Data, &p) == nil {
				select {
				case asked <- approvalAsked{id: id, question: p.Content}:
				case <-pctx.Done():
					return true
				}
			}
		}
		return false
	})
	answered := make(chan bool, 1)
	var waiting *models.Approval
	for {
		select {
		case err := <-ended:
			if ctx.Err() != nil {
				// The client is gone or gave up; the call goes on and its result waits in its record.
				return nil, ctx.Err()
			}
			if err != nil {
				f.log.Warn("an MCP call's workflow failed", "call", callID, "error", err)
			}
			// The last progress is sent before the result.
			f.drainProgress(pctx, stop, relayed)
			return f.resultOf(context.WithoutCancel(ctx), callID, tool)
		case q := <-asked:
			a, err := f.d.Approvals.Get(ctx, q.id)
			if err != nil || a.Status != domain.ApprovalPending {
				continue // decided already (by an earlier decide_approval, the chat page)
			}
			if !elicits(req.Session) {
				awaitAnnounced(pctx, toldWaiting, a.ID)
				return f.pendingResult(ctx, a, wfID), nil
			}
			waiting = a
			go func() { answered <- f.askByElicitation(pctx, req.Session, caller, a, q.question) }()
		case decided := <-answered:
			if !decided {
				// Unanswered in time, dismissed or not understood: the two phases take over.
				if a, err := f.d.Approvals.Get(ctx, waiting.ID); err == nil && a.Status == domain.ApprovalPending {
					return f.pendingResult(ctx, a, wfID), nil
				}
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// approvalAsked is an approval_required event of the call.
type approvalAsked struct{ id, question string }

// drainProgress lets the relay send what the log holds up to the call's end, briefly.
func (f *frontDoor) drainProgress(ctx context.Context, stop context.CancelFunc, relayed <-chan struct{}) {
	select {
	case <-relayed:
	case <-time.After(2 * time.Second):
		stop()
		<-relayed
	case <-ctx.Done():
	}
}

// awaitAnnounced waits, briefly, until the progress relay has announced approval id; nil told
// (no progress asked for) waits for nothing.
func awaitAnnounced(ctx context.Context, told <-chan string, id string) {
	if told == nil {
		return
	}
	limit := time.NewTimer(2 * time.Second)
	defer limit.Stop()
	for {
		select {
		case got := <-told:
			if got == id {
				return
			}
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// resultOf is a finished call's stored result.
func (f *frontDoor) resultOf(ctx context.Context, callID, tool string) (*sdk.CallToolResult, error) {
	row, err := f.d.Calls.Get(ctx, callID)
	if err != nil {
		return nil, fmt.Errorf("loading the call's result: %w", err)
	}
	meta := sdk.Meta{"call_id": row.ID, "workflow_id": row.WorkflowID, "status": row.Status}
	if row.Result == "" {
		return failureMeta(tool, "The call's workflow ended without a result; the copilot's log says why.", meta), nil
	}
	return standardResult(row.Result, meta), nil
}

func failureMeta(tool, msg string, meta sdk.Meta) *sdk.CallToolResult {
	r := failure(tool, msg)
	r.Meta = meta
	return r
}

// relayProgress turns the call's tool_progress and approval events into MCP progress
// notifications: the per-device and node-start progress a chat turn streams.
func (f *frontDoor) relayProgress(ctx context.Context, ss *sdk.ServerSession, token any, callID, wfID string, told chan<- string) {
	n := 0
	send := func(msg string) {
		n++
		if err := ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg}); err != nil && ctx.Err() == nil {
			f.log.Debug("sending MCP progress", "call", callID, "error", err)
		}
	}
	send(fmt.Sprintf("call %s started (workflow %s); if the connection drops, get_mcp_call_result with this call_id returns the result", callID, wfID))
	f.follow(ctx, callID, func(ev relay.Event) bool {
		var p struct {
			Progress *tools.Progress      `json:"progress"`
			Approval *models.ApprovalView `json:"approval"`
		}
		if json.Unmarshal(ev.Data, &p) != nil {
			return false
		}
		switch ev.Type {
		case relay.TypeToolProgress:
			if p.Progress != nil {
				msg := p.Progress.ItemName + ": " + p.Progress.Status
				if p.Progress.Message != "" {
					msg += " (" + p.Progress.Message + ")"
				}
				send(msg)
			}
		case relay.TypeApprovalRequired:
			if p.Approval != nil {
				send(fmt.Sprintf("waiting for approval %s: decide_approval decides it, or the user on the copilot's chat page "+
					"(pending approvals)", p.Approval.ApprovalID))
				select {
				case told <- p.Approval.ApprovalID:
				default:
				}
			}
		case relay.TypeApprovalResolved:
			if p.Approval != nil {
				send("approval " + p.Approval.ApprovalID + ": " + p.Approval.Status)
			}
		case relay.TypeDone:
			return true
		}
		return false
	})
}

// follow hands each event of the call's log to on, in order, until on says stop, the log
// fails or ctx ends.
func (f *frontDoor) follow(ctx context.Context, callID string, on func(relay.Event) (stop bool)) {
	last := ""
	for ctx.Err() == nil {
		evs, err := f.d.Events.Wait(ctx, callID, last, 30*time.Second)
		if err != nil {
			return
		}
		for _, ev := range evs {
			last = ev.ID
			if on(ev) {
				return
			}
		}
	}
}

// callResultTool fetches a call's result again, for a client whose connection dropped.
var callResultTool = &sdk.Tool{
	Name: "get_mcp_call_result",
	Description: "Fetch the result of an earlier MCP tool call by its call_id (from the call's first progress notification " +
		"or its result's _meta), waiting up to wait_seconds for a call still running. Without call_id, list your " +
		"recent MCP calls with their ids and status.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"call_id":{"type":"string","description":"The call's id."},` +
		`"wait_seconds":{"type":"integer","minimum":0,"maximum":60,"description":"How long to wait for a running call (default 0)."}}}`),
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
}

const callResultToolName = "get_mcp_call_result"

func (s *session) callResult(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	caller, ok := callerOf(req.Extra)
	if !ok {
		return nil, errors.New("unauthenticated")
	}
	var in struct {
		CallID      string `json:"call_id"`
		WaitSeconds *int   `json:"wait_seconds"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return failure(callResultToolName, "arguments must be {\"call_id\": string, \"wait_seconds\": 0-60}: "+err.Error()), nil
		}
	}
	wait := 0
	if in.WaitSeconds != nil {
		if *in.WaitSeconds < 0 || *in.WaitSeconds > 60 {
			return failure(callResultToolName, "wait_seconds must be from 0 to 60"), nil
		}
		wait = *in.WaitSeconds
	}
	if in.CallID == "" {
		return s.f.recentCalls(ctx, caller)
	}
	row, err := s.f.d.Calls.Get(ctx, in.CallID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && row.UserID != caller.ID) {
		return failure(callResultToolName, fmt.Sprintf("No MCP call %q of yours.", respond.Truncate(in.CallID, 80))), nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading the call: %w", err)
	}
	if row.Status == domain.MCPCallRunning && wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(wait)*time.Second)
		_ = s.f.d.Workflows.Wait(wctx, row.WorkflowID)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if row, err = s.f.d.Calls.Get(ctx, in.CallID); err != nil {
			return nil, fmt.Errorf("loading the call: %w", err)
		}
	}
	if row.Status == domain.MCPCallRunning {
		if a := s.f.pendingApproval(ctx, row.ID); a != nil {
			// Waiting for its owner: the plan and how to decide.
			return s.f.pendingResult(ctx, a, row.WorkflowID), nil
		}
		r := tools.Collect([]tools.Item{{ID: row.ID, Name: row.ToolName, Status: domain.MCPCallRunning,
			Result: "still running since " + row.CreatedAt.UTC().Format(time.RFC3339) + "; ask again later"}})
		r.Success = true
		r.Metadata = map[string]any{"tool_name": callResultToolName, "version": tools.FormatVersion}
		return standardResult(r.JSON(), sdk.Meta{"call_id": row.ID, "workflow_id": row.WorkflowID, "status": row.Status}), nil
	}
	return s.f.resultOf(ctx, row.ID, row.ToolName)
}

// recentCalls lists the caller's latest MCP calls.
func (f *frontDoor) recentCalls(ctx context.Context, caller auth.Caller) (*sdk.CallToolResult, error) {
	rows, err := f.d.Calls.Recent(ctx, caller.ID, 20)
	if err != nil {
		return nil, fmt.Errorf("listing your calls: %w", err)
	}
	items := make([]tools.Item, 0, len(rows))
	for _, r := range rows {
		items = append(items, tools.Item{ID: r.ID, Name: r.ToolName, Status: r.Status,
			Result: fmt.Sprintf("project %s, from %s, started %s", r.ProjectID, r.Client, r.CreatedAt.UTC().Format(time.RFC3339))})
	}
	res := tools.Collect(items)
	// Listing worked, whatever the calls' own outcomes.
	res.Success, res.Error, res.Successful, res.Failed = true, "", len(items), 0
	res.Metadata = map[string]any{"tool_name": callResultToolName, "version": tools.FormatVersion}
	return standardResult(res.JSON(), nil), nil
}
