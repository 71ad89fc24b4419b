package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// Crash reconciliation against real FRRouting: a worker died with "ip address" on its way to
// R1 and the next line queued. The retry reads R1 back: the line that took effect is recorded
// as applied and not sent again, the interface section is entered again, and the rest is sent;
// on R2, where the line never arrived, the read-back says so and it is sent.
func TestRealFRRCrashReconciliation(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	a, _, _, ref := deviceFixture(t)
	ctx := context.Background()
	for i, r := range lab.Routers {
		addr := []string{"10.1.0.1/24", "10.1.0.2/24"}[i]
		job := tools.DeviceJob{NodeID: r.Namespace, Name: r.Name, Config: true, Platform: "frr",
			Target: domain.DeviceTarget{NodeID: r.Namespace, Name: r.Name, NodeType: "qemu", TemplateName: "FRR",
				ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: r.ConsolePort},
			Commands: []string{"interface eth0", "ip address " + addr, "ip ospf cost 7"}}
		tookEffect := i == 0
		if tookEffect {
			_, err := r.Vtysh("configure terminal", "interface eth0", "ip address "+addr)
			require.NoError(t, err)
		}
		runner := a.deviceRunner(ref)
		require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 0, job.Commands[0], models.CommandOK)))
		require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 1, job.Commands[1], models.CommandSent)))
		require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 2, job.Commands[2], models.CommandQueued)))

		out := runner.RunDevice(ctx, job)
		require.Empty(t, out.Err)
		recs, err := a.DeviceRecords.Commands(ctx, ref.TurnID, ref.CallID, job.NodeID)
		require.NoError(t, err)
		got := map[string]string{}
		for _, c := range recs {
			got[c.Command] = c.Status
		}
		want := models.CommandOK
		if tookEffect {
			want = models.CommandApplied
		}
		require.Equal(t, map[string]string{"show running-config": models.CommandOK, "interface eth0": models.CommandOK,
			"ip address " + addr: want, "ip ospf cost 7": models.CommandOK}, got, r.Name)
		item := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{out}).Data[0]
		require.Equal(t, tools.StatusSuccess, item.Status, "%+v", item)
		if tookEffect {
			require.Contains(t, item.Result, "verified after restart")
		}
		cfg, err := r.Vtysh("show running-config")
		require.NoError(t, err)
		require.Equal(t, 1, strings.Count(cfg, "ip address "+addr), cfg)
		require.Contains(t, cfg, " ip ospf cost 7")
	}
}

// A job planned without a platform (only the console's prompt told it) still judges an FRR
// router's diff as FRR, whose sections end with "exit", not as the first IOS-like profile.
func TestProfileForAJobWithoutPlatform(t *testing.T) {
	out := "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname frr\n!\n" +
		"interface eth0\n ip address 10.1.0.1/24\nexit\n!\nend"
	p := profileFor(tools.DeviceJob{Name: "R1"}, "show running-config", out)
	require.NotNil(t, p)
	require.Equal(t, "frr", p.Name)
	require.Equal(t, []string{"hostname frr", "interface eth0", "interface eth0 | ip address 10.1.0.1/24"}, p.ConfigLines(out))
	p = profileFor(tools.DeviceJob{Name: "R1", Platform: "cisco_ios"}, "show running-config", out)
	require.Equal(t, "cisco_ios", p.Name, "a known platform is kept")
}
