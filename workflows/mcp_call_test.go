package workflows_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// mcpActs records what an MCP call ran.
type mcpActs struct {
	mu       sync.Mutex
	tools    []workflows.ToolInput
	devices  []string
	finished []workflows.FinishMCPCallInput
	toolErr  error
}

func (m *mcpActs) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterWorkflowWithOptions(workflows.MCPCall, workflow.RegisterOptions{Name: workflows.MCPCallWorkflow})
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.ToolInput) (workflows.ToolResult, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.tools = append(m.tools, in)
		return workflows.ToolResult{Success: m.toolErr == nil}, m.toolErr
	}, activity.RegisterOptions{Name: workflows.ToolActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
		return workflows.DevicePlanResult{Plan: domain.DevicePlan{Tool: in.Call.Name, Jobs: []domain.DeviceJob{
			{NodeID: "n1", Name: "PC1", Commands: []string{"show ip"}}, {NodeID: "n2", Name: "PC2", Commands: []string{"show ip"}}}}}, nil
	}, activity.RegisterOptions{Name: workflows.DevicePlanActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.DeviceInput) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.devices = append(m.devices, in.Job.NodeID+"@"+in.Turn.Origin)
		return nil
	}, activity.RegisterOptions{Name: workflows.DeviceRunActivity})
	env.RegisterActivityWithOptions(func(context.Context, workflows.DeviceFinishInput) error { return nil },
		activity.RegisterOptions{Name: workflows.DeviceFinishActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.FinishMCPCallInput) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.finished = append(m.finished, in)
		return nil
	}, activity.RegisterOptions{Name: workflows.FinishMCPCallActivity})
}

func mcpInput(tool string) workflows.MCPCallInput {
	return workflows.MCPCallInput{
		Call: workflows.WorkRef{SessionID: "mcp-session", TurnID: "call-1", ProjectID: "p1", UserID: "u1",
			Mode: domain.ModeLabAutomation, Origin: workflows.OriginMCPPrefix + "agent"},
		Tool: workflows.ToolCall{ID: "call-1", Name: tool, Arguments: "{}"},
	}
}

func TestMCPCallRunsALabToolAsOneActivityAndFinishes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	m := &mcpActs{}
	m.register(env)
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, mcpInput("get_gns3_topology"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.MCPCallResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.MCPCallCompleted, res.Status)
	require.Len(t, m.tools, 1)
	require.Equal(t, "mcp:agent", m.tools[0].Turn.Origin)
	require.Equal(t, []workflows.FinishMCPCallInput{{Call: mcpInput("").Call, Tool: m.tools[0].Call}}, m.finished)
}

func TestMCPCallFansDeviceToolsOutPerDevice(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	m := &mcpActs{}
	m.register(env)
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, mcpInput(domain.ShowCommandsTool))
	require.NoError(t, env.GetWorkflowError())
	require.ElementsMatch(t, []string{"n1@mcp:agent", "n2@mcp:agent"}, m.devices)
	require.Empty(t, m.tools)
	require.Len(t, m.finished, 1)
}

// A tool whose activity fails for good still closes the call, with the reason, so a client
// that comes back by call id learns it.
func TestMCPCallThatCannotRunStillFinishesWithTheReason(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	m := &mcpActs{toolErr: temporal.NewNonRetryableApplicationError("credentials gone", domain.ErrTypeNoCredentials, nil)}
	m.register(env)
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, mcpInput("get_gns3_topology"))
	require.NoError(t, env.GetWorkflowError())
	var res workflows.MCPCallResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, domain.MCPCallFailed, res.Status)
	require.Len(t, m.finished, 1)
	require.Equal(t, "credentials gone", m.finished[0].Error)
}

// An MCP session's approve_all, given on an earlier call, decides a later call's approval: the
// request is stored for the audit with the approval it stands on, and the tool runs unasked.
func TestMCPCallUnderTheSessionsApproveAllRunsWithoutAsking(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	m := &mcpActs{}
	m.register(env)
	j := turnApprovalActs(env)
	env.RegisterActivityWithOptions(func(context.Context, workflows.RenewCredentialInput) error { return nil },
		activity.RegisterOptions{Name: workflows.RenewCredentialActivity})
	in := mcpInput(domain.DeleteNodeTool)
	in.Approval = domain.ApprovalChanges
	in.Standing = &workflows.ApprovalOutcome{ApprovalID: "a-earlier", Status: domain.ApprovalApproved, DecidedBy: "alice", Standing: true}
	env.ExecuteWorkflow(workflows.MCPCallWorkflow, in)
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, j.requests, 1)
	require.Equal(t, "a-earlier", j.requests[0].StandingOf)
	require.Len(t, j.decisions, 1)
	require.Equal(t, domain.ApprovalApproved, j.decisions[0].Outcome.Status)
	require.Equal(t, "a-earlier", j.decisions[0].Outcome.StandingOf)
	require.Len(t, m.tools, 1, "the destructive tool ran")
}
