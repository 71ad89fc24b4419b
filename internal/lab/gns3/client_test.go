package gns3_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func setup(t *testing.T, opts ...fakegns3.Option) (*fakegns3.Server, *gns3.Client, string) {
	t.Helper()
	fake := fakegns3.New(t, opts...)
	pid := fake.AddProject("lab")
	return fake, gns3.NewServer(fake.URL, 2*time.Second).WithToken(fakegns3.AdminToken), pid
}

func TestAuthAndUsers(t *testing.T) {
	fake := fakegns3.New(t)
	srv := gns3.NewServer(fake.URL, time.Second)
	ctx := context.Background()

	tok, err := srv.Authenticate(ctx, fakegns3.AdminUser, fakegns3.AdminPassword)
	if err != nil || tok.AccessToken != fakegns3.AdminToken || tok.TokenType != "bearer" {
		t.Fatalf("authenticate: %v %+v", err, tok)
	}
	if strings.Contains(tok.String(), tok.AccessToken) {
		t.Fatal("Token.String leaks the token")
	}
	_, err = srv.Authenticate(ctx, "admin", "wrong-secret")
	if !errors.Is(err, gns3.ErrUnauthorized) || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("wrong password: %v", err)
	}

	me, err := srv.WithToken(fakegns3.AdminToken).CurrentUser(ctx)
	if err != nil || !me.IsSuperadmin || me.Username != "admin" || me.Email != "" {
		t.Fatalf("me: %v %+v", err, me)
	}
	uid := fake.AddUser("student1", "student-token", false)
	fake.AddGroup("student1", "class-a")
	me, err = srv.WithToken("student-token").CurrentUser(ctx)
	if err != nil || me.IsSuperadmin || me.UserID != uid {
		t.Fatalf("regular me: %v %+v", err, me)
	}
	groups, err := srv.WithToken("student-token").UserGroups(ctx, uid)
	if err != nil || len(groups) != 1 || groups[0].Name != "class-a" {
		t.Fatalf("groups: %v %+v", err, groups)
	}
	_, err = srv.WithToken("").CurrentUser(ctx)
	if !errors.Is(err, gns3.ErrUnauthorized) || !strings.Contains(err.Error(), "Not authenticated") {
		t.Fatalf("no token: %v", err)
	}
	_, err = srv.WithToken("bad-token-xyz").CurrentUser(ctx)
	if !errors.Is(err, gns3.ErrUnauthorized) || strings.Contains(err.Error(), "bad-token-xyz") {
		t.Fatalf("bad token: %v", err)
	}
	v, err := srv.Version(ctx)
	if err != nil || v.Version != "3.0.6" {
		t.Fatalf("version: %v %+v", err, v)
	}
}

func TestProjects(t *testing.T) {
	fake, c, pid := setup(t)
	ctx := context.Background()
	closed := fake.AddProject("old", fakegns3.Closed())
	fake.AddNode(closed, fakegns3.NodeSpec{})

	ps, err := c.ListProjects(ctx)
	if err != nil || len(ps) != 2 {
		t.Fatalf("list: %v %v", err, ps)
	}
	p, err := c.GetProject(ctx, closed)
	if err != nil || p.Status != gns3.ProjectClosed || p.Name != "old" {
		t.Fatalf("get closed: %v %+v", err, p)
	}
	nodes, err := c.ListNodes(ctx, closed)
	if err != nil || len(nodes) != 1 || nodes[0].Status != "" || nodes[0].Ports != nil || nodes[0].ConsolePort() == 0 {
		t.Fatalf("closed nodes decode tolerantly: %v %+v", err, nodes)
	}
	p, err = c.OpenProject(ctx, closed)
	if err != nil || p.Status != gns3.ProjectOpened {
		t.Fatalf("open: %v %+v", err, p)
	}
	st, err := c.ProjectStats(ctx, closed)
	if err != nil || st.Nodes != 1 {
		t.Fatalf("stats: %v %+v", err, st)
	}

	_, err = c.GetProject(ctx, "00000000-0000-0000-0000-000000000000")
	if !errors.Is(err, gns3.ErrNotFound) || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("unknown: %v", err)
	}
	_, err = c.GetProject(ctx, "not-a-uuid")
	var ae *gns3.APIError
	if !errors.Is(err, gns3.ErrValidation) || !errors.As(err, &ae) || !strings.HasPrefix(ae.Message, "path.project_id: Input should be a valid UUID") {
		t.Fatalf("bad uuid: %v", err)
	}
	fake.AddUser("bob", "bob-token", false)
	bob := c.Server().WithToken("bob-token")
	if ps, err := bob.ListProjects(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("bob list: %v %v", err, ps)
	}
	_, err = bob.GetProject(ctx, pid)
	if !errors.Is(err, gns3.ErrForbidden) || !strings.Contains(err.Error(), "Project.Audit") {
		t.Fatalf("bob get: %v", err)
	}
}

func TestTemplatesAndNodes(t *testing.T) {
	fake, c, pid := setup(t)
	ctx := context.Background()
	ts, err := c.ListTemplates(ctx)
	if err != nil || len(ts) < 8 {
		t.Fatalf("templates: %v %d", err, len(ts))
	}
	var vpcs gns3.Template
	for _, tpl := range ts {
		if tpl.TemplateType == "vpcs" {
			vpcs = tpl
		}
	}
	if vpcs.TemplateID != fakegns3.VPCSTemplateID || !vpcs.Builtin || vpcs.DefaultNameFormat != "PC{0}" {
		t.Fatalf("vpcs template: %+v", vpcs)
	}

	n1, err := c.CreateNodeFromTemplate(ctx, pid, vpcs.TemplateID, -100, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	n2, err := c.CreateNodeFromTemplate(ctx, pid, vpcs.TemplateID, 150, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if n1.Name != "PC1" || n2.Name != "PC2" || n1.NodeType != "vpcs" || n1.Status != gns3.NodeStopped ||
		n1.ConsoleType != "telnet" || n1.ConsolePort() == 0 || n1.ConsolePort() == n2.ConsolePort() ||
		n1.TemplateID != vpcs.TemplateID || n1.X != -100 {
		t.Fatalf("created: %+v %+v", n1, n2)
	}
	if p, ok := n1.FindPort("E0"); !ok || p.Name != "Ethernet0" {
		t.Fatalf("port by short name: %+v", p)
	}
	_, err = c.CreateNodeFromTemplate(ctx, pid, "00000000-0000-0000-0000-000000000000", 0, 0, "")
	if !errors.Is(err, gns3.ErrNotFound) {
		t.Fatalf("unknown template: %v", err)
	}

	name, x := "client-a", 300
	upd, err := c.UpdateNode(ctx, pid, n1.NodeID, gns3.NodeUpdate{Name: &name, X: &x})
	if err != nil || upd.Name != "client-a" || upd.X != 300 || upd.Y != 0 {
		t.Fatalf("update: %v %+v", err, upd)
	}

	if err := c.StartNode(ctx, pid, n1.NodeID); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetNode(ctx, pid, n1.NodeID)
	if err != nil || got.Status != gns3.NodeStarted {
		t.Fatalf("after start: %v %+v", err, got)
	}
	other := "renamed"
	_, err = c.UpdateNode(ctx, pid, n1.NodeID, gns3.NodeUpdate{Name: &other})
	if !errors.Is(err, gns3.ErrConflict) || !strings.Contains(err.Error(), "already powered on") {
		t.Fatalf("rename started: %v", err)
	}
	for _, step := range []struct {
		op   func(context.Context, string, string) error
		want string
	}{{c.SuspendNode, gns3.NodeStarted}, {c.StopNode, gns3.NodeStopped}, {c.ReloadNode, gns3.NodeStarted}} {
		if err := step.op(ctx, pid, n1.NodeID); err != nil {
			t.Fatal(err)
		}
		if n, _ := fake.Node(n1.NodeID); n.Status != step.want {
			t.Fatalf("status %s, want %s", n.Status, step.want)
		}
	}
	if err := c.StopAllNodes(ctx, pid); err != nil {
		t.Fatal(err)
	}
	if err := c.StartAllNodes(ctx, pid); err != nil {
		t.Fatal(err)
	}
	for _, n := range fake.Nodes(pid) {
		if n.Status != gns3.NodeStarted {
			t.Fatalf("bulk start left %s %s", n.Name, n.Status)
		}
	}
	if err := c.SuspendAllNodes(ctx, pid); err != nil {
		t.Fatal(err)
	}
	if err := c.ReloadAllNodes(ctx, pid); err != nil {
		t.Fatal(err)
	}

	if err := c.DeleteNode(ctx, pid, n2.NodeID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetNode(ctx, pid, n2.NodeID)
	if !errors.Is(err, gns3.ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
}

func TestLinks(t *testing.T) {
	fake, c, pid := setup(t)
	ctx := context.Background()
	a := fake.AddNode(pid, fakegns3.NodeSpec{})
	b := fake.AddNode(pid, fakegns3.NodeSpec{X: 250})
	r := fake.AddNode(pid, fakegns3.NodeSpec{Template: "Router", X: 500})

	l, err := c.CreateLink(ctx, pid, gns3.LinkCreate{Nodes: []gns3.LinkEnd{
		{NodeID: a.ID, AdapterNumber: 0, PortNumber: 0, Label: &gns3.Label{Text: "e0"}},
		{NodeID: r.ID, AdapterNumber: 1, PortNumber: 0},
	}})
	if err != nil || l.LinkID == "" || len(l.Nodes) != 2 || l.Nodes[0].Label.Text != "e0" || l.Nodes[1].Label.Text != "1/0" {
		t.Fatalf("create: %v %+v", err, l)
	}
	_, err = c.CreateLink(ctx, pid, gns3.LinkCreate{Nodes: []gns3.LinkEnd{{NodeID: b.ID}, {NodeID: a.ID}}})
	if !errors.Is(err, gns3.ErrConflict) || !strings.Contains(err.Error(), "Port is already used") {
		t.Fatalf("in use: %v", err)
	}
	_, err = c.CreateLink(ctx, pid, gns3.LinkCreate{Nodes: []gns3.LinkEnd{{NodeID: b.ID, AdapterNumber: 3}, {NodeID: r.ID}}})
	if !errors.Is(err, gns3.ErrNotFound) || !strings.Contains(err.Error(), "Port 3/0 for PC2 not found") {
		t.Fatalf("bad port: %v", err)
	}
	_, err = c.CreateLink(ctx, pid, gns3.LinkCreate{Nodes: []gns3.LinkEnd{{NodeID: b.ID}}})
	if !errors.Is(err, gns3.ErrValidation) || !strings.Contains(err.Error(), "body.nodes: List should have at least 2 items") {
		t.Fatalf("one end: %v", err)
	}

	ls, err := c.ListLinks(ctx, pid)
	if err != nil || len(ls) != 1 {
		t.Fatalf("list: %v %+v", err, ls)
	}
	got, err := c.GetLink(ctx, pid, l.LinkID)
	if err != nil || got.LinkID != l.LinkID || got.LinkType != "ethernet" {
		t.Fatalf("get: %v %+v", err, got)
	}
	nl, err := c.NodeLinks(ctx, pid, r.ID)
	if err != nil || len(nl) != 1 {
		t.Fatalf("node links: %v %+v", err, nl)
	}
	if nl, _ := c.NodeLinks(ctx, pid, b.ID); len(nl) != 0 {
		t.Fatalf("b has no links: %+v", nl)
	}
	if err := c.DeleteLink(ctx, pid, l.LinkID); err != nil {
		t.Fatal(err)
	}
	if len(fake.Links(pid)) != 0 {
		t.Fatal("link not deleted")
	}
	if err := c.DeleteLink(ctx, pid, l.LinkID); !errors.Is(err, gns3.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	fake, _, pid := setup(t)
	fake.SetLatency(fakegns3.OpListNodes, time.Minute)
	c := gns3.NewServer(fake.URL, 100*time.Millisecond).WithToken(fakegns3.AdminToken)
	start := time.Now()
	_, err := c.ListNodes(context.Background(), pid)
	if !errors.Is(err, gns3.ErrUnreachable) || !gns3.Retryable(err) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("slow: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("timeout not honoured")
	}
}

func TestInjectedServerError(t *testing.T) {
	fake, c, pid := setup(t)
	n := fake.AddNode(pid, fakegns3.NodeSpec{})
	fake.FailNext(fakegns3.OpStartNode, n.ID, 500, "uBridge is not available")
	err := c.StartNode(context.Background(), pid, n.ID)
	var ae *gns3.APIError
	if !errors.As(err, &ae) || ae.Status != 500 || ae.Message != "uBridge is not available" || !gns3.Retryable(err) {
		t.Fatalf("injected: %v", err)
	}
	if err := c.StartNode(context.Background(), pid, n.ID); err != nil {
		t.Fatalf("second start: %v", err)
	}
}
