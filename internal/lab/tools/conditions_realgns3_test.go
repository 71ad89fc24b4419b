package tools

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Link conditions are applied by uBridge, which this machine and CI do not have: everywhere
// else the fake GNS3 stands in (conditions_test.go), and nothing here fakes a measurement. This
// test measures them on a real GNS3 when one is named:
//
//	GNS3_COPILOT_REAL_GNS3_URL       e.g. http://192.168.1.20:3080
//	GNS3_COPILOT_REAL_GNS3_USER      and _PASSWORD: an account that may change the project
//	GNS3_COPILOT_REAL_GNS3_PROJECT   an opened project with two started VPCS, PC1 and PC2,
//	                                 joined by one link (their addresses are set by the test)
//
// Without them it skips, in CI too.
func TestLinkDelayMeasuredOnRealGNS3(t *testing.T) {
	url, project := os.Getenv("GNS3_COPILOT_REAL_GNS3_URL"), os.Getenv("GNS3_COPILOT_REAL_GNS3_PROJECT")
	if url == "" || project == "" {
		t.Skip("no real GNS3 named (GNS3_COPILOT_REAL_GNS3_URL, _USER, _PASSWORD, _PROJECT): link conditions need uBridge, " +
			"which only a real GNS3 has; the fake GNS3 covers the tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := gns3.NewServer(url, 10*time.Second)
	tok, err := srv.Authenticate(ctx, os.Getenv("GNS3_COPILOT_REAL_GNS3_USER"), os.Getenv("GNS3_COPILOT_REAL_GNS3_PASSWORD"))
	if err != nil {
		t.Fatalf("signing in to %s: %v", url, err)
	}
	env := Env{ProjectID: project, GNS3: srv.WithToken(tok.AccessToken), Attempt: 1}
	reg := NewRegistry(LabTools()...)
	topo, err := readTopology(ctx, env.GNS3, project)
	if err != nil {
		t.Fatal(err)
	}
	pc1, pc2 := mustVPCS(t, topo, "PC1"), mustVPCS(t, topo, "PC2")
	run := func(name, args string) {
		t.Helper()
		if r := reg.Execute(ctx, env, LabAutomation, name, args); !r.Success {
			t.Fatalf("%s: %s", name, r.JSON())
		}
	}
	t.Cleanup(func() {
		reg.Execute(context.Background(), env, LabAutomation, ClearLinkConditionsTool, `{"links": [{"node_a": "PC1", "node_b": "PC2"}]}`)
	})
	console := func(n *gns3.Node, cmd string) string {
		t.Helper()
		p, _ := devices.ProfileByName("vpcs")
		s, err := devices.Open(ctx, n.ConsoleAddr(srv.Host()), p, devices.Options{})
		if err != nil {
			t.Fatalf("%s's console: %v", n.Name, err)
		}
		defer s.Close()
		out, err := s.Run(ctx, cmd)
		if err != nil {
			t.Fatalf("%s> %s: %v", n.Name, cmd, err)
		}
		return out.Output
	}
	console(pc1, "ip 10.199.0.1/24")
	console(pc2, "ip 10.199.0.2/24")
	rtts := func() []float64 {
		t.Helper()
		var out []float64
		for _, m := range regexp.MustCompile(`time=([0-9.]+) ms`).FindAllStringSubmatch(console(pc1, "ping 10.199.0.2 -c 4"), -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			out = append(out, v)
		}
		if len(out) == 0 {
			t.Fatal("PC1 got no ping reply from PC2")
		}
		return out
	}

	run(SetLinkConditionsTool, `{"links": [{"node_a": "PC1", "node_b": "PC2", "delay_ms": 200}]}`)
	for _, rtt := range rtts() {
		if rtt < 180 {
			t.Errorf("with 200 ms delay on the link, a ping took %.1f ms", rtt)
		}
	}
	run(ClearLinkConditionsTool, `{"links": [{"node_a": "PC1", "node_b": "PC2"}]}`)
	for _, rtt := range rtts() {
		if rtt >= 10 {
			t.Errorf("after clearing the delay, a ping took %.1f ms", rtt)
		}
	}
}

func mustVPCS(t *testing.T, topo *topology, name string) *gns3.Node {
	t.Helper()
	n, err := topo.findNode(name)
	if err != nil || n.NodeType != "vpcs" || n.Status != gns3.NodeStarted {
		t.Fatalf("the project needs a started VPCS named %s: %v %+v", name, err, n)
	}
	return n
}
