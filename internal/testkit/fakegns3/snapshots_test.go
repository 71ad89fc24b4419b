package fakegns3

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSnapshotAndLinkConditionShapesMatchSamples(t *testing.T) {
	s := New(t)
	pid := s.AddProject("samples-t4")
	a := s.AddNode(pid, NodeSpec{})
	b := s.AddNode(pid, NodeSpec{})
	l := s.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)
	base := "/v3/projects/" + pid

	status, want := sample(t, "v3.0.6/link-available-filters.json")
	got := do(t, s, AdminToken, "GET", base+"/links/"+l.ID+"/available_filters", nil)
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got.body)
	if got.status != status || string(gotJSON) != string(wantJSON) {
		t.Fatalf("available filters: %d %s\nreal: %s", got.status, gotJSON, wantJSON)
	}
	_, want = sample(t, "v3.0.6/link-update-filters.json")
	got = do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"filters": map[string]any{"delay": []int{200, 20}, "packet_loss": []int{30}}})
	if got.status != 200 {
		t.Fatalf("update filters: %d %s", got.status, got.raw)
	}
	sameKeys(t, "link update", want, got.body)
	wantFilters, _ := json.Marshal(obj(want)["filters"])
	gotFilters, _ := json.Marshal(obj(got.body)["filters"])
	if string(wantFilters) != string(gotFilters) {
		t.Errorf("filters: real %s, fake %s", wantFilters, gotFilters)
	}

	// The snapshot samples hold bodies alone; GNS3 answers a create with 201.
	_, want = sample(t, "v3.0.6/snapshot-create-201.json")
	got = do(t, s, AdminToken, "POST", base+"/snapshots", map[string]string{"name": "before-exercise"})
	if got.status != http.StatusCreated {
		t.Fatalf("create snapshot: %d %s", got.status, got.raw)
	}
	sameKeys(t, "snapshot", want, got.body)
	_, want = sample(t, "v3.0.6/snapshots-list.json")
	sameKeys(t, "snapshot list item", first(want), first(do(t, s, AdminToken, "GET", base+"/snapshots", nil).body))
	sid := obj(got.body)["snapshot_id"].(string)
	_, want = sample(t, "v3.0.6/snapshot-restore.json")
	got = do(t, s, AdminToken, "POST", base+"/snapshots/"+sid+"/restore", map[string]any{})
	if got.status != http.StatusCreated {
		t.Fatalf("restore: %d %s", got.status, got.raw)
	}
	sameKeys(t, "restore", want, got.body)
}

// A restore behaves as GNS3's does: new IDs for every node, link and snapshot, names kept, nodes
// stopped (PC1 ran when it was restored), filters as at the snapshot, suspension gone, and the new
// topology announced, then snapshot.restored.
func TestRestoreRenewsIDsAndKeepsNames(t *testing.T) {
	s := New(t, WithNotificationPing(time.Hour))
	pid := s.AddProject("lab")
	pc1 := s.AddNode(pid, NodeSpec{Name: "PC1"})
	pc2 := s.AddNode(pid, NodeSpec{Name: "PC2"})
	sw := s.AddNode(pid, NodeSpec{Template: EthernetSwitchTemplateID, Name: "SW1"})
	l1 := s.AddLink(pid, pc1.ID, 0, 0, sw.ID, 0, 0)
	l2 := s.AddLink(pid, pc2.ID, 0, 0, sw.ID, 0, 1)
	base := "/v3/projects/" + pid
	do(t, s, AdminToken, "PUT", base+"/links/"+l1.ID, map[string]any{"filters": map[string]any{"delay": []int{200, 0}}, "suspend": true})
	snap := s.TakeSnapshot(pid, "good")
	other := s.TakeSnapshot(pid, "other")
	s.SetStatus(pc1.ID, "started")

	// Everything changes after the snapshot.
	do(t, s, AdminToken, "PUT", base+"/links/"+l1.ID, map[string]any{"filters": map[string]any{}, "suspend": false})
	do(t, s, AdminToken, "DELETE", base+"/links/"+l2.ID, nil)
	s.AddNode(pid, NodeSpec{Name: "PC3"})
	s.StartCaptureOn(l1.ID)
	old := map[string]bool{pc1.ID: true, pc2.ID: true, sw.ID: true, l1.ID: true, l2.ID: true}

	lines := listen(t, s, pid)
	if r := do(t, s, AdminToken, "POST", base+"/snapshots/"+snap.ID+"/restore", map[string]any{}); r.status != 201 {
		t.Fatalf("restore: %d %s", r.status, r.raw)
	}
	snaps := s.Snapshots(pid)
	if len(snaps) != 2 || snaps[0].ID == snap.ID || snaps[1].ID == other.ID || snaps[0].Name != "good" || snaps[0].CreatedAt != snap.CreatedAt {
		t.Errorf("snapshots after the restore: %+v, want the same names and times under new IDs", snaps)
	}
	var names []string
	for _, n := range s.Nodes(pid) {
		names = append(names, n.Name+"="+n.Status)
		if old[n.ID] {
			t.Errorf("node %s kept its ID %s", n.Name, n.ID)
		}
	}
	if strings.Join(names, ",") != "PC1=stopped,PC2=stopped,SW1=started" {
		t.Fatalf("nodes after restore: %v", names)
	}
	links := s.Links(pid)
	if len(links) != 2 {
		t.Fatalf("links after restore: %+v", links)
	}
	pc1Now, _ := s.NodeByName(pid, "PC1")
	for _, l := range links {
		if old[l.ID] || s.Capturing(l.ID) || l.Suspended {
			t.Errorf("link after restore: %+v (old ID, capturing or suspended)", l)
		}
		want := "map[]"
		if l.Ends[0].NodeID == pc1Now.ID {
			// GNS3 keeps [200, 0] as given: only the first value decides whether it is active.
			want = "map[delay:[200 0]]"
		}
		if fmt.Sprint(l.Filters) != want {
			t.Errorf("filters after restore: %v, want %s", l.Filters, want)
		}
	}
	// The name PC3 is free again.
	r := do(t, s, AdminToken, "POST", base+"/templates/"+VPCSTemplateID, map[string]int{"x": 0, "y": 300})
	if obj(r.body)["name"] != "PC3" {
		t.Errorf("a name from after the snapshot is still taken: %v", obj(r.body)["name"])
	}
	var actions []string
	for a := range lines {
		actions = append(actions, a)
		if a == ActionSnapshotRestored {
			break
		}
	}
	if got := strings.Join(actions, ","); !strings.HasSuffix(got, "node.created,node.created,node.created,link.created,link.created,snapshot.restored") || strings.Contains(got, "deleted") {
		t.Fatalf("notifications of a restore: %s", got)
	}
}

func TestSnapshotAndLinkUpdateRefusals(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	a := s.AddNode(pid, NodeSpec{})
	b := s.AddNode(pid, NodeSpec{})
	sw := s.AddNode(pid, NodeSpec{Template: EthernetSwitchTemplateID})
	hub := s.AddNode(pid, NodeSpec{Template: EthernetHubTemplateID})
	l := s.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)
	trunk := s.AddLink(pid, sw.ID, 0, 0, hub.ID, 0, 0)
	base := "/v3/projects/" + pid
	s.TakeSnapshot(pid, "one")

	for _, tc := range []struct {
		got    call
		status int
		msg    string
	}{
		{do(t, s, AdminToken, "POST", base+"/snapshots", map[string]string{"name": "one"}), 409, "The snapshot name one already exists"},
		{do(t, s, AdminToken, "POST", base+"/snapshots", map[string]string{}), 422, "Field required"},
		{do(t, s, AdminToken, "POST", base+"/snapshots/00000000-0000-0000-0000-000000000000/restore", map[string]any{}), 404, "Snapshot ID 00000000-0000-0000-0000-000000000000 doesn't exist"},
		{do(t, s, AdminToken, "POST", base+"/snapshots/one/restore", map[string]any{}), 422, "valid UUID"},
		{do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"suspend": "maybe"}), 422, "valid boolean"},
	} {
		if tc.got.status != tc.status || !strings.Contains(fmt.Sprint(obj(tc.got.body)["message"]), tc.msg) {
			t.Errorf("want %d %q, got %d %s", tc.status, tc.msg, tc.got.status, tc.got.raw)
		}
	}
	if got := do(t, s, AdminToken, "GET", base+"/links/"+trunk.ID+"/available_filters", nil); got.status != 200 || len(got.body.([]any)) != 0 {
		t.Errorf("a switch-to-hub link offers filters: %s", got.raw)
	}
	// GNS3's normalisation: a first value of 0 or "" drops the filter, text is trimmed.
	got := do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"filters": map[string]any{
		"delay": []int{0, 20}, "packet_loss": []float64{12.7}, "bpf": []string{" icmp\n"}, "corrupt": []string{""}}})
	f, _ := json.Marshal(obj(got.body)["filters"])
	if string(f) != `{"bpf":["icmp"],"packet_loss":[12]}` {
		t.Errorf("normalised filters: %s", f)
	}
	// GNS3 exports only a stopped project: a started or suspended node refuses a snapshot, a
	// switch (which always runs) does not.
	for _, status := range []string{"started", "suspended"} {
		s.SetStatus(a.ID, status)
		if r := do(t, s, AdminToken, "POST", base+"/snapshots", map[string]string{"name": "two"}); r.status != 409 ||
			obj(r.body)["message"] != "Project must be stopped in order to export it" {
			t.Errorf("snapshot while a node is %s: %d %s", status, r.status, r.raw)
		}
	}
	s.SetStatus(a.ID, "stopped")
	if n := len(s.Snapshots(pid)); n != 1 {
		t.Errorf("refused snapshots were taken: %d", n)
	}
	s.SetProjectStatus(pid, "closed")
	if r := do(t, s, AdminToken, "POST", base+"/snapshots", map[string]string{"name": "two"}); r.status != 403 {
		t.Errorf("snapshot of a closed project: %d %s", r.status, r.raw)
	}
	if n := len(s.Snapshots(pid)); n != 1 {
		t.Errorf("refusals changed the snapshots: %d", n)
	}
}

// A request made to hang is never answered and changes nothing; the client's own deadline ends
// it, and once released the same request works.
func TestHangLeavesTheNodeAsItWas(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	pc1 := s.AddNode(pid, NodeSpec{Name: "PC1", Status: "started"})
	pc2 := s.AddNode(pid, NodeSpec{Name: "PC2", Status: "started"})
	s.Hang(OpStopNode, pc1.ID)
	stop := func(id string) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v3/projects/"+pid+"/nodes/"+id+"/stop", nil)
		req.Header.Set("Authorization", "Bearer "+AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if _, err := stop(pc1.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hung stop answered: %v", err)
	}
	if code, err := stop(pc2.ID); err != nil || code != 204 {
		t.Fatalf("another node's stop: %d %v", code, err)
	}
	if n, _ := s.Node(pc1.ID); n.Status != "started" {
		t.Fatalf("the hung node is %s", n.Status)
	}
	s.Unhang(OpStopNode, pc1.ID)
	if code, err := stop(pc1.ID); err != nil || code != 204 {
		t.Fatalf("after Unhang: %d %v", code, err)
	}
}

// listen returns the actions of the project's notification stream, pings left out.
func listen(t *testing.T, s *Server, pid string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/v3/projects/"+pid+"/notifications", nil)
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The fake subscribes before it answers: from here on every change is heard.
	t.Cleanup(func() { resp.Body.Close() })
	out := make(chan string, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var n struct{ Action string }
			if json.Unmarshal(sc.Bytes(), &n) == nil && n.Action != "ping" {
				out <- n.Action
			}
		}
	}()
	return out
}
