package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func seedLab(t *testing.T, l *lab) (pc1, pc2, r1 fakegns3.Node) {
	t.Helper()
	pc1 = l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: -250})
	pc2 = l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 250, ConsoleHost: "0.0.0.0"})
	r1 = l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", Y: 250, Status: "started"})
	l.fake.AddLink(l.pid, pc1.ID, 0, 0, r1.ID, 0, 0)
	return
}

func TestGetTopology(t *testing.T) {
	l := newLab(t)
	pc1, pc2, r1 := seedLab(t, l)
	for _, args := range []any{map[string]any{}, "", `"{}"`, `{"project_id":"` + l.pid + `"}`} {
		r := l.run(t, "get_gns3_topology", args)
		mustSucceed(t, r)
		if r.Total != 4 || r.Metadata["project_name"] != "lab" || r.Metadata["nodes"] != 3 {
			t.Fatalf("topology: %s", r.JSON())
		}
	}
	r := l.runMode(t, TeachingAssistant, "get_gns3_topology", nil)
	mustSucceed(t, r)
	host := l.env.GNS3.Server().Host()
	if got := item(t, r, "PC1"); got.ID != pc1.ID || !strings.Contains(got.Result, "vpcs, stopped, telnet 127.0.0.1:") ||
		!strings.Contains(got.Result, "connected: Ethernet0→R1 GigabitEthernet0/0") {
		t.Errorf("PC1: %+v", got)
	}
	if got := item(t, r, "PC2"); !strings.Contains(got.Result, "telnet "+host+":") || !strings.Contains(got.Result, "free ports: Ethernet0") {
		t.Errorf("PC2 console 0.0.0.0 must become the GNS3 host: %+v", got)
	}
	if got := item(t, r, "R1"); !strings.Contains(got.Result, "qemu, started") || !strings.Contains(got.Result, "GigabitEthernet0/3 (Gi0/3)") {
		t.Errorf("R1: %+v", got)
	}
	link := item(t, r, "PC1 Ethernet0 <-> R1 GigabitEthernet0/0")
	if link.ID != l.fake.Links(l.pid)[0].ID {
		t.Errorf("link item: %+v", link)
	}
	_ = pc2
	_ = r1
}

func TestGetTopologyErrors(t *testing.T) {
	l := newLab(t)
	l.env.ProjectID = "00000000-0000-0000-0000-000000000000"
	r := l.run(t, "get_gns3_topology", nil)
	mustFailWhole(t, r, "doesn't exist")
	if r.Metadata["retryable"] != nil {
		t.Errorf("a 404 is not retryable: %v", r.Metadata)
	}

	l = newLab(t)
	l.fake.SetLatency(fakegns3.OpListLinks, time.Minute)
	l.env.GNS3 = gns3.NewServer(l.fake.URL, 50*time.Millisecond).WithToken(fakegns3.AdminToken)
	r = l.run(t, "get_gns3_topology", nil)
	mustFailWhole(t, r, "timed out")
	if r.Metadata["retryable"] != true {
		t.Errorf("a timeout is retryable: %v", r.Metadata)
	}

	l = newLab(t)
	l.fake.AddUser("eve", "eve-token", false)
	l.env.GNS3 = l.env.GNS3.Server().WithToken("eve-token")
	mustFailWhole(t, l.run(t, "get_gns3_topology", nil), "not allowed to do this in GNS3")
}

func TestProjectContext(t *testing.T) {
	l := newLab(t)
	ctxText, err := ProjectContext(context.Background(), l.env.GNS3, l.pid)
	if err != nil || !strings.Contains(ctxText, "Nodes (0):\n- none yet") {
		t.Fatalf("empty: %v\n%s", err, ctxText)
	}
	pc1, _, _ := seedLab(t, l)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Ethernet switch", X: 500})
	ctxText, err = ProjectContext(context.Background(), l.env.GNS3, l.pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Project: lab (project_id " + l.pid + ", opened)",
		"Nodes (4):",
		"- PC1: vpcs, stopped, telnet 127.0.0.1:",
		"connected: Ethernet0→R1 GigabitEthernet0/0; node_id " + pc1.ID,
		"- Switch1: ethernet_switch, started, no console; free ports: Ethernet0, Ethernet1, Ethernet2, Ethernet3, Ethernet4, Ethernet5 (+2 more)",
		"Links (1):\n- PC1 Ethernet0 <-> R1 GigabitEthernet0/0",
	} {
		if !strings.Contains(ctxText, want) {
			t.Errorf("context lacks %q:\n%s", want, ctxText)
		}
	}
	l.fake.SetProjectStatus(l.pid, "closed")
	ctxText, _ = ProjectContext(context.Background(), l.env.GNS3, l.pid)
	if !strings.Contains(ctxText, "closed") || !strings.Contains(ctxText, "PC1: vpcs, unknown") {
		t.Errorf("closed:\n%s", ctxText)
	}
}

func BenchmarkProjectContext50(b *testing.B) {
	fake := fakegns3.New(b)
	pid := fake.AddProject("big")
	var prev string
	for i := 0; i < 50; i++ {
		n := fake.AddNode(pid, fakegns3.NodeSpec{X: i * 250})
		if prev != "" && i%2 == 1 {
			fake.AddLink(pid, prev, 0, 0, n.ID, 0, 0)
		}
		prev = n.ID
	}
	c := newLabClient(fake)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ProjectContext(context.Background(), c, pid); err != nil {
			b.Fatal(err)
		}
	}
}
