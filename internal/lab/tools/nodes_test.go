package tools

import (
	"math"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestGetTemplates(t *testing.T) {
	l := newLab(t)
	r := l.runMode(t, TeachingAssistant, "get_gns3_templates", nil)
	mustSucceed(t, r)
	if r.Total != 2 || r.Metadata["hidden_utility_templates"] != 6 {
		t.Fatalf("default list: %s", r.JSON())
	}
	if it := item(t, r, "VPCS"); it.ID != fakegns3.VPCSTemplateID || !strings.Contains(it.Result, "type vpcs") || !strings.Contains(it.Result, "nodes named PCN") {
		t.Errorf("VPCS: %+v", it)
	}
	r = l.run(t, "get_gns3_templates", `"{\"include_utility\": true}"`)
	mustSucceed(t, r)
	if r.Total != 8 {
		t.Fatalf("with utility: %d", r.Total)
	}
	mustFailWhole(t, l.run(t, "get_gns3_templates", map[string]any{"include_utility": "yes"}), `field "include_utility" must be true or false`)
	l.fake.FailNext(fakegns3.OpListTemplates, "", 500, "database is locked")
	mustFailWhole(t, l.run(t, "get_gns3_templates", nil), "database is locked")
}

func distance(a, b fakegns3.Node) float64 {
	return math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y))
}

func TestCreateNode(t *testing.T) {
	l := newLab(t)
	r := l.runMode(t, TeachingAssistant, "create_gns3_node", map[string]any{"nodes": []map[string]any{
		{"template_id": fakegns3.VPCSTemplateID, "x": 0, "y": 0},
		{"template_id": fakegns3.VPCSTemplateID, "x": 100, "y": 0},
		{"template_id": "router", "x": 0, "y": 500, "name": "R-core"},
	}})
	mustSucceed(t, r)
	nodes := l.fake.Nodes(l.pid)
	if len(nodes) != 3 || nodes[0].Name != "PC1" || nodes[1].Name != "PC2" || nodes[2].Name != "R-core" {
		t.Fatalf("nodes: %+v", nodes)
	}
	if nodes[1].X != 100 || nodes[1].Y != -250 || !strings.Contains(item(t, r, "PC2").Result, "placed at (100, -250) instead of (100, 0)") {
		t.Errorf("spacing: %+v / %s", nodes[1], item(t, r, "PC2").Result)
	}
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if d := distance(nodes[i], nodes[j]); d < MinNodeSpacing {
				t.Errorf("%s and %s are %.0f px apart", nodes[i].Name, nodes[j].Name, d)
			}
		}
	}
	pc1 := item(t, r, "PC1")
	if pc1.ID != nodes[0].ID || !strings.Contains(pc1.Result, "telnet 127.0.0.1:") || !strings.Contains(pc1.Result, "ports: Ethernet0 (e0)") {
		t.Errorf("PC1 item: %+v", pc1)
	}
	if got := l.progressFor("PC1"); strings.Join(got, ",") != "created" {
		t.Errorf("progress: %v", got)
	}
}

func TestCreateNodePartialFailure(t *testing.T) {
	l := newLab(t)
	l.fake.FailNext(fakegns3.OpCreateNode, fakegns3.RouterTemplateID, 409, "Cannot create node: image not found")
	r := l.run(t, "create_gns3_node", `{"nodes":[{"template_id":"VPCS","x":0,"y":0},{"template_id":"Router","x":500,"y":0},{"template_id":"no-such","x":1000,"y":0}]}`)
	if r.Success || r.Total != 3 || r.Successful != 1 || r.Failed != 2 {
		t.Fatalf("partial: %s", r.JSON())
	}
	if !strings.Contains(r.Data[1].Error, "image not found") || !strings.Contains(r.Data[2].Error, `no template "no-such"`) {
		t.Errorf("errors: %s", r.JSON())
	}
	if len(l.fake.Nodes(l.pid)) != 1 {
		t.Error("only one node should exist")
	}
}

func TestCreateNodeValidation(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "Taken"})
	cases := map[string]any{
		"nodes must list at least one node":          map[string]any{"nodes": []any{}},
		"nodes[0].x is required":                     map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "y": 0}}},
		"nodes[0].y must be a whole number":          map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 1, "y": 2.5}}},
		"nodes[0].template_id is required":           map[string]any{"nodes": []map[string]any{{"x": 1, "y": 2}}},
		"contains spaces":                            map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 1, "y": 2, "name": "my pc"}}},
		`are both named "A"`:                         map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 1, "y": 2, "name": "A"}, {"template_id": "VPCS", "x": 900, "y": 2, "name": "A"}}},
		`unknown field "z"`:                          map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 1, "y": 2, "z": 3}}},
		`field "nodes.x" must be a number`:           map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": "1", "y": 2}}},
		"at most 30 per call":                        map[string]any{"nodes": make([]map[string]any, 31)},
		"arguments are not valid JSON":               `{"nodes": [`,
		`field "nodes" must be an array, got object`: map[string]any{"nodes": map[string]any{"template_id": "VPCS"}},
	}
	for want, args := range cases {
		mustFailWhole(t, l.run(t, "create_gns3_node", args), want)
	}
	if n := l.fake.Count(fakegns3.OpCreateNode); n != 0 {
		t.Fatalf("validation errors reached GNS3 %d times", n)
	}
	r := l.run(t, "create_gns3_node", map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 1000, "y": 0, "name": "Taken"}}})
	if r.Success || !strings.Contains(r.Data[0].Error, "a node named Taken already exists") {
		t.Fatalf("taken name: %s", r.JSON())
	}
}

func TestCreateNodeRetryDoesNotDuplicate(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: "Router", X: 0, Y: 0})
	args := map[string]any{"nodes": []map[string]any{
		{"template_id": "VPCS", "x": 0, "y": 0},
		{"template_id": "VPCS", "x": 600, "y": 0},
		{"template_id": "VPCS", "x": 0, "y": 600, "name": "Client"},
	}}
	mustSucceed(t, l.run(t, "create_gns3_node", args))
	first := l.fake.Nodes(l.pid)
	if len(first) != 4 {
		t.Fatalf("first attempt: %+v", first)
	}
	l.env.Attempt = 2
	r := l.run(t, "create_gns3_node", args)
	mustSucceed(t, r)
	if got := l.fake.Nodes(l.pid); len(got) != 4 {
		t.Fatalf("attempt 2 duplicated nodes: %+v", got)
	}
	for i, it := range r.Data {
		if it.ID != first[i+1].ID || !strings.Contains(it.Result, "earlier attempt") {
			t.Errorf("attempt 2 item %d: %+v (want %s)", i, it, first[i+1].ID)
		}
	}
	// A further node asked for on attempt 2 is still created.
	args["nodes"] = append(args["nodes"].([]map[string]any), map[string]any{"template_id": "VPCS", "x": 0, "y": 1200})
	r = l.run(t, "create_gns3_node", args)
	mustSucceed(t, r)
	if got := l.fake.Nodes(l.pid); len(got) != 5 {
		t.Fatalf("new node on retry: %d nodes", len(got))
	}
}

func TestCreateNodeLostAnswerIsAdopted(t *testing.T) {
	l := newLab(t)
	l.fake.Inject(fakegns3.Failure{Op: fakegns3.OpCreateNode, Status: 502, Message: "Bad Gateway", Times: 1, AfterApply: true})
	r := l.run(t, "create_gns3_node", map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 0, "y": 0}}})
	mustSucceed(t, r)
	if n := l.fake.Nodes(l.pid); len(n) != 1 || r.Data[0].ID != n[0].ID {
		t.Fatalf("lost answer: %s", r.JSON())
	}
}

func TestCreateNodeNewerServerHonoursName(t *testing.T) {
	l := newLab(t, fakegns3.WithVersion("3.1.0a2"))
	mustSucceed(t, l.run(t, "create_gns3_node", map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 0, "y": 0, "name": "Alice"}}}))
	if n := l.fake.Nodes(l.pid); n[0].Name != "Alice" || l.fake.Count(fakegns3.OpUpdateNode) != 0 {
		t.Fatalf("3.1 create with name: %+v, %d updates", n, l.fake.Count(fakegns3.OpUpdateNode))
	}
}

func TestCreateNodeClosedProject(t *testing.T) {
	l := newLab(t)
	l.fake.SetProjectStatus(l.pid, "closed")
	mustFailWhole(t, l.run(t, "create_gns3_node", map[string]any{"nodes": []map[string]any{{"template_id": "VPCS", "x": 0, "y": 0}}}), "is closed")
}

func TestRenameNode(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 300, Status: "started"})
	c := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 600})
	r := l.runMode(t, TeachingAssistant, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{
		{"node_id": a.ID, "new_name": "Web"},
		{"node_id": "PC2", "new_name": "Db"},
		{"node_id": "pc3", "new_name": "Web2"},
	}})
	if r.Successful != 2 || r.Failed != 1 || !strings.Contains(item(t, r, "PC2").Error, "GNS3 only renames stopped nodes") {
		t.Fatalf("rename: %s", r.JSON())
	}
	if n, _ := l.fake.Node(a.ID); n.Name != "Web" {
		t.Errorf("a: %s", n.Name)
	}
	if n, _ := l.fake.Node(c.ID); n.Name != "Web2" {
		t.Errorf("c: %s", n.Name)
	}
	r = l.run(t, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{{"node_id": "Web2", "new_name": "Web"}}})
	if r.Success || !strings.Contains(r.Data[0].Error, "already used by another node") {
		t.Fatalf("taken: %s", r.JSON())
	}
	r = l.run(t, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{{"node_id": "Web", "new_name": "Web"}}})
	mustSucceed(t, r)
	l.fake.FailNext(fakegns3.OpUpdateNode, c.ID, 409, "Node is locked")
	r = l.run(t, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{{"node_id": c.ID, "new_name": "X1"}}})
	if r.Success || !strings.Contains(r.Data[0].Error, "Node is locked") {
		t.Fatalf("gns3 409: %s", r.JSON())
	}
	mustFailWhole(t, l.run(t, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{{"node_id": "Web", "new_name": "a b"}}}), "contains spaces")
	mustFailWhole(t, l.run(t, "update_gns3_node_name", map[string]any{"nodes": []map[string]string{{"new_name": "ab"}}}), "nodes[0].node_id is required")
	_ = b
}

func TestDeleteNode(t *testing.T) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 300})
	c := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 600, Locked: true})
	l.fake.AddLink(l.pid, a.ID, 0, 0, b.ID, 0, 0)
	r := l.run(t, "delete_gns3_node", map[string]any{"node_ids": []string{"PC1", c.ID, "ghost"}})
	if r.Successful != 1 || r.Failed != 2 {
		t.Fatalf("delete: %s", r.JSON())
	}
	if !strings.Contains(item(t, r, "PC1").Result, "its 1 link(s)") || !strings.Contains(item(t, r, "PC3").Error, "cannot be deleted because it is locked") ||
		!strings.Contains(item(t, r, "ghost").Error, `no node "ghost"`) {
		t.Errorf("items: %s", r.JSON())
	}
	if len(l.fake.Nodes(l.pid)) != 2 || len(l.fake.Links(l.pid)) != 0 {
		t.Fatal("state after delete")
	}
	l.env.Attempt = 2
	mustSucceed(t, l.run(t, "delete_gns3_node", map[string]any{"node_ids": []string{a.ID}}))
	mustFailWhole(t, l.run(t, "delete_gns3_node", map[string]any{"node_ids": []string{}}), "at least one node")
}
