package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/realgns3"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A save point and a restore of three FRR routers (QEMU under TCG) on the real GNS3, configured
// on their consoles and never saved: each saves with write memory, the pause stops the three,
// takes the snapshot, starts them and waits until each vtysh answers again, and each router
// runs again with its configuration; the restore brings them back the same way. The pause and
// the restore's time to routers that answer, read back, are logged part by part.
//
// It runs only where an FRR template is named (realgns3.EnvFRRTemplate): CI keeps to VPCS.
func TestSavePointOfThreeFRRRoutersOnRealGNS3(t *testing.T) {
	srv := realgns3.Require(t)
	tpl := realgns3.RequireFRR(t)
	p := srv.NewProject(t)
	routers := p.AddFromTemplate(t, tpl, 3)
	p.LinkPorts(t, routers[0], 0, routers[1], 0)
	p.LinkPorts(t, routers[1], 1, routers[2], 0)
	p.StartAll(t)
	l := newRealSavePointLab(t, srv, p.ID)
	for i, r := range routers {
		// Not "hostname": FRR 10's vtysh keeps the name typed there beside the daemons' own, and
		// write memory saves only theirs, so it does not survive a restart (the read-back says so).
		vtysh(t, l, p, r.Name, "interface eth0", fmt.Sprintf("ip address 10.9.%d.1/24", i+1), "exit",
			"router ospf", fmt.Sprintf("network 10.9.%d.0/24 area 0", i+1), "exit")
	}

	in := l.plan(t, "three-routers")
	require.Len(t, in.Running, 3)
	for _, n := range in.Running {
		require.Equal(t, "frr", n.Platform, n.Name)
	}
	saved, err := l.a.SaveDevicesForSavePoint(t.Context(), in)
	require.NoError(t, err)
	require.Empty(t, saved.Refused)
	paused, err := l.a.pauseAttempt(t.Context(), in, 1)
	require.NoError(t, err)
	require.Empty(t, paused.Refused)
	require.Empty(t, paused.NotBack)
	t.Logf("save point of 3 FRR: paused %.1f s (stop %.1f s, snapshot %.2f s, start %.1f s, consoles %.1f s)",
		float64(paused.PausedMS)/1000, float64(paused.StopMS)/1000, float64(paused.SnapshotMS)/1000, float64(paused.StartMS)/1000, float64(paused.ConsoleMS)/1000)
	for i, r := range routers {
		cfg := vtysh(t, l, p, r.Name, "show running-config")
		require.Contains(t, cfg, fmt.Sprintf("ip address 10.9.%d.1/24", i+1), "%s kept its configuration across the pause", r.Name)
		require.Contains(t, cfg, fmt.Sprintf("network 10.9.%d.0/24 area 0", i+1), r.Name)
	}

	// Broken after the save point, then restored: every router runs again as it saved.
	vtysh(t, l, p, routers[0].Name, "interface eth0", "no ip address 10.9.1.1/24", "exit")
	env := tools.Env{ProjectID: p.ID, GNS3: l.a.GNS3.WithToken(srv.Token), Attempt: 1}
	began := time.Now()
	r := l.a.Tools.Execute(t.Context(), env, tools.LabAutomation, tools.RestoreSnapshotTool, `{"snapshot":"three-routers"}`)
	require.True(t, r.Success, r.JSON())
	restored := time.Since(began)
	r, report := l.a.afterRestore(t.Context(), env, workflows.ToolCallRef{WorkRef: l.ref, CallID: "c_restore", ToolName: tools.RestoreSnapshotTool}, r)
	require.True(t, r.Success, r.JSON())
	for _, d := range report.Devices {
		require.True(t, d.Back, "%s: %s", d.Name, d.Text)
		require.Contains(t, d.Text, "holds all")
	}
	t.Logf("restore of 3 FRR: GNS3's restore %.1f s, then started and read back in %.1f s (%.1f s in all)",
		restored.Seconds(), report.Took.Seconds(), time.Since(began).Seconds())
}

// newRealSavePointLab is newSavePointLab's activities, acting on a real GNS3 project with the
// tests' account.
func newRealSavePointLab(t *testing.T, srv *realgns3.Server, projectID string) *savePointLab {
	t.Helper()
	l := newSavePointActivities(t, srv.URL, srv.Token)
	l.ref.ProjectID = projectID
	return l
}

// vtysh configures (several lines) or runs one command on an FRR router of the real project,
// found by name, once its console answers.
func vtysh(t *testing.T, l *savePointLab, p *realgns3.Project, node string, lines ...string) string {
	t.Helper()
	n := p.Node(t, node)
	target := domain.DeviceTarget{NodeID: n.NodeID, Name: n.Name, NodeType: n.NodeType, Tags: []string{"device_type:frr"},
		ConsoleType: n.ConsoleType, ConsoleHost: n.ConsoleHost, ConsolePort: n.ConsolePort()}
	var out string
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	job := tools.DeviceJob{NodeID: n.NodeID, Name: n.Name, Target: target}
	err := l.a.deviceRunner(workflows.ToolCallRef{WorkRef: l.ref}).whenConsoleAnswers(ctx, job, 3*time.Minute, func(s *devices.Session) error {
		if len(lines) == 1 {
			r, err := s.Run(ctx, lines[0])
			out = r.Output
			return err
		}
		res, err := s.Configure(ctx, lines)
		for _, r := range res {
			if r.Failed {
				return fmt.Errorf("%q: %s", r.Command, r.Error)
			}
		}
		return err
	})
	require.NoError(t, err, "%s: %s", node, strings.Join(lines, " / "))
	return out
}
