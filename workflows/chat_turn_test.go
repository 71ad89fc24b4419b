package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// fakeActs records what the workflow asked for; each test scripts the LLM's answers.
type fakeActs struct {
	mu        sync.Mutex
	llm       func(ctx context.Context, in workflows.LLMInput) (workflows.LLMResult, error)
	tool      func(ctx context.Context, in workflows.ToolInput) (workflows.ToolResult, error)
	llmCalls  []workflows.LLMInput
	toolCalls []workflows.ToolInput
	failures  []workflows.ToolFailureInput
	finalized []workflows.FinalizeInput
	titles    int
}

func (f *fakeActs) LLMCall(ctx context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
	f.mu.Lock()
	f.llmCalls = append(f.llmCalls, in)
	f.mu.Unlock()
	return f.llm(ctx, in)
}

func (f *fakeActs) RunTool(ctx context.Context, in workflows.ToolInput) (workflows.ToolResult, error) {
	f.mu.Lock()
	f.toolCalls = append(f.toolCalls, in)
	f.mu.Unlock()
	if f.tool == nil {
		return workflows.ToolResult{Success: true}, nil
	}
	return f.tool(ctx, in)
}

func (f *fakeActs) RecordToolFailure(_ context.Context, in workflows.ToolFailureInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, in)
	return nil
}

func (f *fakeActs) GenerateTitle(context.Context, workflows.TitleInput) (workflows.TitleResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.titles++
	return workflows.TitleResult{Title: "A title", Called: true, InputTokens: 7, OutputTokens: 3, ReasoningTokens: 1}, nil
}

// FinalizeTurn names the session first when asked, as the real finalizer does (with the title
// call's usage added to the turn's), and records what the turn ended with.
func (f *fakeActs) FinalizeTurn(ctx context.Context, in workflows.FinalizeInput) (workflows.FinalizeResult, error) {
	var res workflows.FinalizeResult
	if in.GenerateTitle {
		title, _ := f.GenerateTitle(ctx, workflows.TitleInput{Turn: in.Turn})
		res.TitleCalled = true
		in.LLMCalls++
		in.InputTokens += title.InputTokens
		in.OutputTokens += title.OutputTokens
		in.ReasoningTokens += title.ReasoningTokens
		in.Title = title.Title
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finalized = append(f.finalized, in)
	return res, nil
}

func newEnv(t *testing.T, f *fakeActs) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	env.RegisterActivityWithOptions(f.LLMCall, activity.RegisterOptions{Name: workflows.LLMActivity})
	env.RegisterActivityWithOptions(f.RunTool, activity.RegisterOptions{Name: workflows.ToolActivity})
	env.RegisterActivityWithOptions(f.RecordToolFailure, activity.RegisterOptions{Name: workflows.ToolFailedActivity})
	env.RegisterActivityWithOptions(f.GenerateTitle, activity.RegisterOptions{Name: workflows.TitleActivity})
	env.RegisterActivityWithOptions(f.FinalizeTurn, activity.RegisterOptions{Name: workflows.FinalizeActivity})
	return env
}

var input = workflows.ChatTurnInput{SessionID: "s1", TurnID: "t1", ProjectID: "p1", UserID: "u1", Mode: "teaching_assistant"}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.ChatTurnResult {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var r workflows.ChatTurnResult
	require.NoError(t, env.GetWorkflowResult(&r))
	return r
}

func TestToolLoopFeedsResultsBackAndFinalizes(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{InputTokens: 100, OutputTokens: 10, ReasoningTokens: 6, ToolCalls: []workflows.ToolCall{
				{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`},
				{ID: "c2", Name: "get_gns3_templates", Arguments: `{}`},
			}}, nil
		}
		return workflows.LLMResult{InputTokens: 200, OutputTokens: 20, ReasoningTokens: 4}, nil
	}
	env := newEnv(t, f)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	r := result(t, env)

	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Len(t, f.llmCalls, 2)
	require.Equal(t, 1, f.llmCalls[0].MessageIndex)
	// The two parallel tool results take slots 2 and 3, the second answer slot 4.
	require.Len(t, f.toolCalls, 2)
	idx := map[string]int{}
	for _, c := range f.toolCalls {
		idx[c.Call.ID] = c.MessageIndex
	}
	require.Equal(t, map[string]int{"c1": 2, "c2": 3}, idx)
	require.Equal(t, 4, f.llmCalls[1].MessageIndex)
	require.Len(t, f.finalized, 1)
	fin := f.finalized[0]
	require.Equal(t, domain.TurnCompleted, fin.Status)
	require.Equal(t, int64(3), fin.LLMCalls, "two answer calls and the title call")
	require.Equal(t, int64(307), fin.InputTokens)
	require.Equal(t, int64(33), fin.OutputTokens)
	require.Equal(t, int64(11), fin.ReasoningTokens, "a part of the output tokens, the title's included")
	require.Equal(t, "A title", fin.Title)
}

func TestStepLimitForcesAnAnswerInWords(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.NoTools {
			return workflows.LLMResult{}, nil
		}
		return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c", Name: "get_gns3_topology", Arguments: "{}"}}}, nil
	}
	env := newEnv(t, f)
	in := input
	in.MaxSteps = 3
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	r := result(t, env)
	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Len(t, f.llmCalls, 3)
	require.False(t, f.llmCalls[0].NoTools)
	require.False(t, f.llmCalls[1].NoTools)
	require.True(t, f.llmCalls[2].NoTools, "the last allowed step offers no tools")
	require.Len(t, f.toolCalls, 2)
}

func TestToolActivityFailureIsFedBackToTheModel(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: "start_gns3_node", Arguments: "{}"}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	f.tool = func(context.Context, workflows.ToolInput) (workflows.ToolResult, error) {
		return workflows.ToolResult{}, temporal.NewNonRetryableApplicationError("GNS3 is down", "Boom", nil)
	}
	env := newEnv(t, f)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	r := result(t, env)
	require.Equal(t, domain.TurnCompleted, r.Status, "a failing tool does not fail the turn")
	require.Len(t, f.failures, 1)
	require.Equal(t, "c1", f.failures[0].Call.ID)
	require.Equal(t, 2, f.failures[0].MessageIndex)
	require.Contains(t, f.failures[0].Error, "GNS3 is down")
	require.Len(t, f.llmCalls, 2, "the model is called again with the failure as the tool's result")
}

func TestLLMIsRetriedThenSucceeds(t *testing.T) {
	f := &fakeActs{}
	var attempts int
	f.llm = func(ctx context.Context, _ workflows.LLMInput) (workflows.LLMResult, error) {
		attempts++
		if attempts < 3 {
			return workflows.LLMResult{}, temporal.NewApplicationError("provider overloaded", domain.ErrTypeLLMUnavailable)
		}
		return workflows.LLMResult{OutputTokens: 5}, nil
	}
	env := newEnv(t, f)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	r := result(t, env)
	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Equal(t, 3, attempts)
	require.Equal(t, 1, f.llmCalls[2].MessageIndex, "every attempt writes the same message slot")
}

func TestBadAPIKeyIsNotRetriedAndFailsTheTurn(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
		return workflows.LLMResult{}, temporal.NewNonRetryableApplicationError("the provider rejected the API key", domain.ErrTypeLLMAuth, nil)
	}
	env := newEnv(t, f)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	r := result(t, env)
	require.Equal(t, domain.TurnFailed, r.Status)
	require.Len(t, f.llmCalls, 1)
	require.Len(t, f.finalized, 1)
	require.Equal(t, domain.TurnFailed, f.finalized[0].Status)
	require.Contains(t, f.finalized[0].Error, "rejected the API key")
	require.Zero(t, f.titles, "no title for a failed turn")
}

func TestCancellationFinalizesAsCancelled(t *testing.T) {
	f := &fakeActs{}
	started := make(chan struct{})
	f.llm = func(ctx context.Context, _ workflows.LLMInput) (workflows.LLMResult, error) {
		close(started)
		<-ctx.Done() // a streaming call runs until the cancellation reaches it
		return workflows.LLMResult{}, ctx.Err()
	}
	env := newEnv(t, f)
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, time.Second)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	require.True(t, env.IsWorkflowCompleted())
	<-started
	require.Len(t, f.finalized, 1)
	require.Equal(t, domain.TurnCancelled, f.finalized[0].Status)
	require.Zero(t, f.titles)
}

func TestCancellationDuringToolsFinalizesAsCancelled(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
		return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: "start_gns3_node", Arguments: "{}"}}}, nil
	}
	f.tool = func(ctx context.Context, _ workflows.ToolInput) (workflows.ToolResult, error) {
		<-ctx.Done()
		return workflows.ToolResult{}, ctx.Err()
	}
	env := newEnv(t, f)
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, time.Second)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	require.True(t, env.IsWorkflowCompleted())
	require.Len(t, f.llmCalls, 1, "no further model call after cancelling")
	require.Len(t, f.finalized, 1)
	require.Equal(t, domain.TurnCancelled, f.finalized[0].Status)
}

// An activity that stopped on the user's abort (before Temporal's own cancellation reached it)
// ends the turn as cancelled, not failed, and is not retried.
func TestAbortedActivityEndsTheTurnAsCancelled(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
		return workflows.LLMResult{}, temporal.NewNonRetryableApplicationError("the turn was aborted", domain.ErrTypeTurnAborted, nil)
	}
	env := newEnv(t, f)
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, input)
	r := result(t, env)
	require.Equal(t, domain.TurnCancelled, r.Status)
	require.Len(t, f.llmCalls, 1)
	require.Equal(t, domain.TurnCancelled, f.finalized[0].Status)
}

// A turn that only talks is one model call and one finalizer: the title is made inside the
// finalizer and no credential-renewal timer is started, since no tool will need the
// credential after the model call that read it. Both run as local activities, in the
// workflow's own task: no activity task goes through the Temporal server.
func TestATurnThatOnlyTalksRunsTwoLocalActivitiesAndNoTimer(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(context.Context, workflows.LLMInput) (workflows.LLMResult, error) {
		return workflows.LLMResult{InputTokens: 10, OutputTokens: 5}, nil
	}
	env := newEnv(t, f)
	var mu sync.Mutex
	var activities, local []string
	timers := 0
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		activities = append(activities, info.ActivityType.Name)
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		mu.Lock()
		defer mu.Unlock()
		local = append(local, info.ActivityType.Name)
	})
	env.SetOnTimerScheduledListener(func(string, time.Duration) { mu.Lock(); timers++; mu.Unlock() })
	in := input
	in.Approval, in.CredentialTTL = domain.ApprovalChanges, 2*time.Hour
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	r := result(t, env)
	require.Equal(t, int64(2), r.LLMCalls, "the answer and the title")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{workflows.LLMActivity, workflows.FinalizeActivity}, local)
	require.Empty(t, activities)
	require.Zero(t, timers)
	require.Len(t, f.finalized, 1)
	require.Equal(t, "A title", f.finalized[0].Title)
	require.Equal(t, int64(17), f.finalized[0].InputTokens)
}

// A turn that runs a tool renews its credential on the same schedule as before: half the
// credential's lifetime after the turn started, not after the tool started.
func TestTheCredentialIsRenewedHalfItsLifetimeAfterTheTurnStarted(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c", Name: "get_gns3_topology", Arguments: "{}"}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	env := newEnv(t, f)
	env.RegisterActivityWithOptions(func(context.Context, workflows.RenewCredentialInput) error { return nil },
		activity.RegisterOptions{Name: workflows.RenewCredentialActivity})
	// The first model call takes ten minutes (of the test's simulated clock).
	env.OnActivity(workflows.LLMActivity, mock.Anything, mock.Anything).After(10 * time.Minute).Return(
		func(ctx context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
			return f.LLMCall(ctx, in)
		})
	var mu sync.Mutex
	var timers []time.Duration
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { mu.Lock(); timers = append(timers, d); mu.Unlock() })
	in := input
	in.Approval, in.CredentialTTL = domain.ApprovalChanges, 2*time.Hour
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	result(t, env)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []time.Duration{50 * time.Minute}, timers, "one hour after the start, ten minutes of which had passed")
}
