package workflows_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

const waitForFixture = "testdata/config_job_wait_for_history.json"

func waitForReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	return r
}

// A configuration job on two real FRR routers whose wait_for held once OSPF came up (the
// "wait-for" path): recorded by e2e.TestConfigJobWaitsForOSPFOnRealFRR.
func TestRecordedWaitForJobReplaysOnTheCurrentCode(t *testing.T) {
	require.NoError(t, waitForReplayer().ReplayWorkflowHistoryFromJSONFile(nil, waitForFixture))
}

// A worker that dies while the job waits leaves a history that ends at a pause between
// attempts; the worker that takes over replays it without a command of its own, so the
// devices' apply activities stay the recorded ones and it goes on waiting from there.
func TestAJobCutDuringItsWaitResumesWaiting(t *testing.T) {
	b, err := os.ReadFile(waitForFixture)
	require.NoError(t, err)
	hist, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
	require.NoError(t, err)
	cut := -1
	applies, waits := 0, 0
	for i, e := range hist.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			switch a.ActivityType.GetName() {
			case workflows.DeviceRunActivity:
				applies++
			case workflows.WaitCheckActivity:
				waits++
			}
		}
		if e.EventType == enums.EVENT_TYPE_TIMER_STARTED && cut < 0 && waits > 0 {
			cut = i
		}
	}
	require.Positive(t, cut, "the fixture pauses between wait_for attempts")
	require.Equal(t, 2, applies, "each router was applied once")
	// The workflow task that started the timer completed; the next one is the timer's.
	partial := &historypb.History{Events: hist.Events[:cut+1]}
	require.NoError(t, waitForReplayer().ReplayWorkflowHistory(nil, partial))
}
