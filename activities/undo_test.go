package activities

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func undoFixture(t *testing.T) (*Activities, workflows.WorkRef) {
	t.Helper()
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	a := &Activities{DeviceRecords: models.DeviceRepository{DB: db}, ConfigJobs: models.ConfigJobRepository{DB: db}}
	return a, workflows.WorkRef{SessionID: "s1", TurnID: "t9", ProjectID: "p1", UserID: "alice"}
}

func saveJob(t *testing.T, a *Activities, id, session, user, status string, at time.Time) {
	t.Helper()
	require.NoError(t, a.ConfigJobs.Save(context.Background(), &models.ConfigJob{ID: id, SessionID: session, TurnID: "turn-" + id,
		ToolCallID: "call-" + id, ProjectID: "p1", UserID: user, ToolName: tools.VPCSCommandsTool, Status: status, Devices: 1, CreatedAt: at}))
}

// The job an undo takes back: the chat's last applied one by default, else the one named by
// its id or its tool call's id; everything else is refused in words that name what exists.
func TestUndoFindsItsJobAndRefusesWhatItCannotTakeBack(t *testing.T) {
	a, ref := undoFixture(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Hour)
	saveJob(t, a, "job-old", "s1", "alice", domain.JobCompleted, t0)
	saveJob(t, a, "job-partial", "s1", "alice", domain.JobPartial, t0.Add(time.Minute))
	saveJob(t, a, "job-rejected", "s1", "alice", domain.JobRejected, t0.Add(2*time.Minute))
	saveJob(t, a, "job-running", "s1", "alice", domain.JobWaiting, t0.Add(3*time.Minute))
	saveJob(t, a, "job-bob", "s1", "bob", domain.JobCompleted, t0.Add(4*time.Minute))
	saveJob(t, a, "job-other-chat", "s2", "alice", domain.JobCompleted, t0.Add(5*time.Minute))

	j, refusal, err := a.undoTarget(ctx, ref, "self", "")
	require.NoError(t, err)
	require.Empty(t, refusal)
	require.Equal(t, "job-partial", j.ID, "the last job of this chat and user that sent its lines")

	j, refusal, err = a.undoTarget(ctx, ref, "self", "call-job-old")
	require.NoError(t, err)
	require.Empty(t, refusal)
	require.Equal(t, "job-old", j.ID, "named by the tool call id the model saw")

	for name, want := range map[string]string{
		"job-rejected": "job job-rejected sent nothing (it was rejected), so there is nothing to undo",
		"job-running":  "job job-running has not finished yet (waiting_approval)",
		"job-bob":      "job job-bob was run by another user",
		"nope":         `there is no configuration job "nope"; this chat's applied jobs, newest first: job-partial (execute_vpcs_commands, partial, 1 device), job-old`,
	} {
		_, refusal, err = a.undoTarget(ctx, ref, "self", name)
		require.NoError(t, err)
		require.Contains(t, refusal, want, name)
	}
	_, refusal, err = a.undoTarget(ctx, ref, "job-old", "job-old")
	require.NoError(t, err)
	require.Contains(t, refusal, "cannot take back itself")
	other := ref
	other.ProjectID = "p2"
	_, refusal, err = a.undoTarget(ctx, other, "self", "job-old")
	require.NoError(t, err)
	require.Contains(t, refusal, "belongs to another project")
	fresh := ref
	fresh.SessionID = "s3"
	_, refusal, err = a.undoTarget(ctx, fresh, "self", "")
	require.NoError(t, err)
	require.Contains(t, refusal, "no configuration job was applied in this chat yet")
}

// The job's reads become the undo's source, in the order its result listed the devices; a
// device without both reads cannot be undone, and says why.
func TestUndoSourceKeepsTheResultsOrderAndNamesMissingReads(t *testing.T) {
	a, _ := undoFixture(t)
	ctx := context.Background()
	job := &models.ConfigJob{ID: "job", TurnID: "turn", ToolCallID: "call", Summary: `[{"node_id":"n2","name":"PC2"},{"node_id":"n1","name":"PC1"}]`}
	for _, r := range []models.DeviceCommand{
		{NodeID: "n1", DeviceName: "PC1", Seq: models.SeqReadBefore, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("0.0.0.0/0", "PC1")},
		{NodeID: "n1", DeviceName: "PC1", Seq: models.SeqReadAfter, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("10.0.0.1/24", "PC1")},
		{NodeID: "n2", DeviceName: "PC2", Seq: models.SeqReadBefore, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("0.0.0.0/0", "PC2")},
		{NodeID: "n2", DeviceName: "PC2", Seq: models.SeqReadAfter, Command: "show ip", Status: models.CommandFailed, Error: "the console did not answer"},
		{NodeID: "n1", DeviceName: "PC1", Seq: 0, Command: "ip 10.0.0.1/24", Status: models.CommandOK},
	} {
		r.TurnID, r.ToolCallID, r.SessionID, r.UserID, r.ProjectID, r.Tool = "turn", "call", "s1", "alice", "p1", tools.VPCSCommandsTool
		require.NoError(t, a.DeviceRecords.Save(ctx, &r))
	}
	src, err := a.undoSource(ctx, job)
	require.NoError(t, err)
	require.Len(t, src.Devices, 2)
	require.Equal(t, "PC2", src.Devices[0].Name)
	require.Equal(t, "its configuration was not read after the job", src.Devices[0].Problem)
	require.Equal(t, "PC1", src.Devices[1].Name)
	require.Empty(t, src.Devices[1].Problem)
	require.Equal(t, "show ip", src.Devices[1].ReadCommand)
	require.Contains(t, src.Devices[1].After, "10.0.0.1/24")
}

// An undo's device result says whether the read-back equals the configuration before the job,
// and a device that is not back is partial_success with the lines that still differ.
func TestJudgeDeviceComparesWithTheConfigurationBeforeTheJob(t *testing.T) {
	job := tools.DeviceJob{NodeID: "n1", Name: "PC1", Platform: "vpcs"}
	undo := &domain.UndoOf{JobID: "job-1", Nodes: map[string]string{"n1": "old-n1"}}
	before := &models.DeviceCommand{Command: "show ip", Status: models.CommandOK, Output: showIPOutput("0.0.0.0/0", "PC1")}

	it := tools.Item{Status: tools.StatusSuccess, Result: "PC1> clear ip"}
	var ch DeviceChange
	judgeDevice(&it, &ch, job, undo, compareBack(job, before, &models.DeviceCommand{Command: "show ip", Status: models.CommandOK,
		Output: showIPOutput("0.0.0.0/0", "PC1") + "LPORT       : 30001\n"}))
	require.Equal(t, tools.StatusSuccess, it.Status)
	require.True(t, *ch.BackToBefore)
	require.Contains(t, it.Result, "Back to the configuration before job job-1: the read-back equals it.")

	it = tools.Item{Status: tools.StatusSuccess, Result: "PC1> clear ip"}
	ch = DeviceChange{}
	undo.Left = map[string][]string{"n1": {"the banner is not taken back"}}
	judgeDevice(&it, &ch, job, undo, compareBack(job, before, &models.DeviceCommand{Command: "show ip", Status: models.CommandOK, Output: showIPOutput("10.0.0.9/24", "PC1")}))
	require.Equal(t, tools.StatusPartial, it.Status)
	require.False(t, *ch.BackToBefore)
	require.Equal(t, []string{"- IP/MASK : 0.0.0.0/0", "+ IP/MASK : 10.0.0.9/24"}, ch.StillDiffers)
	require.Contains(t, it.Result, "Not back to the configuration before job job-1")
	require.Contains(t, it.Result, "Not undone: the banner is not taken back.")
	require.Contains(t, it.Error, "the read-back differs from the configuration before job job-1")

	it = tools.Item{Status: tools.StatusSuccess}
	ch = DeviceChange{}
	judgeDevice(&it, &ch, job, &domain.UndoOf{JobID: "job-1"}, compareBack(job, before, nil))
	require.Nil(t, ch.BackToBefore)
	require.Contains(t, it.Result, "is not known: it was not read back")
}

// The approval of an undo shows a device changed since the job, so nobody overwrites it unseen.
func TestUndoQuestionShowsChangesSinceTheJob(t *testing.T) {
	p := ApprovalPlan{Tool: tools.UndoConfigTool, Kind: domain.ApprovalKindConfig, Summary: "Undo job job-1: send 2 line(s) to 1 device(s)", UndoOf: "job-1",
		Devices: []PlanDevice{{Name: "PC1", Platform: "vpcs", Lines: []PlanLine{{Command: "clear ip", Verdict: "change"}, {Command: "set pcname PC1", Verdict: "change"}},
			ChangedSince: &ConfigDrift{Added: []string{"IP/MASK : 10.0.0.9/24"}, Removed: []string{"IP/MASK : 10.0.0.1/24"}},
			NotUndone:    []string{"the banner is not taken back"}}}}
	q := p.Question(time.Time{})
	require.Contains(t, q, "before `undo_device_config` changes the lab: undo job job-1")
	require.Contains(t, q, "**Changed since the job**")
	require.Contains(t, q, "- IP/MASK : 10.0.0.1/24\n+ IP/MASK : 10.0.0.9/24")
	require.Contains(t, q, "not undone by these lines: the banner is not taken back")
}
