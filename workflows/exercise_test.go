package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// exerciseActs stands in for the exercise's activities: the lab reads as fixed once fixed is set.
type exerciseActs struct {
	mu       sync.Mutex
	fixed    bool
	verifies []workflows.ExerciseVerifyInput
	progress []workflows.ExerciseProgressInput
	finished []workflows.ExerciseProgressInput
}

func newExerciseEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *exerciseActs) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	a := &exerciseActs{}
	env.RegisterWorkflowWithOptions(workflows.Exercise, workflow.RegisterOptions{Name: workflows.ExerciseWorkflow})
	reg := func(name string, fn any) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	reg(workflows.ExerciseVerifyActivity, func(_ context.Context, in workflows.ExerciseVerifyInput) (workflows.ExerciseVerifyResult, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.verifies = append(a.verifies, in)
		if a.fixed {
			return workflows.ExerciseVerifyResult{Fixed: true, Passed: 1, Total: 1}, nil
		}
		return workflows.ExerciseVerifyResult{Passed: 0, Total: 1}, nil
	})
	reg(workflows.ExerciseHintActivity, func(_ context.Context, in workflows.ExerciseHintInput) (workflows.ExerciseHintResult, error) {
		hints := []string{"look at the PCs", "look at PC1's address"}
		l := min(in.Level, len(hints)-1)
		return workflows.ExerciseHintResult{Hint: hints[l], Last: l == len(hints)-1}, nil
	})
	reg(workflows.ExerciseProgressActivity, func(_ context.Context, in workflows.ExerciseProgressInput) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.progress = append(a.progress, in)
		return nil
	})
	reg(workflows.ExerciseFinishActivity, func(_ context.Context, in workflows.ExerciseProgressInput) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.finished = append(a.finished, in)
		return nil
	})
	return env, a
}

type exerciseUpdate struct {
	rejected error
	answer   workflows.ExerciseAnswer
	err      error
	done     bool
}

func askExercise(env *testsuite.TestWorkflowEnvironment, name string, req workflows.ExerciseRequest) *exerciseUpdate {
	r := &exerciseUpdate{}
	env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
		OnReject: func(err error) { r.rejected = err },
		OnAccept: func() {},
		OnComplete: func(v any, err error) {
			if a, ok := v.(workflows.ExerciseAnswer); ok {
				r.answer = a
			}
			r.err, r.done = err, true
		},
	}, req)
	return r
}

var exerciseIn = workflows.ExerciseInput{ExerciseID: "exercise-s1-1", SessionID: "s1", ProjectID: "p1", UserID: "u1", TTL: 72 * time.Hour}

func TestExerciseCheckHintFix(t *testing.T) {
	env, a := newExerciseEnv(t)
	var first, hint1, hint2, hint3, fixed, late *exerciseUpdate
	env.RegisterDelayedCallback(func() {
		first = askExercise(env, workflows.ExerciseCheckUpdate, workflows.ExerciseRequest{CredentialKey: "k1"})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		hint1 = askExercise(env, workflows.ExerciseHintUpdate, workflows.ExerciseRequest{})
	}, 24*time.Hour)
	env.RegisterDelayedCallback(func() {
		hint2 = askExercise(env, workflows.ExerciseHintUpdate, workflows.ExerciseRequest{})
	}, 25*time.Hour)
	env.RegisterDelayedCallback(func() {
		hint3 = askExercise(env, workflows.ExerciseHintUpdate, workflows.ExerciseRequest{})
	}, 26*time.Hour)
	env.RegisterDelayedCallback(func() {
		a.mu.Lock()
		a.fixed = true
		a.mu.Unlock()
		fixed = askExercise(env, workflows.ExerciseCheckUpdate, workflows.ExerciseRequest{CredentialKey: "k2"})
	}, 48*time.Hour)
	env.RegisterDelayedCallback(func() {
		late = askExercise(env, workflows.ExerciseHintUpdate, workflows.ExerciseRequest{})
	}, 48*time.Hour+time.Second)
	env.ExecuteWorkflow(workflows.ExerciseWorkflow, exerciseIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.ExerciseAnswer
	require.NoError(t, env.GetWorkflowResult(&res))

	require.NoError(t, first.err)
	require.Equal(t, domain.ExerciseOpen, first.answer.Status)
	require.False(t, first.answer.Fixed)
	require.Contains(t, first.answer.Message, "Not yet: 0 of 1")
	require.Equal(t, "look at the PCs", hint1.answer.Hint)
	require.Equal(t, "look at PC1's address", hint2.answer.Hint, "hints escalate")
	require.Equal(t, "look at PC1's address", hint3.answer.Hint, "the strongest hint stays the last")
	require.Equal(t, 3, hint3.answer.HintsUsed)
	require.NoError(t, fixed.err)
	require.True(t, fixed.answer.Fixed)
	require.Equal(t, domain.ExerciseFixed, fixed.answer.Status)
	require.Equal(t, 2, fixed.answer.Checks)
	require.Equal(t, domain.ExerciseFixed, res.Status)
	if late != nil && late.rejected == nil {
		require.Error(t, late.err, "an exercise that is over takes no more requests")
	}

	require.Len(t, a.verifies, 2)
	require.Equal(t, "k1", a.verifies[0].CredentialKey)
	require.Equal(t, 2, a.verifies[1].Check, "each check has its own number")
	require.Len(t, a.finished, 1)
	require.Equal(t, domain.ExerciseFixed, a.finished[0].Status)
	require.Equal(t, 3, a.finished[0].HintsUsed)
}

func TestExerciseExpires(t *testing.T) {
	env, a := newExerciseEnv(t)
	env.ExecuteWorkflow(workflows.ExerciseWorkflow, exerciseIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.ExerciseAnswer
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.ExerciseExpired, res.Status)
	require.Len(t, a.finished, 1)
	require.Equal(t, domain.ExerciseExpired, a.finished[0].Status)
	require.Empty(t, a.verifies)
}

func TestExerciseGiveUpAndRefusals(t *testing.T) {
	env, a := newExerciseEnv(t)
	var noKey, gaveUp *exerciseUpdate
	env.RegisterDelayedCallback(func() {
		noKey = askExercise(env, workflows.ExerciseCheckUpdate, workflows.ExerciseRequest{})
		gaveUp = askExercise(env, workflows.ExerciseGiveUpUpdate, workflows.ExerciseRequest{})
	}, time.Hour)
	env.ExecuteWorkflow(workflows.ExerciseWorkflow, exerciseIn)
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, noKey.rejected, "a check without the asker's credential is refused before it runs")
	require.NoError(t, gaveUp.err)
	require.Equal(t, domain.ExerciseGivenUp, gaveUp.answer.Status)
	var res workflows.ExerciseAnswer
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.ExerciseGivenUp, res.Status)
	require.Empty(t, a.verifies)
	require.Len(t, a.finished, 1)
}
