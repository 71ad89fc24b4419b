package tools

import (
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestCreateLinks(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 300})
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", Y: 300})
	r := l.runMode(t, TeachingAssistant, "create_gns3_link", map[string]any{"links": []map[string]string{
		{"node_a": "PC1", "port_a": "e0", "node_b": "R1", "port_b": "Gi0/0"},
		{"node_a": b.ID, "port_a": "Ethernet0", "node_b": r1.ID, "port_b": "gigabitethernet0/1"},
	}})
	mustSucceed(t, r)
	links := l.fake.Links(l.pid)
	if len(links) != 2 {
		t.Fatalf("links: %+v", links)
	}
	if e := links[0].Ends; e[0].NodeID != a.ID || e[1].NodeID != r1.ID || e[1].Adapter != 0 || e[0].Label != "e0" || e[1].Label != "Gi0/0" {
		t.Errorf("first link: %+v", links[0])
	}
	if e := links[1].Ends; e[1].Adapter != 1 {
		t.Errorf("second link: %+v", links[1])
	}
	if it := item(t, r, "PC1 Ethernet0 <-> R1 GigabitEthernet0/0"); it.ID != links[0].ID {
		t.Errorf("item: %+v", it)
	}

	// The same link again is reported, not duplicated; a busy port fails
	// with the free ports; an unknown port lists the node's ports.
	r = l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{
		{"node_a": "R1", "port_a": "Gi0/0", "node_b": "PC1", "port_b": "Ethernet0"},
		{"node_a": "R1", "port_a": "Gi0/0", "node_b": "PC2", "port_b": "e0"},
		{"node_a": "R1", "port_a": "Gi0/9", "node_b": "PC2", "port_b": "e0"},
	}})
	if r.Successful != 1 || r.Failed != 2 {
		t.Fatalf("second call: %s", r.JSON())
	}
	if !strings.Contains(r.Data[0].Result, "already linked") || r.Data[0].ID != links[0].ID {
		t.Errorf("existing: %+v", r.Data[0])
	}
	if !strings.Contains(r.Data[1].Error, "port GigabitEthernet0/0 of R1 is already linked to PC1 Ethernet0") ||
		!strings.Contains(r.Data[1].Error, "free ports of R1: GigabitEthernet0/2, GigabitEthernet0/3") {
		t.Errorf("busy: %+v", r.Data[1])
	}
	if !strings.Contains(r.Data[2].Error, `node R1 has no port "Gi0/9" (ports: GigabitEthernet0/0 (Gi0/0)`) {
		t.Errorf("unknown port: %+v", r.Data[2])
	}
	if len(l.fake.Links(l.pid)) != 2 {
		t.Fatal("no link may be added")
	}
}

func TestCreateLinkPartialAndServerErrors(t *testing.T) {
	l := newLab(t)
	for i := 0; i < 4; i++ {
		l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: i * 300})
	}
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Ethernet switch", Y: 300})
	l.fake.FailNext(fakegns3.OpCreateLink, "", 409, "Port is already used")
	r := l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{
		{"node_a": "PC1", "port_a": "e0", "node_b": "Switch1", "port_b": "e0"},
		{"node_a": "PC2", "port_a": "e0", "node_b": "Switch1", "port_b": "e1"},
		{"node_a": "PC3", "port_a": "e0", "node_b": "Switch1", "port_b": "e2"},
	}})
	if r.Successful != 2 || r.Failed != 1 || !strings.Contains(r.Data[0].Error, "Port is already used") {
		t.Fatalf("partial: %s", r.JSON())
	}
	// An answer lost after GNS3 created the link is found, not retried.
	l.fake.Inject(fakegns3.Failure{Op: fakegns3.OpCreateLink, Status: 503, Message: "unavailable", Times: 1, AfterApply: true})
	r = l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "PC4", "port_a": "e0", "node_b": "Switch1", "port_b": "e3"}}})
	mustSucceed(t, r)
	if len(l.fake.Links(l.pid)) != 3 {
		t.Fatalf("links: %d", len(l.fake.Links(l.pid)))
	}
}

func TestCreateLinkValidation(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	mustFailWhole(t, l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "PC1", "port_a": "e0", "node_b": "PC1"}}}), "links[0].port_b is required")
	mustFailWhole(t, l.run(t, "create_gns3_link", map[string]any{"links": []any{}}), "links must list 1 to 50")
	mustFailWhole(t, l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{{"node_id1": "x"}}}), `unknown field "node_id1"`)
	r := l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "PC1", "port_a": "e0", "node_b": "PC1", "port_b": "Ethernet0"}}})
	if r.Success || !strings.Contains(r.Data[0].Error, "cannot be linked to itself") {
		t.Fatalf("self link: %s", r.JSON())
	}
	if l.fake.Count(fakegns3.OpCreateLink) != 0 {
		t.Fatal("invalid links reached GNS3")
	}
	l.fake.SetProjectStatus(l.pid, "closed")
	mustFailWhole(t, l.run(t, "create_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "PC1", "port_a": "e0", "node_b": "PC2", "port_b": "e0"}}}), "ask the user to open it")
}

func TestDeleteLinks(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", X: 300})
	r2 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", X: 600})
	l1 := l.fake.AddLink(l.pid, a.ID, 0, 0, r1.ID, 0, 0)
	l.fake.AddLink(l.pid, r1.ID, 1, 0, r2.ID, 0, 0)
	l.fake.AddLink(l.pid, r1.ID, 2, 0, r2.ID, 1, 0)

	r := l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{
		{"link_id": l1.ID},
		{"node_a": "R1", "node_b": "R2"},
		{"node_a": "R2", "port_a": "Gi0/1"},
	}})
	if r.Successful != 2 || r.Failed != 1 || !strings.Contains(r.Data[1].Error, "2 links match R1 <-> R2; say which port") {
		t.Fatalf("delete: %s", r.JSON())
	}
	if left := l.fake.Links(l.pid); len(left) != 1 {
		t.Fatalf("left: %+v", left)
	}
	r = l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "R1", "node_b": "R2"}}})
	mustSucceed(t, r)
	if len(l.fake.Links(l.pid)) != 0 {
		t.Fatal("not deleted")
	}
	r = l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": l1.ID}}})
	if r.Success || !strings.Contains(r.Data[0].Error, "no link "+l1.ID) {
		t.Fatalf("gone on attempt 1: %s", r.JSON())
	}
	l.env.Attempt = 2
	mustSucceed(t, l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": l1.ID}}}))
	mustFailWhole(t, l.run(t, "delete_gns3_link", map[string]any{"links": []map[string]string{{"port_a": "e0"}}}), "must give link_id, or node_a with port_a")
	mustFailWhole(t, l.runMode(t, TeachingAssistant, "delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": l1.ID}}}), "not available in teaching_assistant mode")
}

// TestBuildAndStartLab is the tools-level version of the issue's
// end-to-end turn: create two VPCS nodes, link them, start them, and the
// fake server holds exactly that.
func TestBuildAndStartLab(t *testing.T) {
	l := newLab(t)
	mustSucceed(t, l.run(t, "create_gns3_node", `{"nodes":[{"template_id":"`+fakegns3.VPCSTemplateID+`","x":-150,"y":0},{"template_id":"`+fakegns3.VPCSTemplateID+`","x":150,"y":0}]}`))
	mustSucceed(t, l.run(t, "create_gns3_link", `{"links":[{"node_a":"PC1","port_a":"Ethernet0","node_b":"PC2","port_b":"Ethernet0"}]}`))
	mustSucceed(t, l.run(t, "start_gns3_node", `{"node_ids":["PC1","PC2"]}`))
	nodes, links := l.fake.Nodes(l.pid), l.fake.Links(l.pid)
	if len(nodes) != 2 || len(links) != 1 {
		t.Fatalf("state: %+v %+v", nodes, links)
	}
	for _, n := range nodes {
		if n.Status != "started" || n.NodeType != "vpcs" {
			t.Errorf("%+v", n)
		}
	}
	if e := links[0].Ends; e[0].NodeID != nodes[0].ID || e[1].NodeID != nodes[1].ID {
		t.Errorf("link: %+v", links[0])
	}
}
