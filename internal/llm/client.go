// Package llm talks to OpenAI-compatible chat-completions endpoints for the copilot: it streams a
// completion and accumulates its tool calls, makes the short unstreamed calls, and turns every
// failure into an Error that says who can fix it and in words a person can act on. It knows
// nothing of turns, workflows or the event log; its callers decide what to publish and how to
// retry.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// Client makes model calls. One is built per process: the endpoint, model and key come with
// each call's settings, the transports stay.
type Client struct {
	trusted, untrusted *http.Client
	// idle is how long a stream may be silent before it is taken for stalled (0: no limit).
	idle time.Duration
}

// NewClient returns the client for model calls. Endpoints of trusted settings (the server
// default, a superadmin's or a group's configuration) are reached with trusted; nil keeps
// go-openai's default client, which has no overall timeout since a stream may run for minutes
// (the caller's context bounds it). Every other endpoint is reached only through untrusted,
// which must apply the outbound policy (package egress); nil means the strictest policy,
// public addresses only.
func NewClient(trusted, untrusted *http.Client) *Client {
	if untrusted == nil {
		strict, _ := egress.New(nil, false) // no hosts to parse, so no error
		untrusted = strict.Client()
	}
	return &Client{trusted: trusted, untrusted: untrusted, idle: DefaultIdleTimeout}
}

// WithIdleTimeout returns the client with streamed calls taken for stalled after d without a
// byte from the provider (DefaultIdleTimeout unless set; 0 or less: never).
func (c *Client) WithIdleTimeout(d time.Duration) *Client {
	cp := *c
	cp.idle = d
	return &cp
}

// Answer is what a model call produced, also when it failed part-way: the text that arrived is
// kept, so a caller can store the partial answer the user already saw.
type Answer struct {
	// Content is the answer, never the reasoning before it.
	Content string
	// Reasoning is what a thinking model wrote before its answer, as a person may read it.
	Reasoning string
	// ToolCalls are in the order of their index. ID is empty when the provider sent none.
	ToolCalls    []ToolCall
	FinishReason string
	InputTokens  int64
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens the model spent thinking, where the provider
	// reports it (completion_tokens_details.reasoning_tokens); 0 otherwise.
	ReasoningTokens int64
	// CachedTokens is the part of InputTokens the provider says its prompt cache served (0 when
	// it says nothing).
	CachedTokens int64
	// Took is the whole call; FirstToken the wait for the first text, reasoning or tool-call
	// delta of a stream (0 when none came).
	Took, FirstToken time.Duration
	// ErrorClass is the failure's class for the metrics (llmconfig.ErrorAuth, …), "" on success.
	ErrorClass string

	// What the provider needs back with this answer on later calls (AnswerRow stores it).
	details []rawJSON
	extra   rawJSON
	unknown map[string][]rawJSON
}

// ToolCall is one function call the model asked for, or as much of it as has arrived.
type ToolCall struct {
	Index     int
	ID        string
	Name      string
	Arguments string
	// extra is the call's extra_content (Gemini's thought signature), kept for AnswerRow.
	extra rawJSON
}

// Complete makes one call without streaming, for short answers beside a turn such as a
// session's title. The request carries the model, the messages and about maxTokens of answer: a
// title needs no temperature and no tools, and the model thinks as little as its provider
// allows (llmconfig.ForSide), with room for that thought where it cannot help thinking.
// Reasoning the model writes is kept out of the answer, as in a stream.
func (c *Client) Complete(ctx context.Context, s llmconfig.Settings, msgs []Message, maxTokens int) (Answer, error) {
	req := openai.ChatCompletionRequest{Model: s.Model, MaxTokens: llmconfig.SideTokens(s, maxTokens)}
	llmconfig.ShapeRequest(s, &req)
	extra := llmconfig.ShapeThinking(s, &req, llmconfig.ForSide)
	began := time.Now()
	var ans Answer
	body, err := requestBody(req, msgs, extra)
	if err != nil {
		return ans, fmt.Errorf("writing the request: %w", err)
	}
	ex := &exchange{body: body}
	resp, err := c.openAI(s).CreateChatCompletion(withExchange(ctx, ex), req)
	ans.Took = time.Since(began)
	ans.InputTokens, ans.OutputTokens = int64(resp.Usage.PromptTokens), int64(resp.Usage.CompletionTokens)
	ans.ReasoningTokens = reasoningTokens(&resp.Usage)
	if err != nil {
		ans.ErrorClass = llmconfig.ErrorClass(err)
		return ans, classify(ctx, ex.failure(err), s)
	}
	var whole wireChunk
	if err := json.Unmarshal(ex.raw, &whole); err != nil {
		ans.ErrorClass = llmconfig.ErrorOther
		return ans, classify(ctx, err, s)
	}
	ans.CachedTokens = whole.cachedTokens()
	if len(whole.Choices) > 0 {
		a := newAnswer(dialectFor(s), s.Model, Deltas{}, began)
		a.whole = true
		a.take(whole.Choices[0].Message)
		a.done()
		a.fill(&ans)
		ans.ToolCalls = a.calls.whole()
		if fr := whole.Choices[0].FinishReason; fr != nil {
			ans.FinishReason = *fr
		}
	}
	return ans, nil
}

// openAI is a go-openai client for s's endpoint, over the transport s's trust allows, with the
// dialect's body sent and the response handed back (exchangeDoer).
func (c *Client) openAI(s llmconfig.Settings) *openai.Client {
	httpClient := c.trusted
	if !s.Trusted {
		httpClient = c.untrusted
	}
	cfg := llmconfig.ClientConfig(s, httpClient)
	cfg.HTTPClient = exchangeDoer{next: cfg.HTTPClient}
	return openai.NewClientWithConfig(cfg)
}
