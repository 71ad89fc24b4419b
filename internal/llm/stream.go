package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// Prompt is what a streamed call sends: the conversation and the tools the model may call.
type Prompt struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
}

// Deltas receives a streamed answer while it arrives; a nil function is not called. Both are
// called from the goroutine that called Stream.
type Deltas struct {
	// Content gets each piece of text.
	Content func(text string)
	// ToolCall gets a tool call as far as it has arrived, its arguments accumulated, on every
	// fragment.
	ToolCall func(call ToolCall)
}

// Stream makes a streamed call with s's model, temperature and token limit, shaped for s's
// provider, and asks for the usage. Tool calls are accumulated by index, so parallel calls whose
// fragments interleave come out whole. A stream that ends without a finish reason was cut off:
// its Error wraps ErrCutOff. When ctx ends, its error is returned as it is.
func (c *Client) Stream(ctx context.Context, s llmconfig.Settings, p Prompt, d Deltas) (Answer, error) {
	began := time.Now()
	ans, err := c.stream(ctx, s, streamRequest(s, p), d, began)
	ans.Took = time.Since(began)
	return ans, err
}

// streamRequest is the request for s's model, adapted to its provider.
func streamRequest(s llmconfig.Settings, p Prompt) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:         s.Model,
		Messages:      p.Messages,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Tools:         p.Tools,
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
	return req
}

func (c *Client) stream(ctx context.Context, s llmconfig.Settings, req openai.ChatCompletionRequest, d Deltas, began time.Time) (Answer, error) {
	var ans Answer
	failed := func(err error) (Answer, error) {
		ans.ErrorClass = llmconfig.ErrorClass(err)
		return ans, classify(ctx, err, s)
	}
	st, err := c.openAI(s).CreateChatCompletionStream(ctx, req)
	if err != nil {
		return failed(err)
	}
	defer st.Close()
	// A base URL that serves a web page answers 200 with HTML, which go-openai reads as an empty
	// stream; the content type tells the two apart.
	if ct := st.Header().Get("Content-Type"); ct != "" && !strings.Contains(ct, "event-stream") && !strings.Contains(ct, "json") {
		ans.ErrorClass = llmconfig.ErrorOther
		return ans, &Error{Kind: Misconfigured, Message: fmt.Sprintf(
			"the LLM provider at %s answered with %q instead of an event stream: check the base URL of your LLM configuration (it usually ends in /v1).",
			s.BaseURL, providerMessage(ct))}
	}

	calls := toolCallAccumulator{}
	var content strings.Builder
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ans.Content = content.String()
			return failed(err)
		}
		if chunk.Usage != nil {
			ans.InputTokens, ans.OutputTokens = int64(chunk.Usage.PromptTokens), int64(chunk.Usage.CompletionTokens)
		}
		for _, ch := range chunk.Choices {
			if ans.FirstToken == 0 && (ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
				ans.FirstToken = time.Since(began)
			}
			if ch.Delta.Content != "" {
				content.WriteString(ch.Delta.Content)
				if d.Content != nil {
					d.Content(ch.Delta.Content)
				}
			}
			for _, frag := range ch.Delta.ToolCalls {
				call := calls.add(frag)
				if d.ToolCall != nil {
					d.ToolCall(call)
				}
			}
			if ch.FinishReason != "" {
				ans.FinishReason = string(ch.FinishReason)
			}
		}
	}
	ans.Content = content.String()
	if ctx.Err() != nil {
		ans.ErrorClass = llmconfig.ErrorClass(ctx.Err())
		return ans, ctx.Err()
	}
	if ans.FinishReason == "" {
		// A stream cut off cleanly looks like a short answer; without a finish reason it is not one.
		ans.ErrorClass = llmconfig.ErrorServer
		return ans, &Error{Kind: Unavailable, cause: ErrCutOff, Message: fmt.Sprintf(
			"the LLM provider at %s ended the answer without finishing it; retrying.", s.BaseURL)}
	}
	ans.ToolCalls = calls.whole()
	return ans, nil
}

// toolCallAccumulator joins the fragments of a stream's tool calls, keyed by their index.
type toolCallAccumulator map[int]*partialCall

type partialCall struct {
	id, name string
	args     strings.Builder
}

// add appends one fragment and returns its call as far as it has arrived.
func (calls toolCallAccumulator) add(frag openai.ToolCall) ToolCall {
	idx := len(calls)
	if frag.Index != nil {
		idx = *frag.Index
	} else if frag.ID == "" && len(calls) > 0 {
		idx = len(calls) - 1 // providers without indexes continue the last call
	}
	c := calls[idx]
	if c == nil {
		c = &partialCall{}
		calls[idx] = c
	}
	if frag.ID != "" {
		c.id = frag.ID
	}
	if frag.Function.Name != "" {
		c.name = frag.Function.Name
	}
	c.args.WriteString(frag.Function.Arguments)
	return ToolCall{Index: idx, ID: c.id, Name: c.name, Arguments: c.args.String()}
}

// whole returns the calls in the order of their index.
func (calls toolCallAccumulator) whole() []ToolCall {
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	var out []ToolCall
	for _, i := range idxs {
		c := calls[i]
		out = append(out, ToolCall{Index: i, ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	return out
}
