package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// Each failure says who can fix it: the configuration's owner (base URL, model, key, request)
// or nobody but time (the provider in trouble).
func TestFailuresSayWhoCanFixThem(t *testing.T) {
	cases := []struct {
		name      string
		reply     fakeopenai.Reply
		kind      Kind
		class     string
		wording   string
		retryable bool
	}{
		{"key refused", fakeopenai.Reply{Error: fakeopenai.InvalidAPIKey()}, KeyRejected, llmconfig.ErrorAuth,
			"rejected the API key (HTTP 401: Incorrect API key provided", false},
		{"model unknown", fakeopenai.Reply{Error: fakeopenai.ModelNotFound("m")}, Misconfigured, llmconfig.ErrorBadRequest,
			"check the base URL and the model name", false},
		{"request refused", fakeopenai.Reply{Error: fakeopenai.BadRequest("bad tools", "tools")}, RequestRefused, llmconfig.ErrorBadRequest,
			"refused the request (HTTP 400: bad tools)", false},
		{"rate limited", fakeopenai.Reply{Error: fakeopenai.RateLimited()}, Unavailable, llmconfig.ErrorRateLimit, "failed (HTTP 429", true},
		{"server error", fakeopenai.Reply{Error: fakeopenai.ServerError()}, Unavailable, llmconfig.ErrorServer, "failed (HTTP 500", true},
		{"error in the stream", fakeopenai.Reply{Content: []string{"Starting"}, StreamError: fakeopenai.Overloaded()}, Unavailable,
			llmconfig.ErrorServer, "reported an error: ", true},
		{"web page instead of the API", fakeopenai.Reply{HTMLStatus: http.StatusNotFound}, Misconfigured, llmconfig.ErrorBadRequest,
			"answered with an HTML page (HTTP 404)", false},
		{"web page answering 200", fakeopenai.Reply{HTMLStatus: http.StatusOK}, Misconfigured, llmconfig.ErrorOther,
			"instead of an event stream", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			provider := fakeopenai.New(t)
			provider.Enqueue(tc.reply)
			ans, err := NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
			var failure *Error
			require.ErrorAs(t, err, &failure)
			require.Equal(t, tc.kind, failure.Kind, failure.Message)
			require.Equal(t, tc.retryable, failure.Retryable())
			require.Contains(t, failure.Message, tc.wording)
			require.Contains(t, failure.Message, provider.URL)
			require.Equal(t, tc.class, ans.ErrorClass)
		})
	}
}

// An endpoint of a configuration no superadmin wrote is reached only through the outbound
// policy; the refusal is the configuration's to fix.
func TestUntrustedEndpointOnLoopbackIsNotContacted(t *testing.T) {
	provider := fakeopenai.New(t)
	provider.Enqueue(fakeopenai.Text("never"))
	s := trusted(provider.URL)
	s.Trusted = false
	_, err := NewClient(nil, nil).Stream(context.Background(), s, hello, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.Equal(t, Misconfigured, failure.Kind)
	var refused *egress.RefusedError
	require.ErrorAs(t, err, &refused)
	require.Contains(t, failure.Message, "was not contacted")
	require.Empty(t, provider.Requests())

	// The same endpoint, trusted, is reached through the trusted transport.
	_, err = NewClient(nil, nil).Stream(context.Background(), trusted(provider.URL), hello, Deltas{})
	require.NoError(t, err)
}

func TestUnreachableHostIsRetryableAndSaysWhy(t *testing.T) {
	srv := fakeopenai.New(t)
	url := srv.URL
	srv.Close()
	_, err := NewClient(nil, nil).Stream(context.Background(), trusted(url), hello, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.True(t, failure.Retryable())
	require.Contains(t, failure.Message, "could not be reached: the connection was refused")
}

func TestProviderMessageIsOneClippedLine(t *testing.T) {
	got := providerMessage("model m\ndoes not\texist " + strings.Repeat("é", 2*MaxProviderMessage))
	require.NotContains(t, got, "\n")
	require.NotContains(t, got, "\t")
	require.True(t, strings.HasPrefix(got, "model m does not exist éé"))
	require.Equal(t, MaxProviderMessage+1, utf8.RuneCountInString(got), "clipped, with an ellipsis")
	require.True(t, strings.HasSuffix(got, "…"))
}

func TestErrorUnwrapsToItsCause(t *testing.T) {
	cause := errors.New("underneath")
	err := error(&Error{Kind: Unavailable, Message: "the provider failed", cause: cause})
	require.ErrorIs(t, err, cause)
	require.Equal(t, "the provider failed", err.Error())
}

// A model whose reasoning go-openai knows OpenAI refuses with tools over chat completions is a
// configuration to change, said plainly, and no request leaves.
func TestReasoningModelThatNeedsTheResponsesAPI(t *testing.T) {
	provider := fakeopenai.New(t)
	s := trusted(provider.URL)
	s.Provider, s.Model = "openai", "gpt-6-astra"
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "get_gns3_topology",
		Parameters: map[string]any{"type": "object"}}}}
	_, err := NewClient(nil, nil).Stream(context.Background(), s, Prompt{Messages: hello.Messages, Tools: tools}, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.Equal(t, Misconfigured, failure.Kind)
	require.Contains(t, failure.Message, "Responses API")
	require.Zero(t, provider.Stats().Requests)
}
