package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

type topoRig struct {
	g   *fakegns3.Server
	url string
	pid string
	hub *livetopo.Hub
}

func newTopoRig(t *testing.T) *topoRig {
	t.Helper()
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	srv := gns3At(g.URL)
	hub := livetopo.New(srv, livetopo.Options{})
	s := newTestServer(Deps{GNS3: srv, Live: hub, Heartbeat: 200 * time.Millisecond})
	hs := httptest.NewServer(s.Handler())
	// Streams end before the server closes (it waits for them), and the hub after both.
	t.Cleanup(hub.Close)
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections)
	return &topoRig{g: g, url: hs.URL, pid: pid, hub: hub}
}

type frame struct {
	event string
	data  map[string]any
}

type sseReader struct {
	frames *ssetest.Stream
}

func (r *topoRig) open(t *testing.T, token, prefix string) (*http.Response, *sseReader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+prefix+"/projects/"+r.pid+"/chat/topology/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &sseReader{frames: ssetest.Open(t, resp)}
}

// next returns the next frame that is not a heartbeat.
func (s *sseReader) next(t *testing.T) frame {
	t.Helper()
	read := s.frames.Until(t, func(f ssetest.Frame) bool { return f.Event != "" && f.Event != "heartbeat" })
	f := read[len(read)-1]
	return frame{event: f.Event, data: f.JSON(t)}
}

// untilChange skips frames until a topology_change with this action.
func (s *sseReader) untilChange(t *testing.T, action string) map[string]any {
	t.Helper()
	for {
		f := s.next(t)
		if f.event == "topology_change" && f.data["action"] == action {
			return f.data
		}
	}
}

// untilLinkConditioned reads frames until the link shows conditions, in a change or in a whole
// picture: a stream that opened on a direct read while the live copy was connecting moves to the
// live copy with a new picture, which holds a change made meanwhile instead of a change frame.
func (s *sseReader) untilLinkConditioned(t *testing.T, linkID string) map[string]any {
	t.Helper()
	for {
		f := s.next(t)
		switch {
		case f.event == "topology_change" && f.data["action"] == "link.updated":
			return f.data["link"].(map[string]any)
		case f.event == "topology_snapshot":
			for _, l := range f.data["links"].([]any) {
				if m := l.(map[string]any); m["link_id"] == linkID && m["conditions"] != nil {
					return m
				}
			}
		}
	}
}

func TestTopologyStreamSnapshotThenChanges(t *testing.T) {
	r := newTopoRig(t)
	pc1 := r.g.AddNode(r.pid, fakegns3.NodeSpec{X: -100, Y: 40})
	for _, prefix := range []string{"/v3", "/v3/copilot"} {
		t.Run(prefix, func(t *testing.T) {
			resp, s := r.open(t, "alice-token", prefix)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			first := s.next(t)
			require.Equal(t, "topology_snapshot", first.event)
			require.Equal(t, "topology_snapshot", first.data["type"])
			nodes := first.data["nodes"].([]any)
			require.NotEmpty(t, nodes)
			n := nodes[0].(map[string]any)
			require.Equal(t, "PC1", n["name"])
			require.EqualValues(t, -100, n["x"])
			require.EqualValues(t, 40, n["y"])
			require.Equal(t, "stopped", n["status"])
		})
	}

	_, s := r.open(t, "alice-token", "/v3")
	require.Equal(t, "topology_snapshot", s.next(t).event)
	pc2 := r.g.AddNode(r.pid, fakegns3.NodeSpec{X: 200, Y: 40})
	created := s.untilChange(t, "node.created")
	require.Equal(t, "PC2", created["node"].(map[string]any)["name"])
	r.g.SetStatus(pc1.ID, "started")
	updated := s.untilChange(t, "node.updated")
	require.Equal(t, "started", updated["node"].(map[string]any)["status"])
	l := r.g.AddLink(r.pid, pc1.ID, 0, 0, pc2.ID, 0, 0)
	link := s.untilChange(t, "link.created")["link"].(map[string]any)
	require.Equal(t, l.ID, link["link_id"])
	require.Len(t, link["nodes"], 2)
	require.Equal(t, false, link["capturing"])
	r.g.SetCapturing(l.ID, true)
	require.Equal(t, true, s.untilChange(t, "link.updated")["link"].(map[string]any)["capturing"])

	// A gap (the stream to GNS3 dropped) sends a whole new picture.
	r.g.DropNotifications(r.pid)
	for {
		f := s.next(t)
		if f.event == "topology_snapshot" {
			require.Len(t, f.data["nodes"], 2)
			require.Len(t, f.data["links"], 1)
			break
		}
	}
}

// The picture shows a conditioned or suspended link, and after a snapshot is restored (every
// node and link with a new id) it is sent whole again, with the names it had.
func TestTopologyStreamShowsConditionsAndRestores(t *testing.T) {
	r := newTopoRig(t)
	pc1 := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "PC1"})
	pc2 := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "PC2", X: 300})
	l := r.g.AddLink(r.pid, pc1.ID, 0, 0, pc2.ID, 0, 0)
	snap := r.g.TakeSnapshot(r.pid, "base")
	_, s := r.open(t, "alice-token", "/v3")
	require.Equal(t, "topology_snapshot", s.next(t).event)
	// The first picture may come from a read of its own while the live copy is still connecting;
	// a change made before the copy has read the project would arrive folded into its first read,
	// not as a change.
	require.Eventually(t, func() bool { return r.hub.Stats().Connected == 1 }, 10*time.Second, 5*time.Millisecond)

	r.g.SetLinkConditions(l.ID, map[string][]any{"delay": {200, 20}, "packet_loss": {20}}, true)
	link := s.untilLinkConditioned(t, l.ID)
	require.Equal(t, "delay 200 ms ±20 ms, 20 % packet loss; suspended (no packet passes)", link["conditions"])
	require.Equal(t, true, link["suspend"])
	require.Equal(t, map[string]any{"delay": []any{200.0, 20.0}, "packet_loss": []any{20.0}}, link["filters"])

	_, err := gns3At(r.g.URL).WithToken(fakegns3.AdminToken).RestoreSnapshot(context.Background(), r.pid, snap.ID)
	require.NoError(t, err)
	// A picture may still come from before the restore was read: one the stream moved to the
	// live copy with, or one the copy held between GNS3's node.created notifications and its
	// snapshot.restored (the old nodes and the new). The picture read after the restore holds
	// the new nodes only.
	old := []string{pc1.ID, pc2.ID}
	for {
		f := s.next(t)
		if f.event != "topology_snapshot" {
			continue
		}
		nodes := f.data["nodes"].([]any)
		if slices.ContainsFunc(nodes, func(n any) bool { return slices.Contains(old, n.(map[string]any)["node_id"].(string)) }) {
			continue
		}
		require.Len(t, nodes, 2, "only the restored nodes: %v", nodes)
		for _, n := range nodes {
			m := n.(map[string]any)
			require.Contains(t, []string{"PC1", "PC2"}, m["name"])
			require.Equal(t, "stopped", m["status"])
		}
		links := f.data["links"].([]any)
		require.Len(t, links, 1)
		require.NotEqual(t, l.ID, links[0].(map[string]any)["link_id"])
		require.Nil(t, links[0].(map[string]any)["conditions"], "the snapshot was taken before the conditions")
		break
	}
}

// While the live copy is current, the project check costs no GNS3 request; access is still
// each user's own.
func TestProjectCheckReadsTheLiveCopy(t *testing.T) {
	r := newTopoRig(t)
	_, s := r.open(t, "alice-token", "/v3")
	require.Equal(t, "topology_snapshot", s.next(t).event)
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Connected: the live copy's own first read is done too, so no read of it comes later.
		if _, fresh := r.hub.Topology(context.Background(), r.pid); fresh && r.hub.Stats().Connected == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the live copy never became current")
		time.Sleep(5 * time.Millisecond)
	}
	r.g.ResetCounts()
	resp, s2 := r.open(t, "alice-token", "/v3/copilot")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "topology_snapshot", s2.next(t).event)
	require.Equal(t, 0, r.g.Count(fakegns3.OpGetProject), "project check")
	require.Equal(t, 0, r.g.Count(fakegns3.OpListNodes), "topology read")

	r.g.AddUser("mallory", "mallory-token", false)
	resp, _ = r.open(t, "mallory-token", "/v3")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(body), "do not have access")
}

func TestTopologyStreamRefusesClosedProject(t *testing.T) {
	r := newTopoRig(t)
	r.g.SetProjectStatus(r.pid, "closed")
	resp, _ := r.open(t, "alice-token", "/v3")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(body), "must be opened")
	require.False(t, r.hub.Subscribed(r.pid), "a closed project gets no subscription")
}

// A page that stops reading its topology stream is dropped after WriteTimeout, as a turn's
// stream is (one SSE writer for both), instead of holding its handler and the project's
// subscription forever.
func TestStalledTopologyClientIsDropped(t *testing.T) {
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	big := g.AddNode(pid, fakegns3.NodeSpec{Name: "R-" + strings.Repeat("x", 64<<10)})
	srv := gns3At(g.URL)
	hub := livetopo.New(srv, livetopo.Options{History: 8})
	s := newTestServer(Deps{GNS3: srv, Live: hub, Heartbeat: time.Hour, WriteTimeout: 300 * time.Millisecond})
	ended := make(chan struct{}, 16)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Handler().ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/topology/stream") {
			ended <- struct{}{}
		}
	}))
	// Small socket buffers on both sides: a few changes fill them.
	hs.Listener = smallBufferListener{hs.Listener}
	hs.Start()
	t.Cleanup(hub.Close)
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections)

	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /v3/projects/%s/chat/topology/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-token\r\n\r\n", pid) // and never read
	// Changes reach the stream only once the subscription is up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, fresh := hub.Topology(context.Background(), pid); fresh {
			break
		}
		require.True(t, time.Now().Before(deadline), "the live copy never became current")
		time.Sleep(5 * time.Millisecond)
	}
	// Someone drags the big node around in the GNS3 GUI: 64 KiB a change, up to 16 MiB in all.
	for i := range 256 {
		select {
		case <-ended:
			return
		default:
		}
		g.MoveNode(big.ID, i, i)
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the topology stream of a client that stopped reading was still being written after 20s")
	}
}

type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}
