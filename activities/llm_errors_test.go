package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

const internalSecret = "INTERNAL-METADATA-TOKEN-123"

var hello = llm.Prompt{Messages: []llm.Message{llm.Text("user", "hi")}}

// callThrough makes one real streaming call with go-openai against a server answering with
// status and body, and returns what the user would read.
func callThrough(t *testing.T, status int, contentType, body string, trusted bool) *temporal.ApplicationError {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	settings := llmconfig.Settings{Provider: "custom", BaseURL: srv.URL + "/v1", Model: "m", APIKey: "k", Trusted: trusted}
	_, err := (&Activities{}).llmClient().Stream(context.Background(), settings, hello, llm.Deltas{})
	if err == nil {
		t.Fatal("the call succeeded")
	}
	var ae *temporal.ApplicationError
	if !errors.As(temporalLLMError(err), &ae) {
		t.Fatalf("not an application error: %v", err)
	}
	return ae
}

func TestProviderBodiesAreNotReflected(t *testing.T) {
	ae := callThrough(t, http.StatusForbidden, "application/json", `{"internal_secret":"`+internalSecret+`"}`, true)
	msg := ae.Error()
	for _, bad := range []string{internalSecret, "internal_secret", "%!", "<nil>", "body:"} {
		if strings.Contains(msg, bad) {
			t.Fatalf("message shows %q: %s", bad, msg)
		}
	}
	if !strings.Contains(msg, "HTTP 403 Forbidden") || ae.Type() != domain.ErrTypeLLMAuth || !ae.NonRetryable() {
		t.Fatalf("403 without an error object: %s (%s)", msg, ae.Type())
	}

	// An OpenAI-style error object: its message is shown, clipped, on one line.
	long := strings.Repeat("x", 1000)
	ae = callThrough(t, http.StatusBadRequest, "application/json",
		`{"error":{"message":"model m does not exist\n`+long+`","type":"invalid_request_error"},"secret":"`+internalSecret+`"}`, true)
	msg = ae.Error()
	if !strings.Contains(msg, "HTTP 400: model m does not exist xxx") || strings.Contains(msg, internalSecret) || strings.Contains(msg, "\n") {
		t.Fatalf("error object: %s", msg)
	}
	if strings.Count(msg, "x") > llm.MaxProviderMessage+20 {
		t.Fatalf("provider message not clipped: %d characters", len(msg))
	}

	// A plain-text answer is what the provider said: it is shown, on one line, clipped.
	ae = callThrough(t, http.StatusServiceUnavailable, "text/plain", "upstream connect error\nor disconnect/reset before headers\n"+long, true)
	if msg := ae.Error(); !strings.Contains(msg, "HTTP 503: upstream connect error or disconnect/reset before headers") || strings.Contains(msg, "\n") ||
		strings.Count(msg, "x") > llm.MaxProviderMessage+20 || ae.NonRetryable() {
		t.Fatalf("plain text: %s", msg)
	}
}

// What the provider said reaches the user in the provider's own words, whatever the shape of
// the body it said it in.
func TestProviderWordsInEveryShape(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"Google's array", `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]`,
			"HTTP 400: Function call is missing a thought_signature in functionCall parts."},
		{"OpenRouter's upstream error as text", `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"The reasoning_content in the thinking mode must be passed back to the API.\",\"type\":\"invalid_request_error\"}}","provider_name":"DeepSeek"}}}`,
			"HTTP 400: Provider returned error (DeepSeek: The reasoning_content in the thinking mode must be passed back to the API.)"},
		{"OpenRouter's upstream error as an object", `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":{"error":{"message":"Invalid signature in thinking block"}},"provider_name":"Anthropic"}}}`,
			"HTTP 400: Provider returned error (Anthropic: Invalid signature in thinking block)"},
		{"OpenRouter's plain raw", `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"temporarily rate-limited upstream","provider_name":"BaseTen"}}}`,
			"HTTP 429: Provider returned error (BaseTen: temporarily rate-limited upstream)"},
		{"a bare error string", `{"error":"model \"qwen3:8b\" not found, try pulling it first"}`, `HTTP 404: model "qwen3:8b" not found, try pulling it first`},
		{"a flat message", `{"object":"error","message":"This model's maximum context length is 32768 tokens.","type":"BadRequestError","code":400}`,
			"HTTP 400: This model's maximum context length is 32768 tokens."},
		{"FastAPI's detail", `{"detail":[{"loc":["body","messages",2,"reasoning_content"],"msg":"Input should be a valid string"}]}`,
			"HTTP 422: Input should be a valid string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := http.StatusBadRequest
			switch {
			case strings.Contains(tc.want, "HTTP 429"):
				status = http.StatusTooManyRequests
			case strings.Contains(tc.want, "HTTP 404"):
				status = http.StatusNotFound
			case strings.Contains(tc.want, "HTTP 422"):
				status = http.StatusUnprocessableEntity
			}
			ae := callThrough(t, status, "application/json", tc.body, true)
			if !strings.Contains(ae.Error(), tc.want) {
				t.Fatalf("got %s\nwant %s", ae.Error(), tc.want)
			}
		})
	}
}

func TestUntrustedSettingsGoThroughTheOutboundPolicy(t *testing.T) {
	// The same loopback server, as a regular user's endpoint: not contacted at all.
	ae := callThrough(t, http.StatusForbidden, "application/json", `{"internal_secret":"`+internalSecret+`"}`, false)
	msg := ae.Error()
	if ae.Type() != domain.ErrTypeLLMConfig || !ae.NonRetryable() || !strings.Contains(msg, "was not contacted") ||
		!strings.Contains(msg, "loopback") || strings.Contains(msg, internalSecret) {
		t.Fatalf("refused endpoint: %s (%s)", msg, ae.Type())
	}

	// A name resolving to a private address, through a policy with a test resolver.
	p, err := egress.New(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{LLMClient: llm.NewClient(nil, p.WithResolver(staticResolver{"llm.rebind.test": "10.9.8.7"}).Client())}
	settings := llmconfig.Settings{Provider: "custom", BaseURL: "http://llm.rebind.test/v1", Model: "m"}
	_, err = a.llmClient().Stream(context.Background(), settings, hello, llm.Deltas{})
	msg = temporalLLMError(err).Error()
	if !strings.Contains(msg, "llm.rebind.test resolves to 10.9.8.7, a private address") {
		t.Fatalf("rebinding name: %s", msg)
	}
}

type staticResolver map[string]string

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := r[host]
	if !ok {
		return nil, errors.New("unknown host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func TestMidStreamErrorShowsOnlyItsMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"error":{"message":"overloaded, try later","type":"server_error","internal_secret":"`+internalSecret+`"}}`+"\n\n")
	}))
	t.Cleanup(srv.Close)
	settings := llmconfig.Settings{Provider: "custom", BaseURL: srv.URL + "/v1", Model: "m", Trusted: true}
	_, err := (&Activities{}).llmClient().Stream(context.Background(), settings, hello, llm.Deltas{})
	if err == nil {
		t.Fatal("no error from the stream")
	}
	var ae *temporal.ApplicationError
	if !errors.As(temporalLLMError(err), &ae) {
		t.Fatalf("not an application error: %v", err)
	}
	if msg := ae.Error(); !strings.Contains(msg, "reported an error: overloaded, try later") || strings.Contains(msg, internalSecret) || ae.NonRetryable() {
		t.Fatalf("mid-stream error: %s", msg)
	}
}
