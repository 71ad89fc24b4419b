package workflows_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

type deviceActs struct {
	mu       sync.Mutex
	cond     *sync.Cond
	jobs     []domain.DeviceJob
	started  int
	active   int
	max      int
	fail     map[string]bool
	finished []workflows.DeviceFinishInput
	// hold is how many devices must have started before any may end (0: two).
	hold int
}

func (d *deviceActs) Plan(_ context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
	return workflows.DevicePlanResult{Plan: domain.DevicePlan{Tool: in.Call.Name, Jobs: d.jobs,
		Failed: []domain.ResultItem{{ID: "ghost", Name: "ghost", Status: "failed", Error: "no node"}}}}, nil
}

// Run holds the first devices until hold (two) run at once, which shows whether the bound holds.
func (d *deviceActs) Run(_ context.Context, in workflows.DeviceInput) error {
	d.mu.Lock()
	d.started++
	d.active++
	d.max = max(d.max, d.active)
	d.cond.Broadcast()
	deadline := time.Now().Add(5 * time.Second)
	hold := d.hold
	if hold == 0 {
		hold = 2
	}
	for d.started < hold && time.Now().Before(deadline) {
		d.cond.Wait()
	}
	d.active--
	fail := d.fail[in.Job.NodeID]
	d.mu.Unlock()
	if fail {
		return temporal.NewNonRetryableApplicationError("console exploded", "Boom", nil)
	}
	return nil
}

func (d *deviceActs) Finish(_ context.Context, in workflows.DeviceFinishInput) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.finished = append(d.finished, in)
	return nil
}

// runDeviceTurn runs a turn whose model calls the show tool once on d's devices, with the given
// device concurrency, and returns the turn's result and its fake activities.
func runDeviceTurn(t *testing.T, d *deviceActs, concurrency int) (workflows.ChatTurnResult, *fakeActs) {
	t.Helper()
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: domain.ShowCommandsTool, Arguments: "{}"}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	d.cond = sync.NewCond(&d.mu)
	env := newEnv(t, f)
	env.RegisterActivityWithOptions(d.Plan, activity.RegisterOptions{Name: workflows.DevicePlanActivity})
	env.RegisterActivityWithOptions(d.Run, activity.RegisterOptions{Name: workflows.DeviceRunActivity})
	env.RegisterActivityWithOptions(d.Finish, activity.RegisterOptions{Name: workflows.DeviceFinishActivity})
	in := input
	in.DeviceConcurrency = concurrency
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	return result(t, env), f
}

func TestDeviceToolFansOutOneActivityPerDeviceWithinTheBound(t *testing.T) {
	d := &deviceActs{fail: map[string]bool{"n3": true}}
	for _, id := range []string{"n1", "n2", "n3", "n4", "n5"} {
		d.jobs = append(d.jobs, domain.DeviceJob{NodeID: id, Name: id, Commands: []string{"show version"}})
	}
	r, f := runDeviceTurn(t, d, 2)

	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Empty(t, f.toolCalls, "device tools do not go through the generic tool activity")
	require.Equal(t, 5, d.started, "one activity per device")
	require.Equal(t, 2, d.max, "never more devices at once than allowed")
	require.Len(t, d.finished, 1)
	fin := d.finished[0]
	require.Equal(t, 2, fin.MessageIndex)
	require.Equal(t, "c1", fin.Call.ID)
	require.Len(t, fin.Plan.Failed, 1)
	require.Equal(t, map[string]string{"n3": "console exploded"}, fin.Errors, "a device that failed for good is reported, the others are not")
	require.Len(t, f.llmCalls, 2, "the model gets the aggregated result")
}

// Issue 25: a call that names no bound reaches all its devices at once, up to the default (a
// class's 40 routers, where calls recorded before "device-fanout" ran 16 at a time).
func TestDeviceToolWithoutABoundReachesEveryDeviceAtOnce(t *testing.T) {
	const devices = 40
	d := &deviceActs{hold: devices}
	for i := range devices {
		id := fmt.Sprintf("n%d", i)
		d.jobs = append(d.jobs, domain.DeviceJob{NodeID: id, Name: id, Commands: []string{"show version"}})
	}
	r, _ := runDeviceTurn(t, d, 0)

	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Equal(t, devices, d.started)
	require.Equal(t, devices, d.max, "every device at once")
	require.Len(t, d.finished, 1)
	require.Empty(t, d.finished[0].Errors)
}
