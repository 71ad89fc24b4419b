package durable

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The Temporal client against the SDK's mock of client.Client: what it asks Temporal, with
// which options and input, and what it makes of Temporal's answers. No server is needed.

// start is one ExecuteWorkflow the client made.
type start struct {
	opts  client.StartWorkflowOptions
	wf    any
	input any
}

// recordStarts makes c's ExecuteWorkflow answer errs in turn (nil past the end) and writes
// down every call.
func recordStarts(c *mocks.Client, errs ...error) *[]start {
	var got []start
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything).
		Return(func(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
			got = append(got, start{opts: opts, wf: wf, input: args[0]})
			if i := len(got) - 1; i < len(errs) && errs[i] != nil {
				return nil, errs[i]
			}
			return nil, nil
		})
	return &got
}

func keywordOf(t *testing.T, sa temporal.SearchAttributes, name string) string {
	t.Helper()
	v, ok := sa.GetKeyword(temporal.NewSearchAttributeKeyKeyword(name))
	require.True(t, ok, "search attribute %s is set", name)
	return v
}

var unregistered = serviceerror.NewInvalidArgument("Namespace default has no mapping defined for search attribute GNS3ProjectID")

func TestStartTurnCarriesTheSearchAttributesAndTheModel(t *testing.T) {
	c := mocks.NewClient(t)
	starts := recordStarts(c)
	in := workflows.ChatTurnInput{SessionID: "s1", TurnID: "t1", ProjectID: "p1", UserID: "u1", Mode: "teaching_assistant"}
	d := DescribeTurn(3, in, "lab2", "alice", "openai", "gpt-x")
	require.NoError(t, Temporal{Client: c}.StartTurn(context.Background(), "turn-t1", in, d))

	require.Len(t, *starts, 1)
	s := (*starts)[0]
	require.Equal(t, workflows.ChatTurnWorkflow, s.wf)
	require.Equal(t, "turn-t1", s.opts.ID)
	require.Equal(t, workflows.TaskQueue, s.opts.TaskQueue, "the default queue when none is set")
	require.True(t, s.opts.EnableEagerStart)
	require.Equal(t, d.Summary, s.opts.StaticSummary)
	require.Contains(t, d.Summary, "turn 3 of session s1")
	require.Equal(t, "p1", keywordOf(t, s.opts.TypedSearchAttributes, workflows.SearchAttrProjectID))
	require.Equal(t, "s1", keywordOf(t, s.opts.TypedSearchAttributes, workflows.SearchAttrSessionID))
	require.Equal(t, "u1", keywordOf(t, s.opts.TypedSearchAttributes, workflows.SearchAttrUserID))
	require.Equal(t, map[string]any{"project_id": "p1", "session_id": "s1", "user_id": "u1", "turn_id": "t1"}, s.opts.Memo)
	got := s.input.(workflows.ChatTurnInput)
	require.True(t, got.SearchAttributes, "the turn is told it carries them")
	require.Equal(t, "gpt-x", got.Model)
}

func TestStartTurnOnAClusterWithoutTheAttributesStartsAgainWithoutThem(t *testing.T) {
	c := mocks.NewClient(t)
	starts := recordStarts(c, unregistered)
	in := workflows.ChatTurnInput{SessionID: "s1", TurnID: "t1", ProjectID: "p1", UserID: "u1"}
	require.NoError(t, Temporal{Client: c, TaskQueue: "q2"}.StartTurn(context.Background(), "turn-t1", in, TurnDescription{Model: "m"}))

	require.Len(t, *starts, 2)
	first, second := (*starts)[0], (*starts)[1]
	require.Equal(t, 3, first.opts.TypedSearchAttributes.Size())
	require.True(t, first.input.(workflows.ChatTurnInput).SearchAttributes)
	require.Equal(t, 0, second.opts.TypedSearchAttributes.Size(), "the second start carries none")
	require.False(t, second.input.(workflows.ChatTurnInput).SearchAttributes, "and the turn knows it")
	require.Equal(t, "q2", second.opts.TaskQueue)
	require.Equal(t, first.opts.ID, second.opts.ID)
}

func TestAStartRefusedForAnotherReasonIsNotRetried(t *testing.T) {
	c := mocks.NewClient(t)
	refused := serviceerror.NewInvalidArgument("WorkflowId is not set")
	starts := recordStarts(c, refused)
	err := Temporal{Client: c}.StartTurn(context.Background(), "turn-t1", workflows.ChatTurnInput{}, TurnDescription{})
	require.ErrorIs(t, err, refused)
	require.Len(t, *starts, 1)
}

func TestStartMCPCallIsFindableByItsTool(t *testing.T) {
	c := mocks.NewClient(t)
	starts := recordStarts(c, unregistered)
	in := workflows.MCPCallInput{Call: workflows.WorkRef{SessionID: "mcp-s", TurnID: "call-1", ProjectID: "p1", UserID: "u1", Mode: "lab_automation_assistant"},
		Tool: workflows.ToolCall{ID: "call-1", Name: "get_gns3_topology", Arguments: "{}"}}
	require.NoError(t, Temporal{Client: c}.StartMCPCall(context.Background(), "mcp-call-x", in, "alice", "ide"))

	require.Len(t, *starts, 2)
	with, without := (*starts)[0], (*starts)[1]
	require.Equal(t, workflows.MCPCallWorkflow, with.wf)
	require.Equal(t, "get_gns3_topology", keywordOf(t, with.opts.TypedSearchAttributes, workflows.SearchAttrToolName))
	require.Equal(t, "mcp-s", keywordOf(t, with.opts.TypedSearchAttributes, workflows.SearchAttrSessionID))
	require.Equal(t, "ide", with.opts.Memo["client"])
	require.Equal(t, "call-1", with.opts.Memo["call_id"])
	require.Contains(t, with.opts.StaticSummary, "MCP call get_gns3_topology from ide, user alice")
	require.True(t, with.input.(workflows.MCPCallInput).SearchAttributes)
	require.False(t, without.input.(workflows.MCPCallInput).SearchAttributes)
	require.Equal(t, 0, without.opts.TypedSearchAttributes.Size())
}

func TestStartExerciseLeavesARunningOneAsItIs(t *testing.T) {
	c := mocks.NewClient(t)
	starts := recordStarts(c, serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", ""))
	in := workflows.ExerciseInput{ExerciseID: "exercise-1", SessionID: "s1", ProjectID: "p1", UserID: "u1"}
	require.NoError(t, Temporal{Client: c}.StartExercise(context.Background(), in), "a retried start is not an error")
	require.Len(t, *starts, 1)
	s := (*starts)[0]
	require.Equal(t, "exercise-1", s.opts.ID)
	require.Equal(t, enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, s.opts.WorkflowIDReusePolicy)
	require.Equal(t, workflows.ExerciseWorkflow, s.wf)

	other := errors.New("frontend unavailable")
	c2 := mocks.NewClient(t)
	recordStarts(c2, other)
	require.ErrorIs(t, Temporal{Client: c2}.StartExercise(context.Background(), in), other)
}

// answerUpdate makes c's UpdateWorkflow answer: updateErr from the call itself, or else a
// handle whose Get answers getErr or fills in result.
func answerUpdate[T any](t *testing.T, c *mocks.Client, updateErr, getErr error, result T) *client.UpdateWorkflowOptions {
	var asked client.UpdateWorkflowOptions
	call := c.On("UpdateWorkflow", mock.Anything, mock.Anything).Run(func(args mock.Arguments) {
		asked = args.Get(1).(client.UpdateWorkflowOptions)
	})
	if updateErr != nil {
		call.Return(nil, updateErr)
		return &asked
	}
	h := mocks.NewWorkflowUpdateHandle(t)
	h.On("Get", mock.Anything, mock.Anything).Return(func(_ context.Context, ptr any) error {
		if getErr != nil {
			return getErr
		}
		*ptr.(*T) = result
		return nil
	})
	call.Return(h, nil)
	return &asked
}

func TestDecideApprovalSendsTheUpdateAndMapsItsErrors(t *testing.T) {
	d := workflows.ApprovalDecision{ApprovalID: "a1", Decision: workflows.DecisionApprove, UserID: "u1", Username: "alice"}
	want := workflows.ApprovalOutcome{ApprovalID: "a1", Status: domain.ApprovalApproved, DecidedBy: "alice"}

	c := mocks.NewClient(t)
	asked := answerUpdate(t, c, nil, nil, want)
	got, err := Temporal{Client: c}.DecideApproval(context.Background(), "job-1", d)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, "job-1", asked.WorkflowID)
	require.Equal(t, workflows.ApprovalUpdate, asked.UpdateName)
	require.Equal(t, []any{d}, asked.Args)
	require.Equal(t, client.WorkflowUpdateStageCompleted, asked.WaitForStage, "it answers once the workflow stored the decision")

	for name, c := range map[string]struct {
		updateErr, getErr error
		check             func(*testing.T, error)
	}{
		"the workflow is gone": {updateErr: serviceerror.NewNotFound("workflow not found"), check: func(t *testing.T, err error) {
			require.ErrorIs(t, err, ErrNotWaiting)
		}},
		"the validator refused": {updateErr: temporal.NewApplicationError("approval a1 was already decided: approved by bob", ""), check: func(t *testing.T, err error) {
			var refused *DecisionRefusedError
			require.ErrorAs(t, err, &refused)
			require.Equal(t, "approval a1 was already decided: approved by bob", refused.Message)
		}},
		"the handler failed after acceptance": {getErr: temporal.NewApplicationError("storing the decision failed", "x"), check: func(t *testing.T, err error) {
			var refused *DecisionRefusedError
			require.ErrorAs(t, err, &refused)
			require.Equal(t, "storing the decision failed", refused.Message)
		}},
		"Temporal is unreachable": {updateErr: serviceerror.NewUnavailable("connection refused"), check: func(t *testing.T, err error) {
			var refused *DecisionRefusedError
			require.False(t, errors.As(err, &refused))
			require.NotErrorIs(t, err, ErrNotWaiting)
			require.ErrorContains(t, err, "connection refused")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			mc := mocks.NewClient(t)
			answerUpdate(t, mc, c.updateErr, c.getErr, workflows.ApprovalOutcome{})
			_, err := Temporal{Client: mc}.DecideApproval(context.Background(), "job-1", d)
			require.Error(t, err)
			c.check(t, err)
		})
	}
}

func TestAskExerciseTellsAnExerciseThatIsOver(t *testing.T) {
	req := workflows.ExerciseRequest{CredentialKey: "k1"}
	c := mocks.NewClient(t)
	asked := answerUpdate(t, c, nil, nil, workflows.ExerciseAnswer{Fixed: true, Checks: 2})
	got, err := Temporal{Client: c}.AskExercise(context.Background(), "exercise-1", workflows.ExerciseCheckUpdate, req)
	require.NoError(t, err)
	require.Equal(t, workflows.ExerciseAnswer{Fixed: true, Checks: 2}, got)
	require.Equal(t, workflows.ExerciseCheckUpdate, asked.UpdateName)

	for name, c := range map[string]struct {
		err      error
		over     bool
		contains string
	}{
		"gone":                 {err: serviceerror.NewNotFound("workflow not found"), over: true},
		"refused as over":      {err: temporal.NewApplicationError("the exercise ended", domain.ErrTypeExerciseOver), over: true},
		"refused for a reason": {err: temporal.NewApplicationError("a check is already running", "Busy"), contains: "a check is already running"},
		"unreachable":          {err: serviceerror.NewUnavailable("connection refused"), contains: "connection refused"},
	} {
		t.Run(name, func(t *testing.T) {
			mc := mocks.NewClient(t)
			answerUpdate(t, mc, c.err, nil, workflows.ExerciseAnswer{})
			_, err := Temporal{Client: mc}.AskExercise(context.Background(), "exercise-1", workflows.ExerciseHintUpdate, req)
			require.Equal(t, c.over, errors.Is(err, ErrExerciseOver), "%v", err)
			if c.contains != "" {
				require.ErrorContains(t, err, c.contains)
			}
		})
	}
}

func TestCancelTurnOfAnEndedWorkflowIsNotAnError(t *testing.T) {
	c := mocks.NewClient(t)
	c.On("CancelWorkflow", mock.Anything, "turn-ended", "").Return(serviceerror.NewNotFound("workflow not found")).Once()
	c.On("CancelWorkflow", mock.Anything, "turn-running", "").Return(nil).Once()
	down := serviceerror.NewUnavailable("connection refused")
	c.On("CancelWorkflow", mock.Anything, "turn-unreachable", "").Return(down).Once()
	tc := Temporal{Client: c}
	require.NoError(t, tc.CancelTurn(context.Background(), "turn-ended"))
	require.NoError(t, tc.CancelTurn(context.Background(), "turn-running"))
	require.ErrorIs(t, tc.CancelTurn(context.Background(), "turn-unreachable"), down)
}

func TestTurnEndedReadsTheExecutionStatus(t *testing.T) {
	described := func(s enums.WorkflowExecutionStatus) *workflowservice.DescribeWorkflowExecutionResponse {
		return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: s}}
	}
	c := mocks.NewClient(t)
	c.On("DescribeWorkflowExecution", mock.Anything, "running", "").Return(described(enums.WORKFLOW_EXECUTION_STATUS_RUNNING), nil)
	c.On("DescribeWorkflowExecution", mock.Anything, "completed", "").Return(described(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED), nil)
	c.On("DescribeWorkflowExecution", mock.Anything, "terminated", "").Return(described(enums.WORKFLOW_EXECUTION_STATUS_TERMINATED), nil)
	c.On("DescribeWorkflowExecution", mock.Anything, "never", "").Return(nil, serviceerror.NewNotFound("workflow not found"))
	down := serviceerror.NewUnavailable("connection refused")
	c.On("DescribeWorkflowExecution", mock.Anything, "unreachable", "").Return(nil, down)
	tc := Temporal{Client: c}
	for id, want := range map[string][2]bool{
		"running": {false, true}, "completed": {true, true}, "terminated": {true, true}, "never": {true, false},
	} {
		ended, started, err := tc.TurnEnded(context.Background(), id)
		require.NoError(t, err, id)
		require.Equal(t, want, [2]bool{ended, started}, id)
	}
	ended, _, err := tc.TurnEnded(context.Background(), "unreachable")
	require.ErrorIs(t, err, down)
	require.False(t, ended, "an unreadable workflow is never taken for ended")
}

func TestWaitWaitsForTheWorkflowsEnd(t *testing.T) {
	c := mocks.NewClient(t)
	run := mocks.NewWorkflowRun(t)
	failed := errors.New("workflow execution error")
	run.On("Get", mock.Anything, nil).Return(failed)
	c.On("GetWorkflow", mock.Anything, "mcp-call-1", "").Return(run)
	require.ErrorIs(t, Temporal{Client: c}.Wait(context.Background(), "mcp-call-1"), failed)
}
