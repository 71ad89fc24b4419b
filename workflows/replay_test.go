package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Turns that are running when a new version of the worker is deployed continue on the new
// code. testdata/chat_turn_history.json is the history of a real turn (a topology read and a
// device tool in parallel, then an answer), recorded by e2e.TestRealTurnHistoryReplays; if this
// test fails, the change makes the workflow decide differently for the same history and needs
// workflow.GetVersion.
// chat_turn_local_history.json is the same turn recorded since model calls and the finalizer
// run as local activities ("local-model-finalize").
func TestRecordedTurnReplaysOnTheCurrentCode(t *testing.T) {
	for _, f := range []string{"testdata/chat_turn_history.json", "testdata/chat_turn_local_history.json"} {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f), f)
	}
}

// A turn that ran a configuration job (an approval given through the Update, the job applied
// and diffed), and the job itself, recorded by e2e.TestConfigurationWaitsForApprovalAndReportsWhatChanged.
func TestRecordedConfigJobReplaysOnTheCurrentCode(t *testing.T) {
	for _, f := range []string{"testdata/chat_turn_with_config_job_history.json", "testdata/config_job_history.json"} {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
		r.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f), f)
	}
}

// The undo of a job on a real VPCS that was changed by hand since, under --approval never: the
// "undo-job" path compares the PC with the job's read after and asks before it applies;
// recorded by e2e.TestUndoAsksWhenTheDeviceChangedSinceTheJob.
func TestRecordedUndoJobReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/config_job_undo_history.json"))
}

// An exercise that waited across a restart of the copilot and of Temporal: a failing check, a
// hint, then the check that found it fixed; recorded by e2e.TestInjectedFaultExerciseOnRealVPCS.
func TestRecordedExerciseReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Exercise, workflow.RegisterOptions{Name: workflows.ExerciseWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/exercise_history.json"))
}

// An MCP call that ran a device command on a real VPCS, with the credential renewal of a call
// under an approval setting; recorded by e2e.TestRealMCPCallHistoryReplays on the code before
// MCPCall and ChatTurn shared their tool-call runner.
func TestRecordedMCPCallReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.MCPCall, workflow.RegisterOptions{Name: workflows.MCPCallWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/mcp_call_history.json"))
}

// The same turn recorded with "approvals" and "lean-turn" but before "local-model-finalize", by
// e2e.TestRealTurnHistoryReplays at that commit: the one ChatTurn path the fixtures above miss.
func TestRecordedLeanTurnWithoutLocalActivitiesReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/chat_turn_lean_history.json"))
}

// An injection turn since "injection-snapshot" and before "save-point": its snapshot first (one
// activity), then the model, a device fault on a real VPCS, a link fault and their records;
// recorded by e2e.TestInjectWithCountRecordsItAndSaysWhenFewer before save points.
func TestRecordedInjectionTurnReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/chat_turn_injection_history.json"))
}

// An exercise reset twice: rejected (through the question the reset asked in the chat), then
// approved, restoring the snapshot and ending the exercise; recorded by
// e2e.TestResetAfterApprovalRestoresTheExercisesSnapshot.
func TestRecordedExerciseResetReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Exercise, workflow.RegisterOptions{Name: workflows.ExerciseWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/exercise_reset_history.json"))
}

// A turn since "destructive-check": a restore of a snapshot that does not exist and a delete of
// an unknown link, refused by their checks without asking, then a restore of the snapshot that
// exists, checked, asked about and rejected; recorded by
// e2e.TestDestructiveCallThatCannotRunIsRefusedAtOnce.
func TestRecordedDestructiveCheckTurnReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/chat_turn_destructive_check_history.json"))
}

// A snapshot of a running lab since "save-point": planned, asked about under --approval changes,
// approved, the PCs saved, paused and answered; recorded by
// e2e.TestSavePointAsksThenPausesTheRunningLab.
func TestRecordedSavePointTurnReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/chat_turn_save_point_history.json"))
}

// An injection turn since "save-point": its save point first (the running PCs saved and paused,
// nobody asked), then the model, a device fault on a real VPCS, a link fault and their records;
// recorded by e2e.TestInjectWithCountRecordsItAndSaysWhenFewer.
func TestRecordedInjectionSavePointTurnReplaysOnTheCurrentCode(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/chat_turn_injection_save_point_history.json"))
}
