package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func authRig(t *testing.T, live bool) (*fakegns3.Server, string, string) {
	t.Helper()
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	srv := gns3.NewServer(g.URL, 10*time.Second)
	d := Deps{GNS3: srv, Heartbeat: time.Hour}
	if live {
		hub := livetopo.New(srv, livetopo.Options{})
		t.Cleanup(hub.Close)
		d.Live = hub
	}
	hs := startTestServer(t, d)
	t.Cleanup(hs.CloseClientConnections)
	return g, hs.URL, pid
}

func getStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// A token not checked lately and the project check of the same request are asked of GNS3 at the
// same time: the project is read while the token check is still on its way.
func TestTokenAndProjectAreCheckedTogether(t *testing.T) {
	g, url, pid := authRig(t, true)
	g.SetLatency(fakegns3.OpCurrentUser, 3*time.Second)
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v3/projects/"+pid+"/chat/topology/stream", nil)
		req.Header.Set("Authorization", "Bearer alice-token")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	defer func() { cancel(); <-done }()
	deadline := time.After(10 * time.Second)
	// Both requests go out at once, so either may reach GNS3 first: wait for both to arrive.
	for g.Count(fakegns3.OpGetProject) == 0 || g.Count(fakegns3.OpCurrentUser) == 0 {
		select {
		case <-done:
			t.Fatal("the request ended before the project was read")
		case <-deadline:
			t.Fatal("the project was never read")
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The token check takes 3 s; the project was asked for long before it answered.
	require.Less(t, time.Since(began), 2*time.Second, "the project was read only after the token check had answered")
	require.Equal(t, 1, g.Count(fakegns3.OpCurrentUser))
}

// A token GNS3 refuses while the copilot still trusts it (revoked within the cache's lifetime) is
// forgotten at once: the next request checks it again.
func TestRefusedTokenIsForgotten(t *testing.T) {
	g, url, pid := authRig(t, false)
	path := url + "/v3/projects/" + pid + "/chat/topology/stream" // no live topology: checks, then 404
	require.Equal(t, http.StatusNotFound, getStatus(t, path, "alice-token"))
	require.Equal(t, http.StatusNotFound, getStatus(t, path, "alice-token"))
	require.Equal(t, 1, g.Count(fakegns3.OpCurrentUser), "a checked token is remembered")

	g.FailNext(fakegns3.OpGetProject, "", http.StatusUnauthorized, "Could not validate credentials")
	require.Equal(t, http.StatusUnauthorized, getStatus(t, path, "alice-token"))
	require.Equal(t, http.StatusNotFound, getStatus(t, path, "alice-token"))
	require.Equal(t, 2, g.Count(fakegns3.OpCurrentUser), "a token GNS3 refused is checked again")
}

// warmingLLM records when the API asked it to read a user's groups ahead, and configures nothing.
type warmingLLM struct{ warmed chan string }

func (warmingLLM) Choose(context.Context, string, *gns3.Client) (llmconfig.Settings, error) {
	return llmconfig.Settings{}, llmconfig.ErrNotConfigured
}

func (w warmingLLM) WarmGroups(_ context.Context, userID string, _ *gns3.Client) { w.warmed <- userID }

// A new message of a token seen before, once its check has expired: the user's groups are read
// ahead while the token is checked again, not after.
func TestGroupsAreReadWithTheTokenCheck(t *testing.T) {
	g := fakegns3.New(t)
	alice := g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	srv := gns3.NewServer(g.URL, 10*time.Second)
	llm := warmingLLM{warmed: make(chan string, 4)}
	hs := startTestServer(t, Deps{GNS3: srv, LLM: llm, UserCacheTTL: 50 * time.Millisecond})
	t.Cleanup(hs.CloseClientConnections)
	post := func(ctx context.Context) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/v3/projects/"+pid+"/chat/stream", strings.NewReader(`{"message": "hi"}`))
		req.Header.Set("Authorization", "Bearer alice-token")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusBadRequest, post(context.Background()), "no LLM configured")
	require.Empty(t, llm.warmed, "a token never seen says nothing of its user")

	time.Sleep(100 * time.Millisecond) // the token check's lifetime passing is the point of the test
	g.SetLatency(fakegns3.OpCurrentUser, 3*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); post(ctx) }()
	defer func() { cancel(); <-done }()
	began := time.Now()
	select {
	case id := <-llm.warmed:
		require.Equal(t, alice, id)
		require.Less(t, time.Since(began), 2*time.Second, "the groups were read only after the token check had answered")
	case <-time.After(10 * time.Second):
		t.Fatal("the groups were not read ahead")
	}
}
