package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// RunTool runs one tool call with the user's own GNS3 token, so GNS3's permissions apply to the
// copilot exactly as to the user. A tool that fails reports it in its result; only failures of
// the machinery (no credentials, database down) fail the activity.
func (a *Activities) RunTool(ctx context.Context, in workflows.ToolInput) (workflows.ToolResult, error) {
	env, mode, err := a.startTool(ctx, in)
	if err != nil {
		return workflows.ToolResult{}, err
	}
	if mode == tools.TroubleshootingInjection {
		env.RecordFault = a.faultRecorder(in.Turn, in.Call)
	}
	env.Console = a.console(ctx, workflows.ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name})
	stop := keepAlive(ctx, 2*time.Second)
	runCtx, release := a.abortable(ctx, in.Turn.TurnID)
	res := a.Tools.Execute(runCtx, env, mode, in.Call.Name, in.Call.Arguments)
	if in.Call.Name == tools.RestoreSnapshotTool {
		res, _ = a.afterRestore(runCtx, env, workflows.ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name}, res)
	}
	aborted := release()
	a.refreshAfter(ctx, in.Turn, in.Call.Name)
	stop()
	if err := a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res); err != nil {
		return workflows.ToolResult{}, err
	}
	if aborted {
		return workflows.ToolResult{}, abortedError()
	}
	if ctx.Err() != nil {
		return workflows.ToolResult{}, ctx.Err()
	}
	return workflows.ToolResult{Success: res.Success}, nil
}

// startTool announces a tool call and prepares what every tool needs: its environment, with
// progress on the call's card, and the turn's mode.
func (a *Activities) startTool(ctx context.Context, in workflows.ToolInput) (tools.Env, tools.Mode, error) {
	env, err := a.toolEnv(ctx, in.Turn)
	if err != nil {
		return tools.Env{}, "", err
	}
	mode, err := tools.ParseMode(in.Turn.Mode)
	if err != nil {
		return tools.Env{}, "", temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeLLMConfig, nil)
	}
	a.publishTurn(ctx, in.Turn, relay.Payload{Type: relay.TypeToolStart, SessionID: in.Turn.SessionID,
		ToolName: in.Call.Name, ToolCallID: in.Call.ID})
	env.Progress = a.cardProgress(ctx, in.Turn, in.Call)
	return env, mode, nil
}

// toolEnv is the tools' environment for a turn: the user's own GNS3 client (from the turn's
// credentials), so GNS3's permissions apply to the copilot as to the user. It reports no
// progress: a step the user must not see (an injection's save point) leaves it so.
func (a *Activities) toolEnv(ctx context.Context, ref workflows.WorkRef) (tools.Env, error) {
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		return tools.Env{}, credentialsError(err)
	}
	return tools.Env{
		ProjectID: ref.ProjectID,
		GNS3:      a.GNS3.WithToken(token),
		GNS3Host:  a.GNS3.Host(),
		Attempt:   attempt(ctx),
		Topology:  a.Live,
		// The skills' packet-analysis checks join the capture analysis's own.
		CaptureChecks: a.Skills.Current().Checks,
	}, nil
}

// cardProgress publishes a tool's progress on the call's card.
func (a *Activities) cardProgress(ctx context.Context, ref workflows.WorkRef, call workflows.ToolCall) func(tools.Progress) {
	return func(p tools.Progress) {
		a.publishTurn(ctx, ref, relay.Payload{Type: relay.TypeToolProgress, SessionID: ref.SessionID,
			ToolName: call.Name, ToolCallID: call.ID, Progress: p})
	}
}

// CheckDestructiveTool resolves a destructive lab tool's call against the lab as it is now,
// with the user's own credential, before anyone is asked about it. A call that cannot run as
// asked (an unknown snapshot, node or link, arguments it refuses) fails here as any other tool
// failure, its error naming what exists, and is reported Refused: nobody is asked to approve
// it. A call that can run, or whose lab could not be read to tell, goes on to its approval.
func (a *Activities) CheckDestructiveTool(ctx context.Context, in workflows.ToolInput) (workflows.DestructiveCheckResult, error) {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	check, err := a.labToolCheck(ctx, in.Turn, in.Call)
	if err != nil {
		return workflows.DestructiveCheckResult{}, err
	}
	if check.Refusal == nil {
		return workflows.DestructiveCheckResult{}, nil
	}
	a.publishTurn(ctx, in.Turn, relay.Payload{Type: relay.TypeToolStart, SessionID: in.Turn.SessionID,
		ToolName: in.Call.Name, ToolCallID: in.Call.ID})
	if err := a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, *check.Refusal); err != nil {
		return workflows.DestructiveCheckResult{}, err
	}
	return workflows.DestructiveCheckResult{Refused: true}, nil
}

// labToolCheck resolves a destructive lab tool's call with the turn's GNS3 credential (see
// tools.Registry.Check), for its check and its approval's plan.
func (a *Activities) labToolCheck(ctx context.Context, ref workflows.WorkRef, call workflows.ToolCall) (tools.Check, error) {
	if a.GNS3 == nil {
		return tools.Check{}, nil
	}
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		return tools.Check{}, credentialsError(err)
	}
	env := tools.Env{ProjectID: ref.ProjectID, GNS3: a.GNS3.WithToken(token), GNS3Host: a.GNS3.Host(), Attempt: 1, Topology: a.Live}
	return a.Tools.Check(ctx, env, call.Name, call.Arguments), nil
}

// RecordToolFailure gives the model a result for a call whose activity failed for good.
func (a *Activities) RecordToolFailure(ctx context.Context, in workflows.ToolFailureInput) error {
	res := tools.Result{Success: false, Data: []tools.Item{}, Error: in.Error,
		Metadata: map[string]any{"tool_name": in.Call.Name}}
	return a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res)
}

// storeToolResult stages the tool message and then announces it with the full result in
// tool_end. The message joins the session's history when the turn is finalized, so a client
// reads the result from tool_end while the turn runs, and from the history afterwards.
func (a *Activities) storeToolResult(ctx context.Context, ref workflows.WorkRef, call workflows.ToolCall, idx int, res tools.Result) error {
	full := res.JSON()
	if isMCP(ref) {
		return a.storeMCPResult(ctx, ref, call, res, full)
	}
	turn, err := a.Repo.Turn(context.WithoutCancel(ctx), ref.TurnID)
	if err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return temporal.NewNonRetryableApplicationError("the session was deleted", domain.ErrTypeSessionDeleted, err)
		}
		return fmt.Errorf("loading turn: %w", err)
	}
	msg := models.ChatMessage{ID: models.MessageID(turn.ID, idx), SessionID: turn.SessionID, TurnID: turn.ID,
		TurnSeq: turn.Seq, Idx: idx, Role: "tool", Name: call.Name, ToolCallID: call.ID, Content: full}
	if err := a.Repo.SaveMessage(context.WithoutCancel(ctx), &msg); err != nil {
		return fmt.Errorf("storing tool result: %w", err)
	}
	a.Metrics.ToolCall(call.Name, res.Success, res.Metadata)
	a.publishTurn(context.WithoutCancel(ctx), ref, relay.Payload{Type: relay.TypeToolEnd, SessionID: ref.SessionID,
		ToolName: call.Name, ToolCallID: call.ID, ToolOutput: full})
	return nil
}
