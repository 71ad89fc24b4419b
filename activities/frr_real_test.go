package activities

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/consoleproxy"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Crash reconciliation against real FRRouting, over a telnet and over an SSH console (GNS3
// 3.1's, in front of the same console): a worker died with "ip address" on its way to R1 and the
// next line queued. The retry reads R1 back: the line that took effect is recorded as applied
// and not sent again, the interface section is entered again, and the rest is sent; on R2,
// where the line never arrived, the read-back says so and it is sent.
func TestRealFRRCrashReconciliation(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	ctx := context.Background()
	for k, console := range []string{devices.ConsoleTelnet, devices.ConsoleSSH} {
		t.Run(console, func(t *testing.T) {
			a, _, _, ref := deviceFixture(t)
			for i, r := range lab.Routers {
				addr, cost := fmt.Sprintf("10.1.%d.%d/24", k, i+1), fmt.Sprintf("ip ospf cost %d", 7+k)
				port, hostKey := consoleAt(t, console, r.Addr())
				job := tools.DeviceJob{NodeID: r.Namespace, Name: r.Name, Config: true, Platform: "frr",
					Target: domain.DeviceTarget{NodeID: r.Namespace, Name: r.Name, NodeType: "qemu", TemplateName: "FRR",
						ConsoleType: console, ConsoleHost: "127.0.0.1", ConsolePort: port},
					Commands: []string{"interface eth0", "ip address " + addr, cost}}
				tookEffect := i == 0
				if tookEffect {
					_, err := r.Vtysh("configure terminal", "interface eth0", "ip address "+addr)
					require.NoError(t, err)
				}
				out := diedSendingTheSecondLine(t, a, ref, job).RunDevice(ctx, job)
				require.Empty(t, out.Err)
				recs, err := a.DeviceRecords.Commands(ctx, ref.TurnID, ref.CallID, job.NodeID)
				require.NoError(t, err)
				got := map[string]string{}
				for _, c := range recs {
					got[c.Command] = c.Status
					if c.Seq == models.SeqReadRecovery || c.Command == cost {
						require.Equal(t, hostKey, c.HostKey, "%q went over %s", c.Command, console)
					}
				}
				want := models.CommandOK
				if tookEffect {
					want = models.CommandApplied
				}
				require.Equal(t, map[string]string{"show running-config": models.CommandOK, "interface eth0": models.CommandOK,
					"ip address " + addr: want, cost: models.CommandOK}, got, r.Name)
				item := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{out}).Data[0]
				require.Equal(t, tools.StatusSuccess, item.Status, "%+v", item)
				if tookEffect {
					require.Contains(t, item.Result, "verified after restart")
				}
				cfg, err := r.Vtysh("show running-config")
				require.NoError(t, err)
				require.Equal(t, 1, strings.Count(cfg, "ip address "+addr), cfg)
				require.Contains(t, cfg, " "+cost)
			}
		})
	}
}

// consoleAt is where a job reaches a console: the console's own telnet port, or an SSH console
// in front of it as GNS3 3.1 serves one, with its host key's fingerprint.
func consoleAt(t *testing.T, console, telnetAddr string) (port int, hostKey string) {
	t.Helper()
	if console == devices.ConsoleSSH {
		srv := consoleproxy.StartSSH(t, telnetAddr, consoleproxy.SSHOptions{})
		return srv.Port(), srv.Fingerprint()
	}
	_, p, _ := strings.Cut(telnetAddr, ":")
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	return port, ""
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

// configJob runs a configuration job's device work on one device as the workflow does, the
// approval aside: read the configuration, apply the lines, read it again, and compare.
func configJob(t *testing.T, a *Activities, ref workflows.ToolCallRef, job tools.DeviceJob) (tools.Item, DeviceChange) {
	t.Helper()
	ctx := context.Background()
	read := func(phase string) {
		require.NoError(t, a.ReadDeviceConfig(ctx, workflows.ReadConfigInput{Turn: ref, Job: job, Phase: phase}), "%s: read %s", job.Name, phase)
	}
	read(workflows.ReadBefore)
	out := a.deviceRunner(ref).RunDevice(ctx, job)
	require.Empty(t, out.Err)
	read(workflows.ReadAfter)
	recs, err := a.DeviceRecords.Commands(ctx, ref.TurnID, ref.CallID, job.NodeID)
	require.NoError(t, err)
	ch := compareReads(job, out, recs, nil)
	item := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{out}).Data[0]
	annotate(&item, ch)
	return item, ch
}

// Configuration jobs with their read-back and diff on real devices: an FRR router reached over
// GNS3 3.1's SSH console, and a real Linux host (bash in a namespace linked to the router, a
// QEMU Debian node to the copilot) whose addresses and routes are its configuration.
func TestRealConfigJobsOverSSHAndOnALinuxHost(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 1, Hosts: 1})
	r1, h := lab.Routers[0], lab.Hosts[0]
	a, _, _, ref := deviceFixture(t)

	port, hostKey := consoleAt(t, devices.ConsoleSSH, r1.Addr())
	router := tools.DeviceJob{NodeID: r1.Namespace, Name: r1.Name, Config: true, Platform: "frr",
		Target: domain.DeviceTarget{NodeID: r1.Namespace, Name: r1.Name, NodeType: "qemu", TemplateName: "FRR",
			ConsoleType: devices.ConsoleSSH, ConsoleHost: "0.0.0.0", ConsolePort: port},
		Commands: []string{"interface eth0", "ip address 10.2.0.1/24", "exit", "ip route 10.9.0.0/24 10.2.0.10"}}
	item, ch := configJob(t, a, ref, router)
	require.Empty(t, ch.Error)
	require.Equal(t, "show running-config", ch.ReadCommand)
	// A fresh router has no section for eth0: it appears with its address.
	require.Equal(t, []string{"ip route 10.9.0.0/24 10.2.0.10", "interface eth0", "interface eth0 | ip address 10.2.0.1/24"}, ch.Added)
	require.Empty(t, ch.Removed)
	require.Empty(t, ch.NotTaken)
	require.Equal(t, tools.StatusSuccess, item.Status, "%+v", item)
	require.Contains(t, item.Result, "+ interface eth0 | ip address 10.2.0.1/24")
	recs, err := a.DeviceRecords.Commands(context.Background(), ref.TurnID, ref.CallID, router.NodeID)
	require.NoError(t, err)
	for _, c := range recs {
		require.Equal(t, hostKey, c.HostKey, "%q went over SSH", c.Command)
	}

	_, p, _ := strings.Cut(h.Addr(), ":")
	hostPort, _ := strconv.Atoi(p)
	host := tools.DeviceJob{NodeID: h.Namespace, Name: h.Name, Config: true, Platform: "linux",
		Target: domain.DeviceTarget{NodeID: h.Namespace, Name: h.Name, NodeType: "qemu", Image: "debian-12-genericcloud-amd64.qcow2",
			ConsoleType: devices.ConsoleTelnet, ConsoleHost: "127.0.0.1", ConsolePort: hostPort},
		Commands: []string{"ip addr add 10.2.0.10/24 dev eth0", "ip route add 10.9.0.0/24 via 10.2.0.1", "ip route add 10.8.0.0/24 via 10.7.0.1"}}
	item, ch = configJob(t, a, ref, host)
	require.Empty(t, ch.Error)
	require.Equal(t, "(ip -br addr 2>/dev/null || ip -o addr) && ip route", ch.ReadCommand)
	require.Contains(t, ch.Added, "10.9.0.0/24 via 10.2.0.1 dev eth0")
	require.Contains(t, ch.Added, "10.2.0.0/24 dev eth0 proto kernel scope link src 10.2.0.10")
	require.Len(t, ch.Removed, 1, "eth0's listing gains an address: %q", ch.Removed)
	require.Contains(t, ch.Removed[0], "eth0")
	// The third route's gateway is not on any link: the host refuses it, and the job says so.
	require.Equal(t, tools.StatusFailed, item.Status, "%+v", item)
	require.Regexp(t, `(Error: Nexthop has invalid gateway|RTNETLINK answers: Network is unreachable)`, item.Result, "what the host said")
	require.Contains(t, item.Error, "exit status 2")
	require.Contains(t, item.Result, "+ 10.9.0.0/24 via 10.2.0.1 dev eth0")
	out, err := h.Shell("ip route")
	require.NoError(t, err)
	require.Contains(t, out, "10.9.0.0/24 via 10.2.0.1 dev eth0")
	require.NotContains(t, out, "10.8.0.0/24")

	// Show commands over the router's SSH console: a ping across the link that only Ctrl-C
	// ends (sent over SSH), then the console is at its prompt for the next.
	showRef := ref
	showRef.CallID, showRef.ToolName = "show", tools.ShowCommandsTool
	show := router
	show.Config, show.Commands = false, []string{"ping 10.2.0.10", "show ip route 10.9.0.0/24"}
	o := a.deviceRunner(showRef).RunDevice(context.Background(), show)
	require.Empty(t, o.Err)
	require.Len(t, o.Results, 2)
	require.False(t, o.Results[0].Failed, "%+v", o.Results[0])
	require.Contains(t, o.Results[0].Output, "bytes from 10.2.0.10")
	require.Contains(t, o.Results[0].Output, "[stopped after 5s with Ctrl-C")
	require.Contains(t, o.Results[1].Output, "Known via \"static\"")
}
