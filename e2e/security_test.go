package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

const internalSecret = "INTERNAL-METADATA-TOKEN-123"

// hostsResolver stands for DNS: each name resolves to the one address given.
type hostsResolver map[string]string

func (h hostsResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := h[strings.ToLower(host)]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// internalService stands for something on the copilot server's own network that answers with
// a secret, as the metadata service or an admin UI would.
func internalService(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"internal_secret":%q}`, internalSecret)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

func requireNoSecretInFrames(t *testing.T, frames []e2eenv.Frame) {
	t.Helper()
	for _, f := range frames {
		require.NotContains(t, f.Raw, internalSecret, "the internal service's answer reached the stream")
		require.NotContains(t, f.Raw, "internal_secret")
		require.NotContains(t, f.Raw, "%!", "Go formatting noise in the stream")
	}
}

func errorFrame(t *testing.T, frames []e2eenv.Frame) string {
	t.Helper()
	for _, f := range frames {
		if f.Event == "error" {
			return f.Data["error"].(string)
		}
	}
	t.Fatalf("no error event in %v", e2eenv.Types(frames))
	return ""
}

// A regular user's configuration reaches only public addresses: a literal private address is
// refused when saved, a name that resolves to loopback gets an error event at turn time and
// the internal service never sees a request. A superadmin's configuration for her may use the
// server's network, and even then the internal service's body never reaches her stream.
func TestRegularUsersCannotReachTheServersNetwork(t *testing.T) {
	internal, hits := internalService(t)
	port := internal.Listener.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	env := e2eenv.Start(t, e2eenv.Options{LLMAllowHosts: []string{},
		LLMResolver: hostsResolver{"llm.rebind.test": "127.0.0.1"}})
	base := "/v3/access/users/" + myUserID(t, env) + "/llm-model-configs"
	config := func(name, url string, isDefault bool) map[string]any {
		return map[string]any{"name": name, "provider": "custom", "base_url": url, "model": "m", "api_key": "sk-anything",
			"is_default": isDefault}
	}

	for _, url := range []string{internal.URL + "/v1", "http://10.1.2.3:8080/v1", "http://169.254.169.254/latest", "http://localhost:11434/v1"} {
		code, body := env.Do(http.MethodPost, base, config("internal", url, true))
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", url, body)
		require.Contains(t, string(body), "may only reach public addresses", url)
	}

	code, body := env.Do(http.MethodPost, base, config("rebinding", fmt.Sprintf("http://llm.rebind.test:%d/v1", port), true))
	require.Equal(t, http.StatusCreated, code, "a name is not resolved when saved: %s", body)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello"}, "").UntilDone(t, true)
	require.Equal(t, "failed", frames[len(frames)-1].Data["status"])
	msg := errorFrame(t, frames)
	require.Contains(t, msg, "was not contacted: llm.rebind.test resolves to 127.0.0.1, a loopback address")
	require.Contains(t, msg, "--llm-allow-hosts")
	require.Zero(t, hits.Load(), "the internal service was contacted")
	requireNoSecretInFrames(t, frames)

	// A superadmin points her configuration at the server's network: trusted, so it connects,
	// and the 403 comes back as a status, not as the body.
	code, body = env.DoAs(fakegns3.AdminToken, http.MethodPost, base, config("admin's", internal.URL+"/v1", true))
	require.Equal(t, http.StatusCreated, code, string(body))
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello again"}, "").UntilDone(t, true)
	msg = errorFrame(t, frames)
	require.Contains(t, msg, "rejected the API key (HTTP 403 Forbidden)")
	require.NotZero(t, hits.Load(), "a superadmin's configuration connects")
	requireNoSecretInFrames(t, frames)

	// And a superadmin's configuration at a model on loopback just works.
	env.LLM.SetHandler(titleReplies("Loopback model"))
	env.LLM.Enqueue(fakeopenai.Text("Hello from the lab's own model."))
	cfg := config("lab model", env.LLM.URL, true)
	cfg["api_key"] = e2eenv.LLMKey
	code, body = env.DoAs(fakegns3.AdminToken, http.MethodPost, base, cfg)
	require.Equal(t, http.StatusCreated, code, string(body))
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "third"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "%v", e2eenv.Types(frames))
}
