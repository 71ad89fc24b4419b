// Package llm talks to OpenAI-compatible chat-completions endpoints for the copilot: it streams a
// completion and accumulates its tool calls, makes the short unstreamed calls, and turns every
// failure into an Error that says who can fix it and in words a person can act on. It knows
// nothing of turns, workflows or the event log; its callers decide what to publish and how to
// retry.
package llm

import (
	"context"
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
	return &Client{trusted: trusted, untrusted: untrusted}
}

// Answer is what a model call produced, also when it failed part-way: the text that arrived is
// kept, so a caller can store the partial answer the user already saw.
type Answer struct {
	Content string
	// ToolCalls are in the order of their index. ID is empty when the provider sent none.
	ToolCalls    []ToolCall
	FinishReason string
	InputTokens  int64
	OutputTokens int64
	// Took is the whole call; FirstToken the wait for the first text or tool-call delta of a
	// stream (0 when none came).
	Took, FirstToken time.Duration
	// ErrorClass is the failure's class for the metrics (llmconfig.ErrorAuth, …), "" on success.
	ErrorClass string
}

// ToolCall is one function call the model asked for, or as much of it as has arrived.
type ToolCall struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Complete makes one call without streaming, for short answers such as a session's title. The
// request carries only the model, the messages and maxTokens: a title needs no temperature and
// no tools.
func (c *Client) Complete(ctx context.Context, s llmconfig.Settings, msgs []openai.ChatCompletionMessage, maxTokens int) (Answer, error) {
	req := openai.ChatCompletionRequest{Model: s.Model, Messages: msgs, MaxTokens: maxTokens}
	began := time.Now()
	resp, err := c.openAI(s).CreateChatCompletion(ctx, req)
	ans := Answer{Took: time.Since(began), InputTokens: int64(resp.Usage.PromptTokens),
		OutputTokens: int64(resp.Usage.CompletionTokens), ErrorClass: llmconfig.ErrorClass(err)}
	if err != nil {
		return ans, classify(ctx, err, s)
	}
	if len(resp.Choices) > 0 {
		ans.Content, ans.FinishReason = resp.Choices[0].Message.Content, string(resp.Choices[0].FinishReason)
	}
	return ans, nil
}

// openAI is a go-openai client for s's endpoint, over the transport s's trust allows.
func (c *Client) openAI(s llmconfig.Settings) *openai.Client {
	httpClient := c.trusted
	if !s.Trusted {
		httpClient = c.untrusted
	}
	return openai.NewClientWithConfig(llmconfig.ClientConfig(s, httpClient))
}
