package gns3_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// TestWaveOfRequestsReusesConnections: a second wave of as many simultaneous requests as the
// first opens no new connection to GNS3; the client keeps the first wave's connections.
func TestWaveOfRequestsReusesConnections(t *testing.T) {
	const wave = gns3.IdleConns
	var dialled atomic.Int64
	var arrived sync.WaitGroup
	var mu sync.Mutex
	release := make(chan struct{})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every request of a wave waits for the whole wave, so the wave needs that many
		// connections at once. The wave's release is taken before saying it arrived: the next
		// wave's replaces it once all have.
		mu.Lock()
		ch := release
		mu.Unlock()
		arrived.Done()
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":"3.0.6","local":false}`))
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	srv := gns3.NewServer(ts.URL, 10*time.Second)

	run := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		arrived.Add(wave)
		errs := make(chan error, wave)
		for range wave {
			go func() {
				_, err := srv.Version(ctx)
				errs <- err
			}()
		}
		waited := make(chan struct{})
		go func() { arrived.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-ctx.Done():
			t.Fatal("the wave's requests did not all reach the server")
		}
		mu.Lock()
		close(release)
		release = make(chan struct{})
		mu.Unlock()
		for range wave {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if n := dialled.Load(); n != wave {
		t.Fatalf("first wave: %d connections, want %d", n, wave)
	}
	run()
	if n := dialled.Load(); n != wave {
		t.Fatalf("after a second wave of %d: %d connections, want the first wave's %d kept", wave, n, wave)
	}
}
