package realgns3

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// EnvFRRTemplate names the FRR template ../shared/gns3-lab/frr/setup-frr.sh creates on the
// server (FRRouting 10.3 under QEMU). Tests of FRR routers run only where it is set: under TCG a
// router takes 15 s to boot, which CI's budget keeps to VPCS.
const EnvFRRTemplate = "GNS3COPILOT_TEST_FRR_TEMPLATE"

// RequireFRR returns the FRR template's id, or skips the test.
func RequireFRR(t testing.TB) string {
	t.Helper()
	id := os.Getenv(EnvFRRTemplate)
	if id == "" {
		t.Skipf("skipping: no FRR template named (%s; ../shared/gns3-lab/frr/setup-frr.sh creates one)", EnvFRRTemplate)
	}
	return id
}

// AddFromTemplate creates n nodes from a template. GNS3 names them itself from the template's
// name format.
func (p *Project) AddFromTemplate(t testing.TB, templateID string, n int) []*gns3.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := make([]*gns3.Node, 0, n)
	for i := range n {
		node, err := p.s.Client.CreateNodeFromTemplate(ctx, p.ID, templateID, -200+150*i, 100, "")
		if err != nil {
			t.Fatalf("creating node %d from template %s: %v", i+1, templateID, err)
		}
		out = append(out, node)
	}
	return out
}

// LinkPorts joins adapter aa (port 0) of a to adapter ab (port 0) of b: a QEMU node's adapters
// have one port each.
func (p *Project) LinkPorts(t testing.TB, a *gns3.Node, aa int, b *gns3.Node, ab int) *gns3.Link {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := p.s.Client.CreateLink(ctx, p.ID, gns3.LinkCreate{Nodes: []gns3.LinkEnd{
		{NodeID: a.NodeID, AdapterNumber: aa}, {NodeID: b.NodeID, AdapterNumber: ab}}})
	if err != nil {
		t.Fatalf("linking %s and %s: %v", a.Name, b.Name, err)
	}
	return l
}
