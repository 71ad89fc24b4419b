package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestSnapshotCreateListRestore(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", X: 300})
	link := l.fake.AddLink(l.pid, a.ID, 0, 0, b.ID, 0, 0)

	// GNS3 exports only a stopped lab: the tool itself stops nothing (a save point saves the
	// devices first), and says why it took no snapshot.
	r := l.runMode(t, TroubleshootingInjection, CreateSnapshotTool, map[string]any{"name": " before-exercise "})
	if r.Success || !strings.Contains(r.Data[0].Error, "GNS3 takes a snapshot only while every node of the lab is stopped, and PC1 (started) run") {
		t.Fatalf("a snapshot of a running lab: %s", r.JSON())
	}
	if n, _ := l.fake.Node(a.ID); n.Status != "started" || len(l.fake.Snapshots(l.pid)) != 0 || l.fake.Count(fakegns3.OpStopNode) != 0 {
		t.Fatalf("a refused snapshot changed the lab: %+v", n)
	}
	l.fake.SetStatus(a.ID, "stopped")
	r = l.runMode(t, TroubleshootingInjection, CreateSnapshotTool, map[string]any{"name": " before-exercise "})
	mustSucceed(t, r)
	snaps := l.fake.Snapshots(l.pid)
	if len(snaps) != 1 || snaps[0].Name != "before-exercise" || r.Data[0].ID != snaps[0].ID || r.Metadata["snapshot_id"] != snaps[0].ID {
		t.Fatalf("snapshot: %+v, result %s", snaps, r.JSON())
	}
	if !strings.Contains(r.Data[0].Result, "of 2 node(s) and 1 link(s)") || !strings.Contains(r.Data[0].Result, "no running state") {
		t.Fatalf("create result: %s", r.Data[0].Result)
	}
	if ts, _ := r.Metadata["taken_at"].(string); !strings.HasSuffix(ts, "+00:00") {
		t.Fatalf("taken_at is not a time the panel parses: %v", r.Metadata["taken_at"])
	}
	dup := l.run(t, CreateSnapshotTool, map[string]any{"name": "before-exercise"})
	if dup.Success || !strings.Contains(dup.Data[0].Error, `a snapshot named "before-exercise" already exists (taken on `) {
		t.Fatalf("a taken name: %s", dup.JSON())
	}
	l.env.Attempt = 2
	mustSucceed(t, l.run(t, CreateSnapshotTool, map[string]any{"name": "before-exercise"}))
	l.env.Attempt = 1
	mustFailWhole(t, l.run(t, CreateSnapshotTool, map[string]any{"name": "a/b"}), "must not contain / or \\")

	list := l.run(t, ListSnapshotsTool, map[string]any{})
	mustSucceed(t, list)
	if it := item(t, list, "before-exercise"); it.ID != snaps[0].ID || !strings.Contains(it.Result, "taken on ") {
		t.Fatalf("list: %s", list.JSON())
	}

	// Change the lab, then restore by name.
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC3", Y: 300})
	mustSucceed(t, l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": link.ID}}}))
	r = l.run(t, RestoreSnapshotTool, map[string]any{"snapshot": "before-exercise"})
	mustSucceed(t, r)
	nodes := l.fake.Nodes(l.pid)
	if len(nodes) != 2 || nodes[0].Name != "PC1" || nodes[0].ID == a.ID || nodes[0].Status != "stopped" || len(l.fake.Links(l.pid)) != 1 {
		t.Fatalf("after the restore: %+v %+v", nodes, l.fake.Links(l.pid))
	}
	head := r.Data[0]
	if head.ID != snaps[0].ID || !strings.Contains(head.Result, "every one with a new id") || !strings.Contains(head.Result, "removed (added after the snapshot): PC3") {
		t.Fatalf("restore item: %+v", head)
	}
	pc1 := item(t, r, "PC1")
	if pc1.ID != nodes[0].ID || !strings.Contains(pc1.Result, "stopped; node_id "+nodes[0].ID+" (was "+a.ID+")") {
		t.Fatalf("PC1's item: %+v", pc1)
	}
	if r.Metadata["ids_changed"] != true || r.Metadata["nodes"] != 2 {
		t.Fatalf("metadata: %v", r.Metadata)
	}
	// Names resolve again at once.
	mustSucceed(t, l.run(t, "start_gns3_node", map[string]any{"node_ids": []string{"PC1"}}))
	if n, _ := l.fake.NodeByName(l.pid, "PC1"); n.Status != "started" {
		t.Fatalf("PC1 after a start by name: %+v", n)
	}
}

// An unknown snapshot names the ones there are; a refused restore changes nothing; only lab
// automation restores, and the call counts as destructive.
func TestRestoreRefusals(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1"})
	mustFailWhole(t, l.run(t, RestoreSnapshotTool, map[string]any{"snapshot": "x"}), "this project has no snapshots")
	s := l.fake.TakeSnapshot(l.pid, "good")
	r := l.run(t, RestoreSnapshotTool, map[string]any{"snapshot": "goood"})
	mustFailWhole(t, r, `no snapshot "goood" in this project; its snapshots are: "good" (snapshot_id `+s.ID+", taken on ")
	mustFailWhole(t, l.run(t, RestoreSnapshotTool, map[string]any{}), "snapshot is required")

	l.fake.FailNext(fakegns3.OpRestoreSnapshot, s.ID, 409, "Project is closing, please try again in a few seconds...")
	r = l.run(t, RestoreSnapshotTool, map[string]any{"snapshot": s.ID})
	if r.Success || !strings.Contains(r.Data[0].Error, "restoring failed: ") || !strings.Contains(r.Data[0].Error, "Project is closing") {
		t.Fatalf("GNS3 refuses: %s", r.JSON())
	}
	if n, _ := l.fake.NodeByName(l.pid, "PC1"); n.ID != a.ID {
		t.Fatal("a refused restore changed the lab")
	}
	for _, m := range []Mode{TeachingAssistant, TroubleshootingInjection} {
		mustFailWhole(t, l.runMode(t, m, RestoreSnapshotTool, map[string]any{"snapshot": "good"}), "is not available in "+string(m))
	}
	if !domain.IsDestructiveTool(RestoreSnapshotTool) || domain.IsDestructiveTool(CreateSnapshotTool) || domain.IsDestructiveTool(SetLinkConditionsTool) {
		t.Fatal("only the restore waits for a decision")
	}
}

// The approval's plan says what a restore loses now: when the snapshot was taken, what runs, how
// big the lab is; it reads and changes nothing.
func TestRestorePreview(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "R1", Template: "Router", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started", X: 300})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "SW1", Template: fakegns3.EthernetSwitchTemplateID, Y: 300})
	r1, _ := l.fake.NodeByName(l.pid, "R1")
	pc1, _ := l.fake.NodeByName(l.pid, "PC1")
	for _, id := range []string{r1.ID, pc1.ID} {
		l.fake.SetStatus(id, "stopped")
	}
	s := l.fake.TakeSnapshot(l.pid, "baseline")
	for _, id := range []string{r1.ID, pc1.ID} {
		l.fake.SetStatus(id, "started")
	}
	tool, _ := l.reg.Lookup(RestoreSnapshotTool)
	pv, isPreviewer := tool.(Previewer)
	if !isPreviewer {
		t.Fatal("the restore has no preview")
	}
	args, _ := json.Marshal(map[string]string{"snapshot": "baseline"})
	l.fake.ResetCounts()
	got, err := pv.Preview(t.Context(), l.env, args)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Restore snapshot "baseline", taken on ` + s.CreatedAt.Format("2006-01-02 15:04:05") + " UTC",
		"2 running node(s) (PC1, R1) are stopped and lose their unsaved configuration", "3 node(s) and 0 link(s) now",
		"every node and link has a new id"} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	if l.fake.Count(fakegns3.OpRestoreSnapshot) != 0 || l.fake.Count(fakegns3.OpCreateSnapshot) != 0 {
		t.Fatal("the preview changed something")
	}
	args, _ = json.Marshal(map[string]string{"snapshot": "nope"})
	if what, err := pv.Preview(t.Context(), l.env, args); what != `Restore snapshot "nope"` || err == nil ||
		!strings.Contains(err.Error(), `no snapshot "nope" in this project; its snapshots are: "baseline"`) {
		t.Fatalf("preview of an unknown snapshot: %s, %v", what, err)
	}
}
