package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// savePointActs records a save point's steps ("plan", "save", "pause", "resume", "finish") and
// answers each as told.
type savePointActs struct {
	mu       sync.Mutex
	log      []string
	plan     workflows.SavePointPlan
	refused  string // the save's refusal
	pauseErr error
	resumes  []workflows.SavePointInput
	finished []workflows.SavePointFinish
	// cancelDuringPause, when set, is called while the pause runs.
	duringPause func()
}

func (s *savePointActs) add(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, e)
}

func (s *savePointActs) events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

var pcs = []domain.SavePointNode{{NodeID: "n1", Name: "PC1", NodeType: "vpcs", Status: "started"}, {NodeID: "n2", Name: "PC2", NodeType: "vpcs", Status: "started"}}

func (s *savePointActs) register(env *testsuite.TestWorkflowEnvironment) {
	for name, fn := range map[string]any{
		workflows.PlanSavePointActivity: func(_ context.Context, in workflows.SavePointInput) (workflows.SavePointPlan, error) {
			s.add("plan")
			return s.plan, nil
		},
		workflows.SaveDevicesActivity: func(_ context.Context, in workflows.SavePointInput) (workflows.SavePointSaved, error) {
			s.add("save:" + in.Name)
			return workflows.SavePointSaved{Refused: s.refused}, nil
		},
		workflows.PauseSavePointActivity: func(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointPaused, error) {
			s.add("pause")
			if s.duringPause != nil {
				s.duringPause()
				<-ctx.Done()
				return workflows.SavePointPaused{}, ctx.Err()
			}
			return workflows.SavePointPaused{SnapshotID: "snap-1", CreatedAt: 1796540920, PausedMS: 900}, s.pauseErr
		},
		workflows.ResumeSavePointActivity: func(_ context.Context, in workflows.SavePointInput) (workflows.SavePointResumed, error) {
			s.add("resume")
			s.mu.Lock()
			s.resumes = append(s.resumes, in)
			s.mu.Unlock()
			return workflows.SavePointResumed{}, nil
		},
		workflows.FinishSavePointActivity: func(_ context.Context, in workflows.SavePointFinish) (workflows.SavePointResult, error) {
			s.add("finish")
			s.mu.Lock()
			s.finished = append(s.finished, in)
			s.mu.Unlock()
			taken := in.Paused != nil && in.Paused.Refused == "" && in.Failure == ""
			msg := "taken"
			if !taken {
				msg = "not taken: " + in.Failure
				if in.Saved != nil && in.Saved.Refused != "" {
					msg = in.Saved.Refused
				}
			}
			return workflows.SavePointResult{Taken: taken, Message: msg}, nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

var snapshotCall = workflows.ToolCall{ID: "c_snap", Name: domain.CreateSnapshotTool, Arguments: `{"name":"before"}`}

// Under --approval changes a snapshot that must pause running nodes asks first; approved, the
// nodes that ran are in the history before any stops, saved, paused and answered for.
func TestSavePointAsksBeforeItPausesARunningLab(t *testing.T) {
	f := firstStepCalls(snapshotCall)
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs}}
	s.register(env)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"plan"}, s.events(), "nothing saved or paused while it waits")
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c_snap"), Decision: workflows.DecisionApprove, UserID: "u1", Username: "alice"})
	}, time.Minute)
	runLabTurn(env)
	require.Equal(t, domain.TurnCompleted, result(t, env).Status)
	require.Equal(t, []string{"ask", "decided:approved"}, j.events())
	require.Equal(t, domain.ApprovalKindDestructive, j.requests[0].Kind)
	require.Equal(t, []string{"plan", "save:before", "pause", "finish"}, s.events())
	require.Empty(t, f.toolCalls, "the snapshot is not taken by the plain tool activity")
	fin := s.finished[0]
	require.Equal(t, pcs, fin.Running)
	require.Equal(t, "snap-1", fin.Paused.SnapshotID)
	require.Equal(t, 2, fin.MessageIndex, "the result goes to the call's slot")
	require.Len(t, f.llmCalls, 2)
}

// Rejected, nothing is saved or paused and the model reads why; a lab where nothing runs (the
// plan answered it) asks nobody; a save that was refused pauses nothing.
func TestSavePointRejectedNothingRunningOrRefused(t *testing.T) {
	t.Run("rejected", func(t *testing.T) {
		f := firstStepCalls(snapshotCall)
		env := newEnv(t, f)
		turnApprovalActs(env)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs}}
		s.register(env)
		env.RegisterDelayedCallback(func() {
			decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c_snap"), Decision: workflows.DecisionReject,
				Comment: "not during the lab", UserID: "u1", Username: "alice"})
		}, time.Minute)
		runLabTurn(env)
		require.Equal(t, domain.TurnCompleted, result(t, env).Status)
		require.Equal(t, []string{"plan"}, s.events())
		require.Len(t, f.failures, 1)
		require.Contains(t, f.failures[0].Error, "not during the lab")
		require.Contains(t, f.failures[0].Error, "Nothing was saved and nothing was paused.")
	})
	t.Run("nothing runs", func(t *testing.T) {
		f := firstStepCalls(snapshotCall)
		env := newEnv(t, f)
		j := turnApprovalActs(env)
		s := &savePointActs{plan: workflows.SavePointPlan{Done: true}}
		s.register(env)
		start := env.Now()
		runLabTurn(env)
		require.Equal(t, domain.TurnCompleted, result(t, env).Status)
		require.Equal(t, []string{"plan"}, s.events())
		require.Empty(t, j.events(), "nobody is asked")
		require.Equal(t, start, env.Now(), "no timer ran")
	})
	t.Run("a device could not save", func(t *testing.T) {
		f := firstStepCalls(snapshotCall)
		env := newEnv(t, f)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs}, refused: "PC2's console is busy"}
		s.register(env)
		in := input
		in.Mode = domain.ModeLabAutomation
		env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
		require.Equal(t, domain.TurnCompleted, result(t, env).Status)
		require.Equal(t, []string{"plan", "save:before", "finish"}, s.events(), "nothing is paused")
		require.Equal(t, "PC2's console is busy", s.finished[0].Saved.Refused)
	})
}

// A pause whose attempts all failed is followed by a resume that starts again what ran, and the
// answer says so; a turn cancelled during the pause still resumes and answers.
func TestAPauseThatFailsIsResumed(t *testing.T) {
	t.Run("failed", func(t *testing.T) {
		f := firstStepCalls(snapshotCall)
		env := newEnv(t, f)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs},
			pauseErr: temporal.NewNonRetryableApplicationError("GNS3 went away", "Boom", nil)}
		s.register(env)
		in := input
		in.Mode = domain.ModeLabAutomation
		env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
		require.Equal(t, domain.TurnCompleted, result(t, env).Status)
		require.Equal(t, []string{"plan", "save:before", "pause", "resume", "finish"}, s.events())
		require.Equal(t, pcs, s.resumes[0].Running, "the resume starts what the plan recorded")
		require.Contains(t, s.finished[0].Failure, "GNS3 went away")
		require.NotNil(t, s.finished[0].Resumed)
	})
	t.Run("cancelled", func(t *testing.T) {
		f := firstStepCalls(snapshotCall)
		env := newEnv(t, f)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs}}
		s.duringPause = func() { env.CancelWorkflow() }
		s.register(env)
		in := input
		in.Mode = domain.ModeLabAutomation
		env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
		require.True(t, env.IsWorkflowCompleted())
		require.Equal(t, []string{"plan", "save:before", "pause", "resume", "finish"}, s.events())
		require.Len(t, f.finalized, 1)
		require.Equal(t, domain.TurnCancelled, f.finalized[0].Status)
	})
}

// An injection turn saves its lab first, without asking, before the model is called; a lab it
// cannot save is not broken: the turn fails saying why, and the model is never called.
func TestInjectionTurnTakesItsSavePointFirst(t *testing.T) {
	injection := input
	injection.Mode = domain.ModeTroubleshootingInjection
	injection.Approval, injection.SkipApproval = domain.ApprovalChanges, true
	t.Run("taken", func(t *testing.T) {
		f := &fakeActs{llm: func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
			return workflows.LLMResult{}, nil
		}}
		env := newEnv(t, f)
		j := turnApprovalActs(env)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "exercise-s1-1-start", Running: pcs}}
		s.register(env)
		env.ExecuteWorkflow(workflows.ChatTurnWorkflow, injection)
		require.Equal(t, domain.TurnCompleted, result(t, env).Status)
		require.Equal(t, []string{"plan", "save:exercise-s1-1-start", "pause", "finish"}, s.events())
		require.Empty(t, j.events(), "nobody is asked")
		require.True(t, s.finished[0].Injection)
		require.Equal(t, workflows.InjectionSavePointCallID, s.finished[0].Call.ID)
		require.Len(t, f.llmCalls, 1)
	})
	t.Run("refused", func(t *testing.T) {
		f := &fakeActs{llm: func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
			return workflows.LLMResult{}, nil
		}}
		env := newEnv(t, f)
		s := &savePointActs{plan: workflows.SavePointPlan{Name: "exercise-s1-1-start", Running: pcs}, refused: "No snapshot was taken: R1 could not be saved"}
		s.register(env)
		env.ExecuteWorkflow(workflows.ChatTurnWorkflow, injection)
		r := result(t, env)
		require.Equal(t, domain.TurnFailed, r.Status)
		require.Contains(t, r.Error, "Nothing was injected: the lab could not be saved first")
		require.Contains(t, r.Error, "R1 could not be saved")
		require.Empty(t, f.llmCalls)
	})
}

// Workflows recorded before save points take a snapshot the way they did: the injection's one
// activity, the tool's one activity, and nobody is asked.
func TestSavePointsAreBehindTheirVersion(t *testing.T) {
	f := firstStepCalls(snapshotCall)
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	s := &savePointActs{}
	s.register(env)
	var injected []string
	env.RegisterActivityWithOptions(func(context.Context, workflows.InjectionSnapshotInput) error {
		injected = append(injected, "snapshot")
		return nil
	}, activity.RegisterOptions{Name: workflows.SnapshotInjectionActivity})
	env.OnGetVersion("save-point", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	in := input
	in.Mode = domain.ModeTroubleshootingInjection
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	require.Equal(t, domain.TurnCompleted, result(t, env).Status)
	require.Equal(t, []string{"snapshot"}, injected)
	require.Empty(t, s.events())
	require.Empty(t, j.events())
	require.Len(t, f.toolCalls, 1)
	require.Equal(t, "c_snap", f.toolCalls[0].Call.ID)
}

// An MCP call takes the same runner: asked under "changes", then paused and answered.
func TestMCPSnapshotOfARunningLabAsks(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	m := &mcpActs{}
	m.register(env)
	j := turnApprovalActs(env)
	s := &savePointActs{plan: workflows.SavePointPlan{Name: "before", Running: pcs}}
	s.register(env)
	env.RegisterActivityWithOptions(func(context.Context, workflows.RenewCredentialInput) error { return nil },
		activity.RegisterOptions{Name: workflows.RenewCredentialActivity})
	in := mcpInput(domain.CreateSnapshotTool)
	in.Approval = domain.ApprovalChanges
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("call-1", "call-1"), Decision: workflows.DecisionApprove, UserID: "u1", Username: "alice"})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, in)
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"ask", "decided:approved"}, j.events())
	require.Equal(t, []string{"plan", "save:before", "pause", "finish"}, s.events())
	require.Empty(t, m.tools)
	require.Len(t, m.finished, 1)
	require.Empty(t, m.finished[0].Error)
}
