package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// LLMCall streams one model call: it builds the prompt from the stored transcript and the
// project's current topology, publishes text and tool-call deltas as they arrive, and stores
// the assistant message. Temporal owns retries (the client makes none), and a retried attempt
// first tells clients to drop the partial text of the failed one.
func (a *Activities) LLMCall(ctx context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
	turn, err := a.Repo.Turn(ctx, in.Turn.TurnID)
	if err != nil {
		return workflows.LLMResult{}, fmt.Errorf("loading turn: %w", err)
	}
	settings, err := a.LLM.Load(ctx, turn.LLMConfigID)
	if err != nil {
		return workflows.LLMResult{}, llmSettingsError(err)
	}
	if turn.Temperature != nil {
		t := *turn.Temperature
		settings.Temperature = &t
	}
	mode, err := tools.ParseMode(in.Turn.Mode)
	if err != nil {
		return workflows.LLMResult{}, temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeLLMConfig, nil)
	}
	prompt, err := a.prompt(ctx, in, turn, mode, settings)
	if err != nil {
		return workflows.LLMResult{}, err
	}

	msgID := models.MessageID(turn.ID, in.MessageIndex)
	a.announceRetry(ctx, in.Turn, msgID)
	stopHeartbeats := keepAlive(ctx, 2*time.Second)
	defer stopHeartbeats()
	callCtx, release := a.abortable(ctx, turn.ID)
	answer, callErr := a.streamToTurn(callCtx, settings, prompt, in.Turn, msgID)
	if prompt.NoToolCalls {
		// A server that ignored tool_choice "none": the step may not run tools, so none are kept.
		answer.ToolCalls = nil
	}
	if release() && callErr != nil {
		callErr, answer.ErrorClass = abortedError(), llmconfig.ErrorCancelled
	}
	a.recordLLMCall(settings, answer)

	// Whatever arrived is stored, also when the call failed or was cancelled: a retry replaces
	// it, and otherwise it is the partial answer the user already saw.
	if callErr == nil || answer.Content != "" {
		// A cancelled context cannot write; the store must still happen.
		if err := a.saveAnswer(context.WithoutCancel(ctx), turn, in.MessageIndex, settings, answer, callErr != nil); err != nil {
			return workflows.LLMResult{}, err
		}
	}
	if callErr != nil {
		return workflows.LLMResult{}, callErr
	}
	var calls []workflows.ToolCall
	for _, c := range answer.ToolCalls {
		calls = append(calls, workflows.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return workflows.LLMResult{MessageID: msgID, ToolCalls: calls, FinishReason: answer.FinishReason,
		InputTokens: answer.InputTokens, OutputTokens: answer.OutputTokens, ReasoningTokens: answer.ReasoningTokens,
		CachedTokens: answer.CachedTokens}, nil
}

// saveAnswer stores the model's message of the turn, with its reasoning and the state its
// provider needs back (llm.AnswerRow). Its tool calls are kept only from a call that succeeded: a
// failed call's are incomplete, and nothing will run them.
func (a *Activities) saveAnswer(ctx context.Context, turn *models.ChatTurn, idx int, settings llmconfig.Settings, answer llm.Answer, failed bool) error {
	stored := llm.AnswerRow(settings, answer, !failed)
	stored.ID, stored.SessionID, stored.TurnID, stored.TurnSeq, stored.Idx = models.MessageID(turn.ID, idx), turn.SessionID, turn.ID, turn.Seq, idx
	meta := map[string]any{"model": settings.Model, "input_tokens": answer.InputTokens, "output_tokens": answer.OutputTokens,
		"cached_tokens": answer.CachedTokens}
	if answer.ReasoningTokens > 0 {
		meta["reasoning_tokens"] = answer.ReasoningTokens
	}
	if failed {
		meta["incomplete"] = true
	}
	metaJSON, _ := json.Marshal(meta)
	stored.Metadata = string(metaJSON)
	if err := a.Repo.SaveMessage(ctx, &stored); err != nil {
		return fmt.Errorf("storing the assistant message: %w", err)
	}
	return nil
}

// announceRetry tells clients to drop the text of an earlier run of this model call, when there
// was one.
func (a *Activities) announceRetry(ctx context.Context, ref workflows.WorkRef, msgID string) {
	if n := attempt(ctx); n > 1 {
		a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeRetry, SessionID: ref.SessionID, Attempt: n})
	} else if a.lostRunStreamed(ctx, ref.TurnID, msgID) {
		a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeRetry, SessionID: ref.SessionID, Attempt: 2})
	}
}

// lostRunStreamed reports whether an earlier run of this model call streamed into the turn and
// died unseen. A local activity whose workflow task was lost with its worker runs again as
// attempt 1: the clue is the log, whose newest event is then that run's text or reasoning of this
// message, or a tool call (every finished call's tool calls are followed by their tools' events).
func (a *Activities) lostRunStreamed(ctx context.Context, turnID, msgID string) bool {
	if !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return false // an activity's attempt counts its runs
	}
	ev, ok, err := a.Events.Last(ctx, turnID)
	if err != nil {
		a.logger(ctx).Warn("reading the turn's last event", "turn", turnID, "error", err)
		return false
	}
	if !ok {
		return false
	}
	switch ev.Type {
	case relay.TypeToolCall:
		return true
	case relay.TypeContent, relay.TypeReasoning:
		var p struct {
			MessageID string `json:"message_id"`
		}
		return json.Unmarshal(ev.Data, &p) == nil && p.MessageID == msgID
	}
	return false
}

// streamToTurn makes the call and publishes its deltas to the turn's event log as they arrive,
// then each tool call once more, complete. Its error is the Temporal error the workflow's retry
// policy reads.
func (a *Activities) streamToTurn(ctx context.Context, settings llmconfig.Settings, prompt llm.Prompt,
	ref workflows.WorkRef, msgID string) (llm.Answer, error) {
	type argsSent struct {
		length int
		at     time.Time
	}
	sent := map[int]*argsSent{}
	q := newDeltaQueue(func(p relay.Payload) { a.publishTurn(ctx, ref, p) })
	answer, err := a.llmClient().Stream(ctx, settings, prompt, llm.Deltas{
		Content: func(text string) {
			q.push(relay.Payload{Type: relay.TypeContent, Content: text, MessageID: msgID, SessionID: ref.SessionID})
		},
		Reasoning: func(text string) {
			q.push(relay.Payload{Type: relay.TypeReasoning, Reasoning: text, MessageID: msgID, SessionID: ref.SessionID})
		},
		ToolCall: func(c llm.ToolCall) {
			if prompt.NoToolCalls {
				return // never run: no card for it
			}
			last, now := sent[c.Index], time.Now()
			if last != nil && !argsDue(len(c.Arguments), last.length, now.Sub(last.at)) {
				return
			}
			sent[c.Index] = &argsSent{length: len(c.Arguments), at: now}
			q.push(toolCallEvent(ref, c, false))
		},
	})
	q.close()
	// What the student sees of the model's words in a private turn, as the history shows it,
	// once the stream has ended (also cut off: its text is kept like any other).
	if private(ref) && strings.TrimSpace(answer.Content) != "" && (err == nil || errors.Is(err, llm.ErrCutOff)) {
		a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeContent, Content: models.InjectedText, MessageID: msgID, SessionID: ref.SessionID})
	}
	if err != nil {
		return answer, temporalLLMError(err)
	}
	if prompt.NoToolCalls {
		return answer, nil
	}
	for i := range answer.ToolCalls {
		c := &answer.ToolCalls[i]
		if c.ID == "" {
			// Some local servers send no ids; the transcript needs one to pair results.
			c.ID = fmt.Sprintf("call_%s_%d", strings.ReplaceAll(msgID, "-", "")[:12], c.Index)
		}
		a.publishTurn(ctx, ref, toolCallEvent(ref, *c, true))
	}
	return answer, nil
}

// toolCallEvent is the tool_call event of GNS3's chat API: the call with its arguments so far.
func toolCallEvent(ref workflows.WorkRef, c llm.ToolCall, complete bool) relay.Payload {
	return relay.Payload{Type: relay.TypeToolCall, SessionID: ref.SessionID, ToolCall: &relay.ToolCall{
		ID: c.ID, Type: "function", Index: c.Index, Function: relay.ToolCallFunction{Name: c.Name, Arguments: c.Arguments, Complete: complete}}}
}

// argsDue decides whether a tool call's accumulated arguments are sent again. The chat API's
// tool_call carries the whole arguments so far, so sending them on every chunk costs the square
// of their length (a 10 KB configuration in 7-byte chunks would be some 7 MB of events). They go
// out again when they have doubled, or at most every argsEvery while they grow, which keeps the
// total linear and the card on the page moving; the complete arguments always follow at the end.
func argsDue(length, sentLen int, since time.Duration) bool {
	return length > sentLen && (length >= 2*sentLen || since >= argsEvery)
}

// argsEvery is how often growing tool-call arguments are sent at most, apart from doubling.
const argsEvery = 250 * time.Millisecond

// llmClient is the client for model calls: the configured one, or one that reaches public
// addresses only.
func (a *Activities) llmClient() *llm.Client {
	if a.LLMClient != nil {
		return a.LLMClient
	}
	return publicOnlyLLMClient()
}

var publicOnlyLLMClient = sync.OnceValue(func() *llm.Client { return llm.NewClient(nil, nil) })

// recordLLMCall adds a model call to the metrics.
func (a *Activities) recordLLMCall(s llmconfig.Settings, answer llm.Answer) {
	a.Metrics.LLMCall(metrics.LLMCallStats{Provider: s.Provider, Model: s.Model, Took: answer.Took, FirstToken: answer.FirstToken,
		InputTokens: answer.InputTokens, OutputTokens: answer.OutputTokens, ReasoningTokens: answer.ReasoningTokens,
		CachedTokens: answer.CachedTokens, ErrorClass: answer.ErrorClass})
}

// temporalLLMError turns a failed model call into the error the workflow's retry policy reads:
// the configuration's faults are final, a provider in trouble is retried. The provider's error
// is not attached as the cause, so nothing it said beyond the message enters Temporal.
func temporalLLMError(err error) error {
	var failure *llm.Error
	if !errors.As(err, &failure) {
		return err // the context ended
	}
	switch failure.Kind {
	case llm.Misconfigured:
		return temporal.NewNonRetryableApplicationError(failure.Message, domain.ErrTypeLLMConfig, nil)
	case llm.KeyRejected:
		return temporal.NewNonRetryableApplicationError(failure.Message, domain.ErrTypeLLMAuth, nil)
	case llm.RequestRefused:
		return temporal.NewNonRetryableApplicationError(failure.Message, domain.ErrTypeLLMBadRequest, nil)
	}
	return temporal.NewApplicationError(failure.Message, domain.ErrTypeLLMUnavailable)
}
