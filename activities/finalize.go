package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/memtrim"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// FinalizeTurn commits the turn's messages and statistics, forgets its credentials and sends
// its one terminal event. Every step is safe to repeat, so a retry after a crash changes nothing
// twice and never ends the stream a second time.
//
// Asked to (GenerateTitle), it first asks the model for the session's title, within
// titleBudget: a title is a nicety, and the turn must end whether or not one can be made. The
// title is stored with the turn's end, in the same transaction. A retry after the turn was
// finalized finds the session's first turn completed and calls no model again.
func (a *Activities) FinalizeTurn(ctx context.Context, in workflows.FinalizeInput) (workflows.FinalizeResult, error) {
	var res workflows.FinalizeResult
	if in.GenerateTitle {
		tctx, cancel := context.WithTimeout(ctx, titleBudget)
		title, err := a.proposeTitle(tctx, in.Turn)
		cancel()
		if err != nil {
			a.logger(ctx).Warn("title generation failed", "error", err)
		}
		if title.Called {
			res.TitleCalled = true
			in.LLMCalls++
			in.InputTokens += title.InputTokens
			in.OutputTokens += title.OutputTokens
			in.ReasoningTokens += title.ReasoningTokens
			in.CachedTokens += title.CachedTokens
		}
		in.Title = title.Title
	}
	return res, a.finalize(ctx, in)
}

// titleBudget bounds the title call inside the finalizer, whose attempts have a minute.
const titleBudget = 20 * time.Second

func (a *Activities) finalize(ctx context.Context, in workflows.FinalizeInput) error {
	fin, err := a.Repo.FinishTurn(ctx, models.FinalizeParams{
		TurnID: in.Turn.TurnID, Status: in.Status, Error: in.Error, LLMCalls: in.LLMCalls,
		InputTokens: in.InputTokens, OutputTokens: in.OutputTokens, ReasoningTokens: in.ReasoningTokens, CachedTokens: in.CachedTokens,
		Title: in.Title,
	})
	if err != nil {
		return fmt.Errorf("finalizing turn: %w", err)
	}
	applied := fin.Applied
	if !fin.Titled {
		in.Title = "" // the user named the session, or it was named before
	}
	if applied {
		a.turnEnded(ctx, in, &fin.Turn)
		if isInjectionMode(in.Turn.Mode) {
			a.injectionOutcome(ctx, in.Turn) // before an error, which ends a panel's stream
		}
	}
	a.markTopology(ctx, in.Turn)
	if err := a.Credentials.Delete(ctx, in.Turn.TurnID); err != nil {
		a.logger(ctx).Warn("deleting turn credentials", "error", err)
	}
	// The done event repeats the error, so a retry that finds the turn already finalized need
	// not send this one again.
	if in.Status == domain.TurnFailed && applied {
		a.publish(ctx, in.Turn.TurnID, relay.Payload{Type: relay.TypeError, SessionID: in.Turn.SessionID, Error: in.Error})
	}
	if in.Status == domain.TurnCancelled && applied {
		a.publishAbort(ctx, in.Turn)
	}
	done := relay.Payload{Type: relay.TypeDone, SessionID: in.Turn.SessionID, TurnID: in.Turn.TurnID,
		Status: in.Status, Title: in.Title, Cancelled: in.Status == domain.TurnCancelled,
		Usage: map[string]int64{"llm_calls": in.LLMCalls, "input_tokens": in.InputTokens, "output_tokens": in.OutputTokens,
			"reasoning_tokens": in.ReasoningTokens, "cached_tokens": in.CachedTokens}}
	if in.Status == domain.TurnFailed {
		done.Error = in.Error
	}
	data, _ := json.Marshal(done)
	if err := a.appendDone(ctx, in.Turn.TurnID, data); err != nil {
		return fmt.Errorf("publishing the end of the turn: %w", err)
	}
	return nil
}

// publishAbort ends every tool call the client saw without an end with a tool_end saying it was
// aborted, then announces the abort, as GNS3's own copilot does before its done. The turn's own
// event log says which calls the client saw, including ones whose model call was cut off.
func (a *Activities) publishAbort(ctx context.Context, turn workflows.WorkRef) {
	events, err := a.Events.Range(ctx, turn.TurnID, "", 0)
	if err != nil {
		a.logger(ctx).Warn("reading the aborted turn's events", "error", err)
	}
	names := map[string]string{}
	var order []string
	for _, ev := range events {
		var p relay.Payload
		if json.Unmarshal(ev.Data, &p) != nil {
			continue
		}
		switch ev.Type {
		case relay.TypeToolCall:
			if p.ToolCall == nil || p.ToolCall.ID == "" {
				continue
			}
			if _, seen := names[p.ToolCall.ID]; !seen {
				order = append(order, p.ToolCall.ID)
			}
			names[p.ToolCall.ID] = p.ToolCall.Function.Name
		case relay.TypeToolStart:
			if _, seen := names[p.ToolCallID]; !seen && p.ToolCallID != "" {
				order = append(order, p.ToolCallID)
				names[p.ToolCallID] = p.ToolName
			}
		case relay.TypeToolEnd:
			delete(names, p.ToolCallID)
		}
	}
	for _, id := range order {
		name, pending := names[id]
		if !pending {
			continue
		}
		a.publish(ctx, turn.TurnID, relay.Payload{Type: relay.TypeToolEnd, SessionID: turn.SessionID, ToolCallID: id,
			ToolName: name, ToolOutput: models.UnrunToolResult(name, domain.TurnCancelled)})
	}
	a.publish(ctx, turn.TurnID, relay.Payload{Type: relay.TypeAbort, SessionID: turn.SessionID, TurnID: turn.TurnID,
		Status: domain.TurnCancelled})
}

// turnEnded writes the turn's closing log line and metrics, once: only the finalizer that
// applied the end gets here, with the turn as it ended. The line has ids and numbers only, never the conversation.
func (a *Activities) turnEnded(ctx context.Context, in workflows.FinalizeInput, t *models.ChatTurn) {
	end := time.Now()
	if t.FinishedAt != nil {
		end = *t.FinishedAt
	}
	d := end.Sub(t.CreatedAt)
	a.Metrics.TurnFinished(in.Status, in.Turn.Mode, d)
	// What the turn left is given back once the process has been quiet for a while.
	memtrim.Worked()
	a.baseLogger().Info("turn", "event", "end", "turn_id", in.Turn.TurnID, "session_id", in.Turn.SessionID,
		"project_id", in.Turn.ProjectID, "user_id", in.Turn.UserID, "mode", in.Turn.Mode, "status", in.Status,
		"steps", in.LLMCalls, "input_tokens", in.InputTokens, "output_tokens", in.OutputTokens, "reasoning_tokens", in.ReasoningTokens,
		"cached_tokens", in.CachedTokens, "duration", d)
}
