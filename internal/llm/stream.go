package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// Prompt is what a streamed call sends: the conversation and the tools the model may call.
type Prompt struct {
	Messages []Message
	Tools    []openai.Tool
	// NoToolCalls keeps the tools in the request and forbids calling them (tool_choice "none"):
	// a call that must answer in words sends the same start of request as the calls before it,
	// which a prefix cache then serves. A provider that refuses tool_choice, or ignores it, is
	// sent no tools instead (llmconfig.ShapeRequest, Stream).
	NoToolCalls bool
}

// Deltas receives a streamed answer while it arrives; a nil function is not called. They are
// called from the goroutine that called Stream.
type Deltas struct {
	// Content gets each piece of the answer's text, never reasoning.
	Content func(text string)
	// Reasoning gets each piece of what a thinking model writes before its answer, whichever
	// field or tags it came in.
	Reasoning func(text string)
	// ToolCall gets a tool call as far as it has arrived, its arguments accumulated, on every
	// fragment.
	ToolCall func(call ToolCall)
}

// Stream makes a streamed call with s's model, temperature and token limit, shaped for s's
// provider and its dialect, and asks for the usage. Tool calls are accumulated by index, so
// parallel calls whose fragments interleave come out whole. A stream that ends without a finish
// reason was cut off: its Error wraps ErrCutOff; one whose provider sent nothing for the idle
// timeout (no data, no reasoning, no keep-alive) stalled: its Error wraps ErrStalled. When ctx
// ends, its error is returned as it is.
func (c *Client) Stream(ctx context.Context, s llmconfig.Settings, p Prompt, d Deltas) (Answer, error) {
	began := time.Now()
	req, extra := streamRequest(s, p)
	ans, err := c.stream(ctx, s, req, extra, p.Messages, d, began)
	if req.ToolChoice != nil && refusedToolChoice(err) {
		// The provider takes no tool_choice of "none" (some gateways take only "auto"): the call
		// is made again the way a model that must answer in words always can be, without tools.
		// The refusal came before any token, so nothing was streamed twice.
		req.Tools, req.ToolChoice = nil, nil
		ans, err = c.stream(ctx, s, req, extra, p.Messages, d, began)
	}
	ans.Took = time.Since(began)
	return ans, err
}

// refusedToolChoice reports a request refused for its tool_choice.
func refusedToolChoice(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == RequestRefused && strings.Contains(strings.ToLower(e.Message), "tool_choice")
}

// streamRequest is the request for s's model, adapted to its provider, with the fields
// go-openai's request lacks (how much the model thinks, in its provider's words). Its messages
// are left out: the dialect writes them (requestBody).
func streamRequest(s llmconfig.Settings, p Prompt) (openai.ChatCompletionRequest, map[string]any) {
	req := openai.ChatCompletionRequest{
		Model:         s.Model,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Tools:         p.Tools,
	}
	if p.NoToolCalls && len(p.Tools) > 0 {
		req.ToolChoice = "none"
	}
	if s.Temperature != nil {
		req.Temperature = float32(*s.Temperature)
		if req.Temperature == 0 {
			// go-openai leaves a zero temperature out of the request (the provider's default,
			// often 1, would then apply); the smallest positive float is zero in effect.
			req.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if s.MaxTokens > 0 {
		req.MaxTokens = s.MaxTokens
	}
	llmconfig.ShapeRequest(s, &req)
	extra := llmconfig.ShapeThinking(s, &req, llmconfig.ForTurn)
	return req, extra
}

func (c *Client) stream(ctx context.Context, s llmconfig.Settings, req openai.ChatCompletionRequest, extra map[string]any, msgs []Message, d Deltas, began time.Time) (Answer, error) {
	var ans Answer
	failed := func(err error) (Answer, error) {
		ans.ErrorClass = llmconfig.ErrorClass(err)
		return ans, classify(ctx, err, s)
	}
	body, err := requestBody(req, msgs, extra)
	if err != nil {
		return ans, fmt.Errorf("writing the request: %w", err)
	}
	stall := func() (Answer, error) {
		ans.ErrorClass = llmconfig.ErrorTimeout
		return ans, &Error{Kind: Unavailable, cause: ErrStalled, Message: fmt.Sprintf(
			"the LLM provider at %s sent nothing for %s, not even a keep-alive; retrying.", s.BaseURL, c.idle)}
	}
	ex := &exchange{body: body, stream: true}
	callCtx, watch := watchIdle(ctx, c.idle)
	defer watch.stop()
	st, err := c.openAI(s).CreateChatCompletionStream(withExchange(callCtx, ex), req)
	if err != nil {
		if stalled(callCtx) && ctx.Err() == nil {
			return stall()
		}
		return failed(ex.failure(err))
	}
	defer st.Close()
	watch.alive() // the headers came
	// A base URL that serves a web page answers 200 with HTML, which go-openai reads as an empty
	// stream; the content type tells the two apart.
	if ct := st.Header().Get("Content-Type"); ct != "" && !strings.Contains(ct, "event-stream") && !strings.Contains(ct, "json") {
		ans.ErrorClass = llmconfig.ErrorOther
		return ans, &Error{Kind: Misconfigured, Message: fmt.Sprintf(
			"the LLM provider at %s answered with %q instead of an event stream: check the base URL of your LLM configuration (it usually ends in /v1).",
			s.BaseURL, providerMessage(ct))}
	}

	a := newAnswer(dialectFor(s), s.Model, d, began)
	events := newEventReader(watch.reader(ex.resp.Body))
	for {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = a.chunk(data, &ans)
		}
		if err != nil {
			a.done()
			a.fill(&ans)
			if stalled(callCtx) && ctx.Err() == nil {
				return stall()
			}
			return failed(err)
		}
	}
	a.done()
	a.fill(&ans)
	if ctx.Err() != nil {
		ans.ErrorClass = llmconfig.ErrorClass(ctx.Err())
		return ans, ctx.Err()
	}
	if stalled(callCtx) {
		return stall()
	}
	if ans.FinishReason == "" {
		// A stream cut off cleanly looks like a short answer; without a finish reason it is not one.
		ans.ErrorClass = llmconfig.ErrorServer
		return ans, &Error{Kind: Unavailable, cause: ErrCutOff, Message: fmt.Sprintf(
			"the LLM provider at %s ended the answer without finishing it; retrying.", s.BaseURL)}
	}
	ans.ToolCalls = a.calls.whole()
	return ans, nil
}

// chunk reads one event of the stream into a and ans (usage, finish reason); an error the
// provider sent in the stream is returned in its own words.
func (a *answer) chunk(data []byte, ans *Answer) error {
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	if !isNull(c.Error) {
		return &openai.APIError{Message: providerWords(c.Error)}
	}
	if c.Usage != nil {
		ans.InputTokens, ans.OutputTokens = int64(c.Usage.PromptTokens), int64(c.Usage.CompletionTokens)
		ans.ReasoningTokens = reasoningTokens(&c.Usage.Usage)
	}
	if n := c.cachedTokens(); n > 0 {
		ans.CachedTokens = n
	}
	for _, ch := range c.Choices {
		a.take(ch.Delta)
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			ans.FinishReason = *ch.FinishReason
		}
	}
	return nil
}

// reasoningTokens is the part of a usage's completion tokens spent on reasoning, as the provider
// reports it; a provider that says nothing of it counts 0.
func reasoningTokens(u *openai.Usage) int64 {
	if u == nil || u.CompletionTokensDetails == nil {
		return 0
	}
	return int64(u.CompletionTokensDetails.ReasoningTokens)
}
