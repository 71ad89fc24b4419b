package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// resetActs stand in for a reset's activities: the approval's, the restore's and the answer's.
type resetActs struct {
	asked     []workflows.ApprovalRequest
	restores  int
	answers   []workflows.ExerciseTurnFinishInput
	decisions []string
}

func (r *resetActs) register(env *testsuite.TestWorkflowEnvironment) {
	for name, fn := range map[string]any{
		workflows.RequestApprovalActivity: func(_ context.Context, in workflows.ApprovalRequest) error {
			r.asked = append(r.asked, in)
			return nil
		},
		workflows.RecordDecisionActivity: func(_ context.Context, in workflows.DecisionRecord) error {
			r.decisions = append(r.decisions, in.Outcome.Status)
			return nil
		},
		workflows.ExerciseResetActivity: func(_ context.Context, in workflows.ExerciseResetInput) (workflows.ExerciseResetResult, error) {
			r.restores++
			return workflows.ExerciseResetResult{Restored: true, Message: "The lab was reset to its snapshot."}, nil
		},
		workflows.ExerciseTurnFinishActivity: func(_ context.Context, in workflows.ExerciseTurnFinishInput) error {
			r.answers = append(r.answers, in)
			return nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

func resetRequest(turn, approval string) workflows.ExerciseRequest {
	return workflows.ExerciseRequest{TurnID: turn, Snapshot: "snap-1", Approval: approval, ApprovalTimeout: time.Hour}
}

// Under "changes" a reset asks: rejected, nothing is restored and the exercise goes on (a second
// reset is refused only while the first is under way); approved, the snapshot is restored, the
// exercise ends as reset, and each reset's turn gets its answer.
func TestExerciseResetWaitsForItsDecision(t *testing.T) {
	env, a := newExerciseEnv(t)
	r := &resetActs{}
	r.register(env)
	var first, during, bad, second *exerciseUpdate
	env.RegisterDelayedCallback(func() {
		bad = askExercise(env, workflows.ExerciseResetUpdate, workflows.ExerciseRequest{TurnID: "t2"})
		first = askExercise(env, workflows.ExerciseResetUpdate, resetRequest("t2", domain.ApprovalChanges))
	}, time.Minute)
	env.RegisterDelayedCallback(func() {
		during = askExercise(env, workflows.ExerciseResetUpdate, resetRequest("t3", domain.ApprovalChanges))
		require.Len(t, r.asked, 1)
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t2", workflows.ResetCallID), Decision: "reject", UserID: "u1", Username: "alice"})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Zero(t, r.restores, "a rejected reset restores nothing")
		second = askExercise(env, workflows.ExerciseResetUpdate, resetRequest("t4", domain.ApprovalChanges))
	}, 3*time.Minute)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t4", workflows.ResetCallID), Decision: "approve", UserID: "u1", Username: "alice"})
	}, 4*time.Minute)
	env.ExecuteWorkflow(workflows.ExerciseWorkflow, exerciseIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.ExerciseAnswer
	require.NoError(t, env.GetWorkflowResult(&res))

	require.ErrorContains(t, bad.rejected, "needs its turn and the exercise's snapshot")
	require.NoError(t, first.rejected)
	require.ErrorContains(t, during.rejected, "already under way")
	require.NoError(t, second.rejected)
	require.Equal(t, domain.ExerciseReset, res.Status)
	require.Equal(t, 1, r.restores)
	require.Equal(t, []string{domain.ApprovalRejected, domain.ApprovalApproved}, r.decisions)
	require.Len(t, r.asked, 2)
	require.Equal(t, domain.RestoreSnapshotTool, r.asked[0].Call.Name)
	require.Equal(t, domain.ApprovalKindDestructive, r.asked[0].Kind)
	require.Equal(t, "t2", r.asked[0].Turn.TurnID, "the question goes to the reset's own turn")
	require.Len(t, r.answers, 2)
	require.Contains(t, r.answers[0].Content, "alice rejected it. The lab was not reset; the exercise goes on.")
	require.Equal(t, domain.ExerciseOpen, r.answers[0].Status)
	require.Equal(t, "The lab was reset to its snapshot.", r.answers[1].Content)
	require.Equal(t, domain.ExerciseReset, r.answers[1].Status)
	require.Equal(t, domain.ExerciseReset, a.finished[0].Status)
}

// Under any other setting a reset restores at once, asking nobody.
func TestExerciseResetUnderConfigAsksNobody(t *testing.T) {
	env, _ := newExerciseEnv(t)
	r := &resetActs{}
	r.register(env)
	env.RegisterDelayedCallback(func() {
		askExercise(env, workflows.ExerciseResetUpdate, resetRequest("t2", domain.ApprovalConfig))
	}, time.Minute)
	env.ExecuteWorkflow(workflows.ExerciseWorkflow, exerciseIn)
	var res workflows.ExerciseAnswer
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.ExerciseReset, res.Status)
	require.Empty(t, r.asked)
	require.Equal(t, 1, r.restores)
}
