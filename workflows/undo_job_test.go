package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Under "never" an undo asks only when a device changed since the job it undoes (or that
// cannot be told): the check runs after the read before, and before anything is applied.
func TestUndoUnderNeverAsksOnlyWhenADeviceChangedSinceTheJob(t *testing.T) {
	for _, c := range []struct {
		name    string
		changed []string
		fail    bool
		asks    bool
	}{
		{name: "unchanged", asks: false},
		{name: "changed by hand", changed: []string{"PC2"}, asks: true},
		{name: "check failed", fail: true, asks: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, j := newJobEnv(t)
			j.undo = &domain.UndoOf{JobID: "config-job-t0-c0", Nodes: map[string]string{"n1": "n1", "n2": "n2"}}
			env.RegisterActivityWithOptions(func(_ context.Context, in workflows.UndoCheckInput) (workflows.UndoCheckResult, error) {
				j.add("check_undo")
				require.Equal(t, "config-job-t0-c0", in.Plan.Undo.JobID)
				if c.fail {
					return workflows.UndoCheckResult{}, temporal.NewNonRetryableApplicationError("database down", "test", errors.New("down"))
				}
				return workflows.UndoCheckResult{Changed: c.changed}, nil
			}, activity.RegisterOptions{Name: workflows.CheckUndoActivity})
			env.RegisterDelayedCallback(func() {
				decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "approve", UserID: "u1", Username: "alice"})
			}, time.Minute)
			in := jobInput
			in.Call.Name, in.Approval = domain.UndoConfigTool, domain.ApprovalNever
			env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
			jobResult(t, env)
			ev := j.events()
			require.Equal(t, "check_undo", ev[4], "after both reads before: %v", ev)
			require.Equal(t, c.asks, contains(ev, "ask"), "%v", ev)
			require.Contains(t, ev, "apply:n1")
			if c.asks {
				require.Less(t, index(ev, "decided:approved"), index(ev, "apply:n1"), "nothing is applied before the decision")
			}
		})
	}
}

// Any other job under "never" runs no check at all, as before undo existed.
func TestOtherJobsRunNoUndoCheck(t *testing.T) {
	env, j := newJobEnv(t)
	in := jobInput
	in.Approval = domain.ApprovalNever
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
	jobResult(t, env)
	require.NotContains(t, j.events(), "check_undo")
	require.NotContains(t, j.events(), "ask")
}

func contains(list []string, s string) bool { return index(list, s) >= 0 }

func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
