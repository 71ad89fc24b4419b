package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// A save point's plan: the name is checked and free, and the nodes GNS3 would not export are the
// ones that run (a suspended one too), never a built-in switch; each with what reaches its
// console and, where its fields tell, its platform.
func TestPlanSavePointListsWhatRuns(t *testing.T) {
	l := newLab(t)
	l.fake.AddFRRTemplate()
	pc1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", X: 200})
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "R1", Template: "FRR", X: 400, Status: "started"})
	l.fake.SetStatus(r1.ID, "suspended")
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "SW1", Template: fakegns3.EthernetSwitchTemplateID, Y: 300})
	plan := func(args any) (SavePointPlan, error) {
		b, _ := json.Marshal(args)
		return PlanSavePoint(t.Context(), l.env, b)
	}
	p, err := plan(map[string]string{"name": " before-class "})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "before-class" || p.Nodes != 4 || len(p.Running) != 2 {
		t.Fatalf("plan: %+v", p)
	}
	if n := p.Running[0]; n.Name != "PC1" || n.NodeID != pc1.ID || n.Status != "started" || n.Platform != "vpcs" || n.Target.ConsolePort == 0 {
		t.Fatalf("PC1: %+v", n)
	}
	if n := p.Running[1]; n.Name != "R1" || n.Status != "suspended" || n.Platform != "frr" || n.Target.Image == "" {
		t.Fatalf("R1: %+v", n)
	}
	preview := SavePointPreview(p)
	for _, want := range []string{`Take snapshot "before-class" of the lab (4 node(s), 0 link(s))`, "the 2 running node(s) are paused",
		"PC1 (save), R1 (write memory)", "until their consoles answer"} {
		if !strings.Contains(preview, want) {
			t.Errorf("preview lacks %q: %s", want, preview)
		}
	}

	for _, id := range []string{pc1.ID, r1.ID} {
		l.fake.SetStatus(id, "stopped")
	}
	l.fake.TakeSnapshot(l.pid, "taken")
	if _, err := plan(map[string]string{"name": "taken"}); err == nil || !strings.Contains(err.Error(), `a snapshot named "taken" already exists (taken on `) {
		t.Fatalf("a taken name: %v", err)
	}
	if _, err := plan(map[string]string{"name": "a/b"}); err == nil || !strings.Contains(err.Error(), "must not contain /") {
		t.Fatalf("a bad name: %v", err)
	}
	if p, err := plan(map[string]string{"name": "quiet"}); err != nil || len(p.Running) != 0 ||
		!strings.Contains(SavePointPreview(p), "no node runs, so nothing is paused") {
		t.Fatalf("a stopped lab: %+v %v", p, err)
	}
	if l.fake.Count(fakegns3.OpStopNode) != 0 || l.fake.Count(fakegns3.OpCreateSnapshot) != 0 {
		t.Fatal("planning changed the lab")
	}
}

// Stop, snapshot, start: the pause's GNS3 half. A node that does not stop is reported with why,
// and the others are stopped and can be started again; nodes are started by name, so a restore's
// new ids do not matter.
func TestStopSnapshotStartAndANodeThatHangs(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", Status: "started", X: 200})
	p, err := PlanSavePoint(t.Context(), l.env, json.RawMessage(`{"name":"s1"}`))
	if err != nil {
		t.Fatal(err)
	}

	// Taken while they run: GNS3's own refusal, in words.
	_, err = TakeSnapshot(t.Context(), l.env, "s1")
	var se *SnapshotError
	if !errors.As(err, &se) || !strings.Contains(se.Sentence, "GNS3 takes a snapshot only while every node of the lab is stopped") ||
		!strings.Contains(se.Sentence, "PC1 (started), PC2 (started) still run") {
		t.Fatalf("snapshot of a running lab: %v", err)
	}

	stopped, failedItems := StopNodes(t.Context(), l.env, p.Running)
	if len(stopped) != 2 || len(failedItems) != 0 {
		t.Fatalf("stop: %+v %+v", stopped, failedItems)
	}
	s, err := TakeSnapshot(t.Context(), l.env, "s1")
	if err != nil || s.Name != "s1" {
		t.Fatalf("snapshot of the stopped lab: %+v %v", s, err)
	}
	_, err = TakeSnapshot(t.Context(), l.env, "s1")
	if !errors.As(err, &se) || !strings.Contains(se.Sentence, `a snapshot named "s1" already exists (taken on `) {
		t.Fatalf("a second snapshot of the same name: %v", err)
	}
	l.env.Attempt = 2
	if again, err := TakeSnapshot(t.Context(), l.env, "s1"); err != nil || again.SnapshotID != s.SnapshotID {
		t.Fatalf("a retried snapshot finds its own: %+v %v", again, err)
	}
	l.env.Attempt = 1

	// Restored: new ids, stopped; started again by name, with the consoles they have now.
	if r := l.run(t, RestoreSnapshotTool, map[string]string{"snapshot": "s1"}); !r.Success {
		t.Fatal(r.JSON())
	}
	back := StartNodes(t.Context(), l.env, p.Running, nil)
	for i, b := range back {
		now, _ := l.fake.NodeByName(l.pid, p.Running[i].Name)
		if b.Err != "" || b.NodeID != now.ID || b.NodeID == p.Running[i].NodeID || now.Status != "started" || b.Target.NodeID != now.ID {
			t.Fatalf("%s started again: %+v, now %+v", p.Running[i].Name, b, now)
		}
	}

	// PC2's emulator hangs: PC1 stops, PC2 is reported and keeps running.
	stopWaitByType["vpcs"] = 300 * time.Millisecond
	t.Cleanup(func() { stopWaitByType["vpcs"] = 20 * time.Second })
	pc2now, _ := l.fake.NodeByName(l.pid, "PC2")
	l.fake.Hang(fakegns3.OpStopNode, pc2now.ID)
	p, err = PlanSavePoint(t.Context(), l.env, json.RawMessage(`{"name":"s2"}`))
	if err != nil {
		t.Fatal(err)
	}
	stopped, failedItems = StopNodes(t.Context(), l.env, p.Running)
	if len(stopped) != 1 || stopped[0].Name != "PC1" || len(failedItems) != 1 || failedItems[0].Name != "PC2" ||
		!strings.Contains(failedItems[0].Error, "it did not stop within 300ms") {
		t.Fatalf("a hanging stop: %+v %+v", stopped, failedItems)
	}
	if n, _ := l.fake.NodeByName(l.pid, "PC2"); n.Status != "started" {
		t.Fatalf("PC2 is %s", n.Status)
	}
	if back := StartNodes(t.Context(), l.env, stopped, nil); back[0].Err != "" {
		t.Fatalf("PC1 started again: %+v", back)
	}
}
