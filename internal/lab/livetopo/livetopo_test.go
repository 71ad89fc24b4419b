package livetopo_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

const sampleProject = "be870f79-b336-4133-9a80-e9c86e58cb90" // the project of the captured stream

type rig struct {
	g   *fakegns3.Server
	hub *livetopo.Hub
	c   *gns3.Client
	pid string
}

func newRig(t *testing.T, opts livetopo.Options, gopts ...fakegns3.Option) *rig {
	t.Helper()
	g := fakegns3.New(t, gopts...)
	pid := g.AddProject("lab", fakegns3.ProjectID(sampleProject))
	srv := gns3.NewServer(g.URL, 5*time.Second)
	hub := livetopo.New(srv, opts)
	t.Cleanup(hub.Close)
	return &rig{g: g, hub: hub, c: srv.WithToken(fakegns3.AdminToken), pid: pid}
}

// live reads once (starting the subscription) and waits until the live copy is current.
func (r *rig) live(t *testing.T) *livetopo.Snapshot {
	t.Helper()
	if _, err := r.hub.Read(context.Background(), r.c, r.pid); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return r.waitFor(t, "a current live copy", func(*livetopo.Snapshot) bool { return true })
}

// waitFor waits, change by change, until the current live copy satisfies cond.
func (r *rig) waitFor(t *testing.T, what string, cond func(*livetopo.Snapshot) bool) *livetopo.Snapshot {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		_, _, next, _ := r.hub.Changes(r.pid, 0)
		if s, fresh := r.hub.Topology(context.Background(), r.pid); fresh && cond(s) {
			return s
		}
		if next == nil {
			// No subscription (yet): look again shortly.
			ch := make(chan struct{})
			time.AfterFunc(5*time.Millisecond, func() { close(ch) })
			next = ch
		}
		select {
		case <-next:
		case <-time.After(50 * time.Millisecond): // freshness also changes without a change
		case <-deadline:
			s, fresh := r.hub.Topology(context.Background(), r.pid)
			t.Fatalf("waiting for %s: live copy fresh=%v: %+v", what, fresh, s)
		}
	}
}

func nodeNamed(s *livetopo.Snapshot, name string) *gns3.Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

func TestLiveCopyFollowsCreateUpdateDelete(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	ctx := context.Background()
	r.live(t)
	_, v0, _, ok := r.hub.Changes(r.pid, 0)
	if ok {
		t.Fatal("changes since version 0 must ask for a snapshot (the copy was read whole)")
	}

	pc1, err := r.c.CreateNodeFromTemplate(ctx, r.pid, fakegns3.VPCSTemplateID, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	pc2, err := r.c.CreateNodeFromTemplate(ctx, r.pid, fakegns3.VPCSTemplateID, 250, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	link, err := r.c.CreateLink(ctx, r.pid, gns3.LinkCreate{Nodes: []gns3.LinkEnd{
		{NodeID: pc1.NodeID, AdapterNumber: 0, PortNumber: zero}, {NodeID: pc2.NodeID, AdapterNumber: 0, PortNumber: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.c.StartNode(ctx, r.pid, pc1.NodeID); err != nil {
		t.Fatal(err)
	}
	r.g.MoveNode(pc2.NodeID, 300, 120)
	r.g.SetCapturing(link.LinkID, true)

	s := r.waitFor(t, "two nodes, a capturing link, PC1 started, PC2 moved", func(s *livetopo.Snapshot) bool {
		p1, p2 := nodeNamed(s, "PC1"), nodeNamed(s, "PC2")
		return p1 != nil && p2 != nil && len(s.Links) == 1 && s.Links[0].Capturing &&
			p1.Status == gns3.NodeStarted && p2.X == 300 && p2.Y == 120
	})
	if got := s.Nodes[0].Ports; len(got) != 1 || got[0].ShortName != "e0" {
		t.Errorf("ports of a created node: %+v", got)
	}
	changes, v, _, ok := r.hub.Changes(r.pid, v0)
	if !ok {
		t.Fatal("the changes after the seed must be known")
	}
	var actions []string
	for _, c := range changes {
		actions = append(actions, c.Action)
	}
	want := []string{"node.created", "node.created", "link.created", "node.updated", "node.updated", "link.updated"}
	if len(actions) != len(want) {
		t.Fatalf("changes %v, want %v", actions, want)
	}
	for i := range want {
		if actions[i] != want[i] {
			t.Fatalf("changes %v, want %v", actions, want)
		}
	}

	// Deleting a node removes its links too.
	if err := r.c.DeleteNode(ctx, r.pid, pc1.NodeID); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "PC1 and its link gone", func(s *livetopo.Snapshot) bool {
		return nodeNamed(s, "PC1") == nil && len(s.Links) == 0 && len(s.Nodes) == 1
	})
	changes, _, _, _ = r.hub.Changes(r.pid, v)
	if len(changes) != 2 || changes[0].Action != "link.deleted" || changes[1].Action != "node.deleted" {
		t.Fatalf("delete changes: %+v", changes)
	}

	// A current copy answers without asking GNS3 for the topology again.
	r.g.ResetCounts()
	if _, err := r.hub.Read(ctx, r.c, r.pid); err != nil {
		t.Fatal(err)
	}
	for op, n := range r.g.Counts() {
		t.Errorf("a read of a current copy made %d %s requests", n, op)
	}
}

// The captured stream of a real GNS3 3.0.6, fed line by line, builds the lab it describes.
func TestRealSampleStream(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	r.live(t)
	f, err := os.Open("../../testkit/fakegns3/testdata/v3.0.6/project-notifications.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		r.g.Notify(r.pid, sc.Text())
		lines++
	}
	if lines != 21 {
		t.Fatalf("the sample has %d lines, want 21", lines)
	}
	// Pings are liveness, not changes: 15 of the 21 lines change the copy (version 1 is the seed).
	s := r.waitFor(t, "the sample's end state", func(s *livetopo.Snapshot) bool { return s.Version == 16 })
	if p1, p2 := nodeNamed(s, "PC1"), nodeNamed(s, "PC2"); p1 == nil || p2 == nil || p1.Status != gns3.NodeStopped || p2.X != 250 {
		t.Fatalf("nodes from the sample: %+v", s.Nodes)
	}
	if len(s.Links) != 1 || s.Links[0].Capturing {
		t.Fatalf("links from the sample (capture started, then stopped): %+v", s.Links)
	}
	if p1 := nodeNamed(s, "PC1"); p1.ConsolePort() != 5000 || p1.ConsoleHost != "127.0.0.1" || len(p1.Ports) != 1 {
		t.Errorf("PC1 from the sample: %+v", p1)
	}
	if l := s.Links[0]; len(l.Nodes) != 2 || l.Nodes[0].Label == nil || l.Nodes[0].Label.Text != "0/0" {
		t.Errorf("link from the sample: %+v", l)
	}
}

// A dropped stream that cannot reconnect at once misses changes; the reconnect reads the whole
// project again, and until then the copy is not presented as current.
func TestDroppedStreamReconnectsAndRereads(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	before := r.live(t)
	reads := r.g.Count(fakegns3.OpListNodes)
	r.g.Inject(fakegns3.Failure{Op: fakegns3.OpNotifications, Status: http.StatusServiceUnavailable, Message: "restarting", Times: 2})
	r.g.DropNotifications(r.pid)
	// Changes while nobody listens: only a re-read can learn them.
	n := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "R9", Template: fakegns3.RouterTemplateID, X: 100, Y: 100})
	r.g.SetStatus(n.ID, "started")
	r.waitFor(t, "R9 after the reconnect", func(s *livetopo.Snapshot) bool {
		r9 := nodeNamed(s, "R9")
		return r9 != nil && r9.Status == gns3.NodeStarted
	})
	if got := r.g.Count(fakegns3.OpListNodes); got <= reads {
		t.Errorf("no re-read after the reconnect (node lists %d before, %d after)", reads, got)
	}
	if r.g.Count(fakegns3.OpNotifications) < 4 {
		t.Errorf("expected the stream to be reopened after two refusals, opened %d times", r.g.Count(fakegns3.OpNotifications))
	}
	if _, _, _, ok := r.hub.Changes(r.pid, before.Version); ok {
		t.Error("changes across a re-read cannot be known: a page must take a new snapshot")
	}
}

// While the stream is down (GNS3 refuses to reopen it for a while) the copy is never presented
// as current: readers get GNS3's own answer, which already holds the changes made meanwhile; the
// copy itself learns them from the re-read that follows the reconnect.
func TestStreamDownIsNeverCurrent(t *testing.T) {
	r := newRig(t, livetopo.Options{RetryMax: 50 * time.Millisecond})
	ctx := context.Background()
	before := r.live(t)
	r.g.Inject(fakegns3.Failure{Op: fakegns3.OpNotifications, Status: http.StatusServiceUnavailable, Message: "restarting"})
	r.g.DropNotifications(r.pid)
	waitUntil(t, "the copy to stop being current", func() bool {
		_, fresh := r.hub.Topology(ctx, r.pid)
		return !fresh
	})
	n := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "R9", Template: fakegns3.RouterTemplateID})
	r.g.ResetCounts()
	s, err := r.hub.Read(ctx, r.c, r.pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.Live || nodeNamed(s, "R9") == nil || r.g.Count(fakegns3.OpListNodes) != 1 {
		t.Fatalf("a read while the stream is down must come from GNS3: live=%v R9=%v lists=%d", s.Live, nodeNamed(s, "R9") != nil, r.g.Count(fakegns3.OpListNodes))
	}
	if copyNow, fresh := r.hub.Topology(ctx, r.pid); fresh || nodeNamed(copyNow, "R9") != nil {
		t.Fatalf("the copy changed or became current without its stream (fresh=%v)", fresh)
	}
	if !r.hub.Subscribed(r.pid) {
		t.Fatal("a stream GNS3 cannot serve for a while is retried, not given up")
	}
	r.g.ClearFailures()
	after := r.waitFor(t, "R9 after the reconnect", func(s *livetopo.Snapshot) bool { return nodeNamed(s, "R9") != nil })
	if nodeNamed(after, "R9").NodeID != n.ID {
		t.Error("R9 is not the node GNS3 created")
	}
	if _, _, _, ok := r.hub.Changes(r.pid, before.Version); ok {
		t.Error("changes across the gap cannot be known: a page must take a new snapshot")
	}
}

// A line that cannot be read means something may be missing: the project is read again.
func TestUnreadableNotificationRereads(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	r.live(t)
	s0, _ := r.hub.Topology(context.Background(), r.pid)
	reads := r.g.Count(fakegns3.OpListNodes)
	r.g.Notify(r.pid, `{"action": "node.updated", "event": {"name": `)
	r.waitFor(t, "a re-read", func(s *livetopo.Snapshot) bool {
		return s.Version > s0.Version && r.g.Count(fakegns3.OpListNodes) > reads
	})
	if _, _, _, ok := r.hub.Changes(r.pid, s0.Version); ok {
		t.Error("after a re-read, changes since the old version must ask for a snapshot")
	}
}

// A snapshot restored by someone else: GNS3 announces the restored nodes and links under new
// IDs and never the removal of the old ones, so the copy must read the project again rather
// than add the announced ones to what it has.
func TestRestoredSnapshotRereads(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	ctx := context.Background()
	a := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "PC1"})
	b := r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "PC2"})
	l := r.g.AddLink(r.pid, a.ID, 0, 0, b.ID, 0, 0)
	snap := r.g.TakeSnapshot(r.pid, "two PCs")
	r.live(t)
	r.g.AddNode(r.pid, fakegns3.NodeSpec{Name: "PC3"})
	before := r.waitFor(t, "PC3", func(s *livetopo.Snapshot) bool { return nodeNamed(s, "PC3") != nil })

	if _, err := r.c.RestoreSnapshot(ctx, r.pid, snap.ID); err != nil {
		t.Fatal(err)
	}
	after := r.waitFor(t, "the restored project", func(s *livetopo.Snapshot) bool {
		return s.Version > before.Version && nodeNamed(s, "PC3") == nil && nodeNamed(s, "PC1") != nil
	})
	pc1, pc2 := nodeNamed(after, "PC1"), nodeNamed(after, "PC2")
	if len(after.Nodes) != 2 || pc2 == nil || pc1.NodeID == a.ID || pc2.NodeID == b.ID || pc1.Status != gns3.NodeStopped {
		t.Fatalf("nodes after the restore: %+v", after.Nodes)
	}
	if len(after.Links) != 1 || after.Links[0].LinkID == l.ID || after.Links[0].Nodes[0].NodeID != pc1.NodeID {
		t.Fatalf("links after the restore: %+v", after.Links)
	}
	if _, _, _, ok := r.hub.Changes(r.pid, before.Version); ok {
		t.Error("after a restore, changes since an older version must ask for a new snapshot")
	}
}

// project.closed re-reads; a closed copy is never current, so readers go to GNS3.
func TestProjectClosedRereadsAndIsNotCurrent(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	ctx := context.Background()
	r.live(t)
	reads := r.g.Count(fakegns3.OpListNodes)
	r.g.SetProjectStatus(r.pid, "closed")
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, fresh := r.hub.Topology(ctx, r.pid)
		if s != nil && s.Project.Status == gns3.ProjectClosed {
			if fresh {
				t.Fatal("a closed project's copy is presented as current")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy never learned that the project closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r.g.Count(fakegns3.OpListNodes) <= reads {
		t.Error("project.closed did not cause a re-read")
	}
	r.g.ResetCounts()
	s, err := r.hub.Read(ctx, r.c, r.pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.Live || s.Project.Status != gns3.ProjectClosed || r.g.Count(fakegns3.OpListNodes) != 1 {
		t.Errorf("a read of a closed project must go to GNS3: live=%v status=%s lists=%d", s.Live, s.Project.Status, r.g.Count(fakegns3.OpListNodes))
	}
}

// A copy that has not heard from GNS3 for MaxSilence is stale: readers go to GNS3.
func TestSilentStreamIsStale(t *testing.T) {
	r := newRig(t, livetopo.Options{MaxSilence: 150 * time.Millisecond}, fakegns3.WithNotificationPing(time.Hour))
	ctx := context.Background()
	r.live(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, fresh := r.hub.Topology(ctx, r.pid); !fresh {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a silent copy stayed current")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.g.ResetCounts()
	s, err := r.hub.Read(ctx, r.c, r.pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.Live || r.g.Count(fakegns3.OpListNodes) == 0 {
		t.Errorf("a stale copy was presented as current (live=%v)", s.Live)
	}
}

// Pings keep a quiet copy current without any re-read.
func TestPingsKeepCopyCurrent(t *testing.T) {
	r := newRig(t, livetopo.Options{MaxSilence: 300 * time.Millisecond}, fakegns3.WithNotificationPing(50*time.Millisecond))
	ctx := context.Background()
	r.live(t)
	reads := r.g.Count(fakegns3.OpListNodes)
	time.Sleep(time.Second) // the time that passes is the point of the test
	if _, fresh := r.hub.Topology(ctx, r.pid); !fresh {
		t.Error("a pinged copy went stale")
	}
	if got := r.g.Count(fakegns3.OpListNodes); got != reads {
		t.Errorf("a quiet, pinged copy was read again (%d → %d lists)", reads, got)
	}
}

// Each user's access is checked with their own token, whatever the shared copy holds.
func TestAccessIsCheckedPerUser(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	ctx := context.Background()
	r.live(t)
	r.g.AddUser("mallory", "mallory-token", false)
	mallory := r.c.Server().WithToken("mallory-token")
	if _, err := r.hub.Read(ctx, mallory, r.pid); !errors.Is(err, gns3.ErrForbidden) {
		t.Fatalf("a user without access read the live copy: %v", err)
	}
	r.g.AddUser("bob", "bob-token", false)
	r.g.Grant(r.pid, "bob")
	bob := r.c.Server().WithToken("bob-token")
	r.g.ResetCounts()
	if _, err := r.hub.Read(ctx, bob, r.pid); err != nil {
		t.Fatal(err)
	}
	if _, err := r.hub.Read(ctx, bob, r.pid); err != nil {
		t.Fatal(err)
	}
	if got := r.g.Count(fakegns3.OpGetProject); got != 1 {
		t.Errorf("bob's access was checked %d times in two reads, want once (remembered)", got)
	}
}

// The subscription ends when GNS3 refuses its credential: the token is no longer valid (401),
// or its user may no longer read the project (403).
func TestRefusedCredentialEndsSubscription(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			r := newRig(t, livetopo.Options{})
			r.g.AddUser("bob", "bob-token", false)
			r.g.Grant(r.pid, "bob")
			r.c = r.c.Server().WithToken("bob-token")
			r.live(t)
			r.g.Inject(fakegns3.Failure{Op: fakegns3.OpNotifications, Status: status, Message: "refused"})
			r.g.DropNotifications(r.pid)
			waitUntil(t, "the subscription to end", func() bool { return !r.hub.Subscribed(r.pid) })
			if _, fresh := r.hub.Topology(context.Background(), r.pid); fresh {
				t.Error("an ended subscription's copy is current")
			}
		})
	}
}

// An unused subscription stops; a held one (an open page) does not.
func TestIdleSubscriptionStops(t *testing.T) {
	r := newRig(t, livetopo.Options{IdleAfter: 200 * time.Millisecond})
	r.live(t)
	release := r.hub.Hold(r.pid)
	time.Sleep(500 * time.Millisecond) // longer than IdleAfter, on purpose
	if !r.hub.Subscribed(r.pid) {
		t.Fatal("a held subscription stopped")
	}
	release()
	waitUntil(t, "the idle subscription to stop", func() bool { return !r.hub.Subscribed(r.pid) })
	waitUntil(t, "the notification stream to close", func() bool { return r.g.NotificationListeners(r.pid) == 0 })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Refresh re-reads on the subscription and returns once the copy holds the result; without a
// connection (or a subscription) it returns at once.
func TestRefreshRereads(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	ctx := context.Background()
	if err := r.hub.Refresh(ctx, r.pid); err != nil {
		t.Fatalf("refresh without a subscription: %v", err)
	}
	before := r.live(t)
	reads := r.g.Count(fakegns3.OpListNodes)
	if err := r.hub.Refresh(ctx, r.pid); err != nil {
		t.Fatal(err)
	}
	if got := r.g.Count(fakegns3.OpListNodes); got != reads+1 {
		t.Errorf("refresh made %d node lists, want 1", got-reads)
	}
	s, fresh := r.hub.Topology(ctx, r.pid)
	if !fresh || s.Version <= before.Version {
		t.Errorf("after a refresh the copy is current and newer: fresh=%v version %d → %d", fresh, before.Version, s.Version)
	}
	r.g.Inject(fakegns3.Failure{Op: fakegns3.OpNotifications, Status: http.StatusServiceUnavailable, Message: "down"})
	r.g.DropNotifications(r.pid)
	waitUntil(t, "the copy to go stale", func() bool { _, fresh := r.hub.Topology(ctx, r.pid); return !fresh })
	done := make(chan error, 1)
	go func() { done <- r.hub.Refresh(ctx, r.pid) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("refresh while reconnecting: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("refresh blocked while the subscription was reconnecting")
	}
}

// The metrics read Stats: followed projects, connected streams, full re-reads, silence.
func TestStatsCountProjectsResyncsAndSilence(t *testing.T) {
	r := newRig(t, livetopo.Options{})
	if st := r.hub.Stats(); st != (livetopo.Stats{}) {
		t.Fatalf("a hub that follows nothing: %+v", st)
	}
	r.live(t)
	waitUntil(t, "the stream to count as connected", func() bool { return r.hub.Stats().Connected == 1 })
	st := r.hub.Stats()
	if st.Projects != 1 || st.Resyncs != 1 || st.LongestSilence <= 0 || st.LongestSilence > 8*time.Second {
		t.Fatalf("one project read once: %+v", st)
	}
	if err := r.hub.Refresh(context.Background(), r.pid); err != nil {
		t.Fatal(err)
	}
	if got := r.hub.Stats().Resyncs; got != 2 {
		t.Errorf("after a refresh: %d resyncs, want 2", got)
	}
}
