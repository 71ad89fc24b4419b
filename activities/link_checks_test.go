package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A link's traffic check on two real VPCS, through the worker's consoles: the addresses are read,
// one PC pings the other, and every command is in the audit under a call id of its own.
func TestTrafficCheckPingsThroughTheWorkersConsoles(t *testing.T) {
	lab := vpcslab.StartWith(t, 2, vpcslab.Options{Startup: func(i int) string { return []string{"ip 10.0.0.1/24", "ip 10.0.0.2/24"}[i] }})
	a, _, _, _ := deviceFixture(t)
	fake := fakegns3.New(t)
	pid := fake.AddProject("lab")
	var ids []string
	for i, node := range lab.Nodes {
		n := fake.AddNode(pid, fakegns3.NodeSpec{Name: node.Name, X: 100 * i, Status: "started"})
		fake.SetConsole(n.ID, "127.0.0.1", node.ConsolePort)
		ids = append(ids, n.ID)
	}
	fake.AddLink(pid, ids[0], 0, 0, ids[1], 0, 0)
	a.GNS3 = gns3.NewServer(fake.URL, 5*time.Second)
	ref := workflows.ToolCallRef{WorkRef: workflows.WorkRef{SessionID: "s", TurnID: "ex-check-1", ProjectID: pid, UserID: "u"},
		CallID: "verify-7", ToolName: tools.ShowCommandsTool}
	ctx := context.Background()
	env := tools.Env{ProjectID: pid, GNS3: a.GNS3.WithToken(fakegns3.AdminToken), Attempt: 1, Console: a.console(ctx, ref)}

	c, err := tools.CheckLink(ctx, env, "PC1", "PC2", 0)
	if err != nil || !c.Measured || !c.TrafficOK || !strings.Contains(c.Traffic, "PC1 pinged 10.0.0.2 (PC2): 5 of 5 replies") {
		t.Fatalf("%+v %v", c, err)
	}
	var audit []string
	for _, call := range []string{"verify-7/traffic-1-1", "verify-7/traffic-1-2", "verify-7/traffic-1-3"} {
		recs, err := a.DeviceRecords.Commands(ctx, "ex-check-1", call, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Status != models.CommandOK {
				t.Errorf("%s: %s is %s", call, r.Command, r.Status)
			}
			audit = append(audit, r.DeviceName+"> "+r.Command)
		}
	}
	if got := strings.Join(audit, "\n"); got != "PC1> show ip\nPC2> show ip\nPC1> ping 10.0.0.2 -c 5" {
		t.Fatalf("audit:\n%s", got)
	}
}
