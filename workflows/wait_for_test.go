package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// waitActs stands in for a configuration job's activities, with R1's check holding on the
// third attempt and R2's never.
type waitActs struct {
	mu       sync.Mutex
	attempts map[string][]time.Time // by node, when each attempt ran (workflow time)
	applied  map[string]int
	finished []workflows.FinishConfigJobInput
}

func newWaitEnv(t *testing.T, timeout int) (*testsuite.TestWorkflowEnvironment, *waitActs) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.ConfigJobID("t1", "c1")})
	w := &waitActs{attempts: map[string][]time.Time{}, applied: map[string]int{}}
	check := domain.WaitCheck{Command: "show ip ospf neighbor", Expect: "Full", Count: 1, TimeoutSeconds: timeout}
	env.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	for name, fn := range map[string]any{
		workflows.DevicePlanActivity: func(_ context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
			return workflows.DevicePlanResult{Changes: true, Plan: domain.DevicePlan{Tool: in.Call.Name, Jobs: []domain.DeviceJob{
				{NodeID: "n1", Name: "R1", Platform: "frr", Config: true, Commands: []string{"router ospf"}, Wait: []domain.WaitCheck{check}},
				{NodeID: "n2", Name: "R2", Platform: "frr", Config: true, Commands: []string{"router ospf"}, Wait: []domain.WaitCheck{check}},
				{NodeID: "n3", Name: "R3", Platform: "frr", Config: true, Commands: []string{"router ospf"}},
			}}}, nil
		},
		workflows.ReadConfigActivity:      func(context.Context, workflows.ReadConfigInput) error { return nil },
		workflows.ConfigJobStatusActivity: func(context.Context, workflows.ConfigJobStatusInput) error { return nil },
		workflows.DeviceRunActivity: func(_ context.Context, in workflows.DeviceInput) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.applied[in.Job.NodeID]++
			return nil
		},
		workflows.WaitCheckActivity: func(ctx context.Context, in workflows.WaitCheckInput) (workflows.WaitCheckResult, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.attempts[in.Job.NodeID] = append(w.attempts[in.Job.NodeID], env.Now())
			held := in.Job.NodeID == "n1" && len(w.attempts["n1"]) >= 3
			m := 0
			if held {
				m = 1
			}
			return workflows.WaitCheckResult{Matches: []int{m}, Held: []bool{held}}, nil
		},
		workflows.FinishConfigJobActivity: func(_ context.Context, in workflows.FinishConfigJobInput) (workflows.FinishConfigJobResult, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.finished = append(w.finished, in)
			return workflows.FinishConfigJobResult{Status: domain.JobPartial}, nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	return env, w
}

// After applying, each device's check runs again with a timer between attempts until it holds
// (R1, third attempt) or its timeout passes (R2); R3 has none and is not asked.
func TestConfigJobWaitsForItsChecks(t *testing.T) {
	env, w := newWaitEnv(t, 20)
	in := jobInput
	in.Approval = ""
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	require.Equal(t, map[string]int{"n1": 1, "n2": 1, "n3": 1}, w.applied, "every device is applied once")
	require.Len(t, w.attempts["n1"], 3)
	require.Empty(t, w.attempts["n3"])
	for node, at := range w.attempts {
		for i := 1; i < len(at); i++ {
			require.GreaterOrEqual(t, at[i].Sub(at[i-1]), domain.MinWaitPoll, "%s: attempts %d and %d", node, i, i+1)
		}
	}
	r2 := w.attempts["n2"]
	require.Greater(t, len(r2), 3)
	require.LessOrEqual(t, r2[len(r2)-1].Sub(r2[0]), 20*time.Second, "R2 stops at its timeout")
	require.Greater(t, r2[len(r2)-1].Sub(r2[0]), 15*time.Second, "R2 keeps trying until close to it")

	require.Len(t, w.finished, 1)
	waits := w.finished[0].Waits
	require.Len(t, waits, 2)
	require.True(t, waits["n1"][0].Held)
	require.Equal(t, 3, waits["n1"][0].Attempts)
	require.False(t, waits["n2"][0].Held)
	require.Equal(t, len(r2), waits["n2"][0].Attempts)
	require.InDelta(t, r2[len(r2)-1].Sub(r2[0]).Seconds(), waits["n2"][0].Seconds, 0.5)
}

// A plan without checks takes the path recorded before wait_for existed: no version marker, no
// timer, nothing in the finish input.
func TestConfigJobWithoutChecksDoesNotWait(t *testing.T) {
	env, w := newWaitEnv(t, 20)
	env.OnGetVersion("wait-for", workflow.DefaultVersion, 1).Never()
	in := jobInput
	in.Approval = ""
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
		return workflows.DevicePlanResult{Changes: true, Plan: domain.DevicePlan{Tool: in.Call.Name, Jobs: []domain.DeviceJob{
			{NodeID: "n3", Name: "R3", Platform: "frr", Config: true, Commands: []string{"router ospf"}}}}}, nil
	}, activity.RegisterOptions{Name: workflows.DevicePlanActivity})
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, w.attempts)
	require.Len(t, w.finished, 1)
	require.Nil(t, w.finished[0].Waits)
}
