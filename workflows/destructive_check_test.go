package workflows_test

import (
	"context"
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

// A destructive call its check refuses ends at once: nobody is asked, the tool never runs, no
// timer waits, and the model's next step reads the result the check stored. A call beside it
// that can run is checked, then asked about as before.
func TestDestructiveCallThatCannotRunIsRefusedWithoutAsking(t *testing.T) {
	f := firstStepCalls(
		workflows.ToolCall{ID: "c_nope", Name: domain.RestoreSnapshotTool, Arguments: `{"snapshot":"nope"}`},
		workflows.ToolCall{ID: "c_pc1", Name: domain.DeleteNodeTool, Arguments: `{"node_ids":["PC1"]}`})
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	j.refuse = map[string]bool{"c_nope": true}
	var timers []string
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers = append(timers, d.String()) })
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c_pc1"), Decision: workflows.DecisionApprove, UserID: "u1", Username: "alice"})
	}, time.Minute)
	runLabTurn(env)
	r := result(t, env)
	require.Equal(t, domain.TurnCompleted, r.Status)
	require.ElementsMatch(t, []string{"check:c_nope", "check:c_pc1", "ask", "decided:approved"}, j.events())
	require.Less(t, indexOf(j.events(), "check:c_pc1"), indexOf(j.events(), "ask"), "checked before it was asked")
	require.Len(t, j.requests, 1)
	require.Equal(t, "c_pc1", j.requests[0].Call.ID, "only the call that can run is asked about")
	require.Len(t, f.toolCalls, 1)
	require.Equal(t, "c_pc1", f.toolCalls[0].Call.ID, "the refused call never runs")
	require.Empty(t, f.failures, "the check stored the refused call's result itself")
	require.Len(t, f.llmCalls, 2, "the model reads both results")
	require.Len(t, timers, 1, "only the approval of the call that can run waits: %v", timers)
}

// Refused alone, the call costs the turn no wait at all; a check that fails for good is the
// call's failure, stored for the model as any other, and nobody is asked either.
func TestARefusedOrFailedCheckNeverAsks(t *testing.T) {
	for name, j := range map[string]*jobActs{
		"refused": {refuse: map[string]bool{"c1": true}},
		"failed":  {checkErr: temporal.NewNonRetryableApplicationError("the turn's GNS3 credential is gone", domain.ErrTypeNoCredentials, nil)},
	} {
		t.Run(name, func(t *testing.T) {
			f := firstStepCalls(workflows.ToolCall{ID: "c1", Name: domain.DeleteLinkTool, Arguments: `{"links":[{"link_id":"x"}]}`})
			env := newEnv(t, f)
			j.registerApprovals(env)
			start := env.Now()
			runLabTurn(env)
			require.Equal(t, domain.TurnCompleted, result(t, env).Status)
			require.Equal(t, []string{"check:c1"}, j.events())
			require.Empty(t, f.toolCalls)
			require.Equal(t, start, env.Now(), "no timer ran")
			if j.checkErr != nil {
				require.Len(t, f.failures, 1)
				require.Contains(t, f.failures[0].Error, "credential is gone")
			} else {
				require.Empty(t, f.failures)
			}
		})
	}
}

// An MCP call takes the same runner: refused by its check, it finishes at once with the stored
// result, and no approval is asked.
func TestMCPCallThatCannotRunIsRefusedWithoutAsking(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	m := &mcpActs{}
	m.register(env)
	j := turnApprovalActs(env)
	j.refuse = map[string]bool{"call-1": true}
	env.RegisterActivityWithOptions(func(context.Context, workflows.RenewCredentialInput) error { return nil },
		activity.RegisterOptions{Name: workflows.RenewCredentialActivity})
	in := mcpInput(domain.RestoreSnapshotTool)
	in.Approval = domain.ApprovalChanges
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, in)
	require.NoError(t, env.GetWorkflowError())
	var res workflows.MCPCallResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.MCPCallCompleted, res.Status, "the tool answered, with its failure")
	require.Equal(t, []string{"check:call-1"}, j.events())
	require.Empty(t, m.tools)
	require.Len(t, m.finished, 1)
	require.Empty(t, m.finished[0].Error, "the result is the check's, already stored")
}

// A workflow recorded before the check asks without it, so its history replays: the check
// runs only on the path GetVersion records.
func TestTheCheckIsBehindItsVersion(t *testing.T) {
	f := firstStepCalls(workflows.ToolCall{ID: "c1", Name: domain.StopNodeTool, Arguments: `{"node_ids":["PC1"]}`})
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	j.refuse = map[string]bool{"c1": true}
	env.OnGetVersion("destructive-check", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c1"), Decision: workflows.DecisionReject, UserID: "u1", Username: "alice"})
	}, time.Minute)
	runLabTurn(env)
	require.Equal(t, domain.TurnCompleted, result(t, env).Status)
	require.Equal(t, []string{"ask", "decided:rejected"}, j.events(), "the old path asks without checking")
}

// firstStepCalls is a turn whose model asks for calls in its first step and then answers.
func firstStepCalls(calls ...workflows.ToolCall) *fakeActs {
	return &fakeActs{llm: func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: calls}, nil
		}
		return workflows.LLMResult{}, nil
	}}
}

// runLabTurn runs the test turn in lab automation mode under --approval changes.
func runLabTurn(env *testsuite.TestWorkflowEnvironment) {
	in := input
	in.Mode = domain.ModeLabAutomation
	in.Approval = domain.ApprovalChanges
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
}
