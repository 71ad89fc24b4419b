package devices_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

func openVPCS(t testing.TB, n *vpcslab.Node, p *devices.Profile) *devices.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := devices.Open(ctx, n.Addr(), p, devices.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", n.Name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestVPCSSmoke(t *testing.T) {
	lab := vpcslab.Start(t, 2)
	s := openVPCS(t, lab.Nodes[0], nil)
	if s.Profile().Name != "vpcs" {
		t.Fatalf("detected %s", s.Profile().Name)
	}
	ctx := context.Background()
	r, err := s.Run(ctx, "show ip")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if !strings.HasPrefix(r.Output, "NAME") {
		t.Fatalf("output %q", r.Output)
	}
}
