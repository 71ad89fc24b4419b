package gns3

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

type observed struct{ method, route, outcome string }

func recordRequests(s *Server) func() []observed {
	var mu sync.Mutex
	var got []observed
	s.Observe(func(method, route, outcome string, took time.Duration) {
		if took < 0 {
			panic("negative duration")
		}
		mu.Lock()
		got = append(got, observed{method, route, outcome})
		mu.Unlock()
	})
	return func() []observed {
		mu.Lock()
		defer mu.Unlock()
		return append([]observed(nil), got...)
	}
}

func TestObserverSeesRouteTemplatesAndOutcomes(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/projects/p-1/nodes/n-9/start":
			w.WriteHeader(http.StatusNoContent)
		case "/v3/projects/p-1/notifications":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/v3/projects/slow":
			<-release
		default:
			http.Error(w, `{"message":"nope"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	defer close(release)
	s := NewServer(srv.URL, 200*time.Millisecond)
	got := recordRequests(s)
	c := s.WithToken("tok")
	ctx := context.Background()

	if err := c.StartNode(ctx, "p-1", "n-9"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetProject(ctx, "p-2"); err == nil {
		t.Fatal("a 404 answered no error")
	}
	body, err := c.ProjectNotifications(ctx, "p-1")
	if err != nil {
		t.Fatal(err)
	}
	body.Close()
	if _, err := c.GetProject(ctx, "slow"); err == nil {
		t.Fatal("a request past the timeout answered no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = c.ListProjects(cancelled)
	down := NewServer("http://127.0.0.1:1", time.Second)
	gotDown := recordRequests(down)
	_, _ = down.Version(ctx)

	want := []observed{
		{"POST", "/v3/projects/{id}/nodes/{id}/start", "2xx"},
		{"GET", "/v3/projects/{id}", "4xx"},
		{"GET", "/v3/projects/{id}/notifications", "2xx"},
		{"GET", "/v3/projects/{id}", "timeout"},
		{"GET", "/v3/projects", "cancelled"},
	}
	if g := got(); len(g) != len(want) {
		t.Fatalf("observed %v, want %v", g, want)
	} else {
		for i := range want {
			if g[i] != want[i] {
				t.Errorf("request %d: observed %v, want %v", i, g[i], want[i])
			}
		}
	}
	if g := gotDown(); len(g) != 1 || g[0] != (observed{"GET", "/v3/version", "unreachable"}) {
		t.Errorf("a server that is down: observed %v", g)
	}
}
