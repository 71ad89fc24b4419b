package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The undo of a VPCS job: the job readdressed PC1 (10.0.0.1/24 → 10.0.0.77/24); the
// undo sends "clear ip" and the old address, and reads back exactly the configuration before
// the job. That is a success, whatever "clear ip" alone would read back as. An undo whose
// read-back still differs stays partial_success, and says by what.
func TestAnUndoBackToBeforeIsASuccess(t *testing.T) {
	a, ref := undoFixture(t)
	ctx := context.Background()
	pc := func(addr string) string {
		return "NAME        : PC1[1]\nIP/MASK     : " + addr + "\nGATEWAY     : 10.0.0.254\nDNS         : \nMAC         : 00:50:79:66:68:00\n"
	}
	saveJob(t, a, "job-1", "s1", "alice", domain.JobCompleted, time.Now().UTC().Add(-time.Minute))
	save := func(turn, call string, seq int, cmd, status, output string) {
		t.Helper()
		require.NoError(t, a.DeviceRecords.Save(ctx, &models.DeviceCommand{TurnID: turn, ToolCallID: call, NodeID: "old-n1", Seq: seq, SessionID: "s1",
			UserID: "alice", ProjectID: "p1", DeviceName: "PC1", Tool: tools.VPCSCommandsTool, Command: cmd, Status: status, Output: output}))
	}
	save("turn-job-1", "call-job-1", models.SeqReadBefore, "show ip", models.CommandOK, pc("10.0.0.1/24"))
	save("turn-job-1", "call-job-1", models.SeqReadAfter, "show ip", models.CommandOK, pc("10.0.0.77/24"))

	lines := []string{"clear ip", "ip 10.0.0.1/24 10.0.0.254"}
	job := tools.DeviceJob{NodeID: "n1", Name: "PC1", Platform: "vpcs", Config: true, Commands: lines}
	in := workflows.FinishConfigJobInput{JobID: "job-undo", Turn: ref, Call: workflows.ToolCall{ID: "c_undo", Name: tools.UndoConfigTool},
		Applied: true, Plan: domain.DevicePlan{Tool: tools.UndoConfigTool, Jobs: []tools.DeviceJob{job},
			Undo: &domain.UndoOf{JobID: "job-1", Nodes: map[string]string{"n1": "old-n1"}}}}
	undoRecords := func(after string) {
		t.Helper()
		for _, r := range []models.DeviceCommand{
			{Seq: models.SeqReadBefore, Command: "show ip", Output: pc("10.0.0.77/24")},
			{Seq: 0, Command: lines[0], Output: "PC1 : 0.0.0.0 0.0.0.0"},
			{Seq: 1, Command: lines[1], Output: "Checking for duplicate address...\nPC1 : 10.0.0.1 255.255.255.0 gateway 10.0.0.254"},
			{Seq: models.SeqReadAfter, Command: "show ip", Output: after},
		} {
			r.TurnID, r.ToolCallID, r.NodeID, r.SessionID, r.UserID, r.ProjectID, r.DeviceName, r.Tool, r.Status =
				ref.TurnID, "c_undo", "n1", "s1", "alice", "p1", "PC1", tools.UndoConfigTool, models.CommandOK
			require.NoError(t, a.DeviceRecords.Save(ctx, &r))
		}
	}

	undoRecords(pc("10.0.0.1/24"))
	out, err := a.applied(ctx, in)
	require.NoError(t, err)
	require.True(t, out.res.Success, out.res.JSON())
	require.Equal(t, domain.JobCompleted, out.status)
	it := out.res.Data[0]
	require.Equal(t, tools.StatusSuccess, it.Status, it.Error)
	require.Empty(t, it.Error)
	require.Contains(t, it.Result, "Back to the configuration before job job-1: the read-back equals it.")
	require.NotContains(t, it.Result, "not in effect")
	require.Empty(t, out.changes[0].NotTaken)
	require.True(t, *out.changes[0].BackToBefore)

	// The same undo read back with another address: not back, and partial.
	undoRecords(pc("10.0.0.5/24"))
	out, err = a.applied(ctx, in)
	require.NoError(t, err)
	require.False(t, out.res.Success)
	require.Equal(t, domain.JobPartial, out.status)
	it = out.res.Data[0]
	require.Equal(t, tools.StatusPartial, it.Status)
	require.Contains(t, it.Error, "the read-back differs from the configuration before job job-1")
	require.Contains(t, it.Error, `accepted but not in effect when read back: "ip 10.0.0.1/24 10.0.0.254"`)
	require.NotContains(t, it.Error, `"clear ip"`, "the intermediate line is not judged alone")
	require.Equal(t, []string{"- IP/MASK : 10.0.0.1/24", "+ IP/MASK : 10.0.0.5/24"}, out.changes[0].StillDiffers)
}
