package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// isMCP tells a tool call an MCP client made from one of a chat turn: its result goes to the
// call's record, not to a transcript.
func isMCP(ref workflows.WorkRef) bool {
	return strings.HasPrefix(ref.Origin, workflows.OriginMCPPrefix)
}

// origin is what the device-command audit names as the one who asked.
func origin(ref workflows.WorkRef) string {
	if ref.Origin == "" {
		return "chat"
	}
	return ref.Origin
}

// storeMCPResult keeps an MCP call's result in its record and announces it on the call's
// event log, which the API tails for the client's progress notifications.
func (a *Activities) storeMCPResult(ctx context.Context, ref workflows.WorkRef, call workflows.ToolCall, res tools.Result, full string) error {
	err := a.MCPCalls.SaveResult(context.WithoutCancel(ctx), ref.TurnID, full)
	if errors.Is(err, models.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("the MCP call's record is gone", domain.ErrTypeMCPCallMissing, err)
	}
	if err != nil {
		return fmt.Errorf("storing the MCP call's result: %w", err)
	}
	a.Metrics.ToolCall(call.Name, res.Success, res.Metadata)
	a.publish(context.WithoutCancel(ctx), ref.TurnID, relay.Payload{Type: relay.TypeToolEnd, SessionID: ref.SessionID,
		ToolName: call.Name, ToolCallID: call.ID, ToolOutput: full})
	return nil
}

// FinishMCPCall closes an MCP call: its record gets its final status (and, when the tool could
// not run at all, a failed result saying why), its credential is removed, and its event log
// ends so it expires.
func (a *Activities) FinishMCPCall(ctx context.Context, in workflows.FinishMCPCallInput) error {
	status, result := domain.MCPCallCompleted, ""
	if in.Error != "" {
		status = domain.MCPCallFailed
		row, err := a.MCPCalls.Get(ctx, in.Call.TurnID)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("loading the MCP call: %w", err)
		}
		// A tool that stored its own result before the machinery failed keeps it.
		if row != nil && row.Result == "" {
			r := tools.Failure("%s", in.Error)
			r.Metadata = map[string]any{"tool_name": in.Tool.Name, "version": tools.FormatVersion}
			result = r.JSON()
		}
	}
	if err := a.MCPCalls.Finish(ctx, in.Call.TurnID, status, result, time.Now()); err != nil {
		return fmt.Errorf("finishing the MCP call: %w", err)
	}
	if err := a.Credentials.Delete(ctx, in.Call.TurnID); err != nil {
		a.logger(ctx).Warn("removing an MCP call's credential", "call", in.Call.TurnID, "error", err)
	}
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, SessionID: in.Call.SessionID, TurnID: in.Call.TurnID, Status: status, Error: in.Error})
	if err := a.appendDone(ctx, in.Call.TurnID, done); err != nil {
		return fmt.Errorf("ending the MCP call's event log: %w", err)
	}
	return nil
}
