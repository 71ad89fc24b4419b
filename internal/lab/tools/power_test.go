package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestStartNodes(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 300})
	c := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 600})
	l.fake.SetStartPolls(b.ID, 3)
	l.fake.FailNext(fakegns3.OpStartNode, c.ID, 500, "uBridge is not available")

	r := l.runMode(t, TeachingAssistant, "start_gns3_node", map[string]any{"node_ids": []string{"PC1", b.ID, "pc3"}})
	if r.Total != 3 || r.Successful != 2 || r.Failed != 1 {
		t.Fatalf("start: %s", r.JSON())
	}
	if it := item(t, r, "PC2"); !strings.Contains(it.Result, "PC2 started; console telnet 127.0.0.1:") {
		t.Errorf("PC2: %+v", it)
	}
	if it := item(t, r, "PC3"); !strings.Contains(it.Error, "start failed: ") || !strings.Contains(it.Error, "uBridge is not available") {
		t.Errorf("PC3: %+v", it)
	}
	for _, n := range []fakegns3.Node{a, b} {
		if got, _ := l.fake.Node(n.ID); got.Status != "started" {
			t.Errorf("%s is %s", n.Name, got.Status)
		}
	}
	if got := l.progressFor("PC2"); got[0] != "starting" || got[len(got)-1] != "started" {
		t.Errorf("PC2 progress: %v", got)
	}
	if got := l.progressFor("PC3"); strings.Join(got, ",") != "starting,failed" {
		t.Errorf("PC3 progress: %v", got)
	}
	// PC2 needed three reads reporting stopped: the tool polled rather than trusting the 204.
	if n := l.fake.Count(fakegns3.OpListNodes); n < 4 {
		t.Errorf("only %d node list reads", n)
	}

	// Started nodes and built-in switches are not started again.
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Ethernet switch", X: 900})
	l.fake.ResetCounts()
	r = l.run(t, "start_gns3_node", `{"node_ids":["PC1","Switch1"]}`)
	mustSucceed(t, r)
	if l.fake.Count(fakegns3.OpStartNode) != 0 || !strings.Contains(item(t, r, "PC1").Result, "already started") {
		t.Errorf("already started: %s", r.JSON())
	}
}

func TestStartValidation(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	mustFailWhole(t, l.run(t, "start_gns3_node", map[string]any{}), "node_ids must list at least one node")
	mustFailWhole(t, l.run(t, "start_gns3_node", map[string]any{"node_ids": "PC1"}), `field "node_ids" must be an array`)
	mustFailWhole(t, l.run(t, "start_gns3_node", map[string]any{"node_ids": []string{"PC1"}, "timeout_seconds": 1}), "timeout_seconds must be a whole number between 5 and 900")
	mustFailWhole(t, l.run(t, "start_gns3_node", map[string]any{"node_ids": []string{" "}}), "node_ids[0] is empty")
	if l.fake.Count(fakegns3.OpStartNode) != 0 {
		t.Fatal("validation errors reached GNS3")
	}
	r := l.run(t, "start_gns3_node", map[string]any{"node_ids": []string{"PC9"}})
	if r.Success || !strings.Contains(r.Data[0].Error, `no node "PC9" in this project (nodes: PC1)`) {
		t.Fatalf("unknown node: %s", r.JSON())
	}
}

func TestStartWaitEnds(t *testing.T) {
	l := newLab(t)
	n := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	st := fastStart()

	// The deadline passes while the node still reports stopped.
	l.fake.SetStartPolls(n.ID, 1_000_000)
	mustNoErr(t, l.env.GNS3.StartNode(context.Background(), l.pid, n.ID))
	out := st.await(context.Background(), l.env, []pending{{id: n.ID, name: n.Name, last: "stopped"}}, 30*time.Millisecond)
	if len(out) != 1 || out[0].Status != StatusFailed || !strings.Contains(out[0].Error, "did not report started within 30ms (last status: stopped)") {
		t.Fatalf("deadline: %+v", out)
	}
	// The caller cancels (turn aborted): the wait ends promptly.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	out = st.await(ctx, l.env, []pending{{id: n.ID, name: n.Name, last: "stopped"}}, time.Hour)
	if len(out) != 1 || !strings.Contains(out[0].Error, "cancelled while waiting") {
		t.Fatalf("cancel: %+v", out)
	}
	if got := l.progressFor(n.Name); len(got) == 0 || got[0] != "waiting" && got[0] != "failed" {
		t.Errorf("progress while waiting: %v", got)
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStopSuspendReload(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Status: "started"})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 300, Status: "started"})
	c := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 600, Status: "started"})
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", Y: 300, Status: "started"})

	l.fake.FailNext(fakegns3.OpStopNode, c.ID, 409, "Node is busy")
	r := l.run(t, "stop_gns3_node", map[string]any{"node_ids": []string{a.ID, "PC2", "PC3"}})
	if r.Successful != 2 || r.Failed != 1 || !strings.Contains(item(t, r, "PC3").Error, "Node is busy") ||
		item(t, r, "PC1").Result != "PC1 stopped (status stopped)" {
		t.Fatalf("stop: %s", r.JSON())
	}
	if got, _ := l.fake.Node(b.ID); got.Status != "stopped" {
		t.Errorf("PC2 is %s", got.Status)
	}
	r = l.run(t, "stop_gns3_node", map[string]any{"node_ids": []string{"PC1"}})
	if !r.Success || !strings.Contains(r.Data[0].Result, "already stopped") {
		t.Fatalf("stop again: %s", r.JSON())
	}

	// Suspend: a router suspends, VPCS answers 204 but keeps running, a stopped node cannot.
	r = l.run(t, "suspend_gns3_node", map[string]any{"node_ids": []string{"R1", "PC3", "PC1"}})
	if r.Successful != 1 || r.Failed != 2 {
		t.Fatalf("suspend: %s", r.JSON())
	}
	if it := item(t, r, "PC3"); !strings.Contains(it.Error, "reports status started (vpcs nodes do not support suspend)") {
		t.Errorf("vpcs suspend: %+v", it)
	}
	if it := item(t, r, "PC1"); !strings.Contains(it.Error, "PC1 is stopped; only a started node can be suspended") {
		t.Errorf("stopped suspend: %+v", it)
	}
	if got, _ := l.fake.Node(r1.ID); got.Status != "suspended" {
		t.Errorf("R1 is %s", got.Status)
	}

	r = l.run(t, "reload_gns3_node", `"{\"node_ids\": [\"R1\", \"PC1\"]}"`)
	mustSucceed(t, r)
	for _, id := range []string{r1.ID, a.ID} {
		if got, _ := l.fake.Node(id); got.Status != "started" {
			t.Errorf("%s is %s after reload", got.Name, got.Status)
		}
	}
	sw := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Ethernet switch", X: 900})
	r = l.run(t, "stop_gns3_node", map[string]any{"node_ids": []string{sw.Name}})
	if r.Success || !strings.Contains(r.Data[0].Error, "always runs") {
		t.Fatalf("stop switch: %s", r.JSON())
	}
}
