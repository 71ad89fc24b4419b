package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/livetopo"
)

func authRig(t *testing.T, live bool) (*fakegns3.Server, string, string) {
	t.Helper()
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	srv := gns3.NewServer(g.URL, 10*time.Second)
	d := Deps{GNS3: srv, Heartbeat: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if live {
		hub := livetopo.New(srv, livetopo.Options{})
		t.Cleanup(hub.Close)
		d.Live = hub
	}
	hs := httptest.NewServer(New(d).Handler())
	t.Cleanup(hs.Close)
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
	for g.Count(fakegns3.OpGetProject) == 0 {
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
