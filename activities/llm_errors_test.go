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

	// A plain-text 500 is only a status.
	ae = callThrough(t, http.StatusInternalServerError, "text/plain", "panic: "+internalSecret, true)
	if msg := ae.Error(); strings.Contains(msg, internalSecret) || !strings.Contains(msg, "HTTP 500 Internal Server Error") || ae.NonRetryable() {
		t.Fatalf("500: %s", msg)
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
