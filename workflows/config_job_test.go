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

// jobActs stands in for the configuration job's activities and records the order of events,
// which is what these tests are about: nothing reaches a device before a decision.
type jobActs struct {
	mu        sync.Mutex
	log       []string
	changes   bool
	undo      *domain.UndoOf // the plan's, when the job is an undo
	requests  []workflows.ApprovalRequest
	decisions []workflows.DecisionRecord
	finished  []workflows.FinishConfigJobInput
	failures  []workflows.ToolFailureInput
	// refuse names the destructive calls whose check finds they cannot run; checkErr fails
	// every check.
	refuse   map[string]bool
	checkErr error
}

func (j *jobActs) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.log = append(j.log, s)
}

func (j *jobActs) events() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.log...)
}

func (j *jobActs) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	for name, fn := range map[string]any{
		workflows.DevicePlanActivity: func(_ context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
			j.add("plan")
			return workflows.DevicePlanResult{Changes: j.changes, Plan: domain.DevicePlan{Tool: in.Call.Name, Jobs: []domain.DeviceJob{
				{NodeID: "n1", Name: "PC1", Platform: "vpcs", Commands: []string{"ip 10.0.0.1/24"}},
				{NodeID: "n2", Name: "PC2", Platform: "vpcs", Commands: []string{"ip 10.0.0.2/24"}},
			}, Undo: j.undo}}, nil
		},
		workflows.ReadConfigActivity: func(_ context.Context, in workflows.ReadConfigInput) error {
			j.add("read_" + in.Phase + ":" + in.Job.NodeID)
			return nil
		},
		workflows.DeviceRunActivity: func(_ context.Context, in workflows.DeviceInput) error {
			j.add("apply:" + in.Job.NodeID)
			return nil
		},
		workflows.DeviceFinishActivity: func(context.Context, workflows.DeviceFinishInput) error {
			j.add("device_finish")
			return nil
		},
		workflows.ConfigJobStatusActivity: func(_ context.Context, in workflows.ConfigJobStatusInput) error {
			j.add("status:" + in.Status)
			return nil
		},
		workflows.FinishConfigJobActivity: func(_ context.Context, in workflows.FinishConfigJobInput) (workflows.FinishConfigJobResult, error) {
			j.mu.Lock()
			j.finished = append(j.finished, in)
			j.mu.Unlock()
			j.add("finish")
			return workflows.FinishConfigJobResult{Status: "done"}, nil
		},
		workflows.ToolFailedActivity: func(_ context.Context, in workflows.ToolFailureInput) error {
			j.mu.Lock()
			j.failures = append(j.failures, in)
			j.mu.Unlock()
			j.add("tool_failed")
			return nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	j.registerApprovals(env)
}

var jobInput = workflows.ConfigJobInput{
	Turn: workflows.WorkRef{SessionID: "s1", TurnID: "t1", ProjectID: "p1", UserID: "u1", Mode: "lab_automation_assistant"},
	Call: workflows.ToolCall{ID: "c1", Name: domain.VPCSCommandsTool, Arguments: "{}"}, MessageIndex: 2,
	Approval: domain.ApprovalChanges, ApprovalTimeout: 30 * time.Minute,
}

func newJobEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *jobActs) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.ConfigJobID("t1", "c1")})
	j := &jobActs{changes: true}
	j.register(env)
	return env, j
}

type updateResult struct {
	rejected error
	accepted bool
	outcome  workflows.ApprovalOutcome
	err      error
}

func decide(env *testsuite.TestWorkflowEnvironment, d workflows.ApprovalDecision) *updateResult {
	r := &updateResult{}
	env.UpdateWorkflow(workflows.ApprovalUpdate, "", &testsuite.TestUpdateCallback{
		OnReject: func(err error) { r.rejected = err },
		OnAccept: func() { r.accepted = true },
		OnComplete: func(v any, err error) {
			if o, ok := v.(workflows.ApprovalOutcome); ok {
				r.outcome = o
			}
			r.err = err
		},
	}, d)
	return r
}

var approvalID = workflows.ApprovalID("t1", "c1")

func jobResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.ConfigJobResult {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var r workflows.ConfigJobResult
	require.NoError(t, env.GetWorkflowResult(&r))
	return r
}

func TestConfigJobAppliesOnlyAfterApproval(t *testing.T) {
	env, j := newJobEnv(t)
	var res *updateResult
	env.RegisterDelayedCallback(func() {
		ev := j.events()
		require.Len(t, ev, 6, "while it waits, nothing has been applied: %v", ev)
		require.Equal(t, []string{"plan", "status:planning"}, ev[:2])
		require.ElementsMatch(t, []string{"read_before:n1", "read_before:n2"}, ev[2:4])
		require.Equal(t, []string{"status:waiting_approval", "ask"}, ev[4:])
		res = decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "approve", Comment: "go", UserID: "u1", Username: "alice"})
	}, 10*time.Minute)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	r := jobResult(t, env)

	require.True(t, res.accepted)
	require.NoError(t, res.err)
	require.Equal(t, domain.ApprovalApproved, res.outcome.Status)
	require.Equal(t, domain.ApprovalApproved, r.Approval.Status)
	ev := j.events()
	require.ElementsMatch(t, []string{"read_before:n1", "read_before:n2"}, ev[2:4])
	require.Equal(t, []string{"status:waiting_approval", "ask", "decided:approved", "status:applying"}, ev[4:8],
		"the decision is recorded before anything is applied")
	require.ElementsMatch(t, []string{"apply:n1", "apply:n2"}, ev[8:10])
	require.ElementsMatch(t, []string{"read_after:n1", "read_after:n2"}, ev[10:12])
	require.Equal(t, "finish", ev[12])
	require.Len(t, j.requests, 1)
	req := j.requests[0]
	require.Equal(t, approvalID, req.ApprovalID)
	require.Equal(t, workflows.ConfigJobID("t1", "c1"), req.JobID)
	require.NotNil(t, req.Plan)
	require.Len(t, req.Plan.Jobs, 2)
	require.Equal(t, "alice", j.decisions[0].Outcome.DecidedBy)
	require.True(t, j.finished[0].Applied)
}

func TestConfigJobRejectedSendsNothingAndTellsTheModelWhy(t *testing.T) {
	env, j := newJobEnv(t)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "reject", Comment: "use 10.9.0.0/24 instead", UserID: "u1", Username: "alice"})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	r := jobResult(t, env)
	require.Equal(t, domain.ApprovalRejected, r.Approval.Status)
	for _, e := range j.events() {
		require.NotContains(t, e, "apply", "a rejected job sends nothing")
		require.NotContains(t, e, "read_after")
	}
	require.Len(t, j.finished, 1)
	require.False(t, j.finished[0].Applied)
	msg := workflows.RejectionMessage(j.finished[0].Approval)
	require.Contains(t, msg, "alice rejected it")
	require.Contains(t, msg, "use 10.9.0.0/24 instead")
}

// Nobody answers: the timer (skipped ahead by the test environment) expires the approval.
func TestConfigJobExpiresWithoutAnAnswer(t *testing.T) {
	env, j := newJobEnv(t)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	r := jobResult(t, env)
	require.Equal(t, domain.ApprovalExpired, r.Approval.Status)
	require.Contains(t, j.events(), "decided:expired")
	for _, e := range j.events() {
		require.NotContains(t, e, "apply")
	}
	require.False(t, j.finished[0].Applied)
	// A decision after expiry is refused before it reaches the history.
}

func TestTheValidatorRefusesBadAndSecondDecisions(t *testing.T) {
	env, j := newJobEnv(t)
	var bad, foreign, unknown, first, second *updateResult
	env.RegisterDelayedCallback(func() {
		bad = decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "maybe", UserID: "u1"})
		foreign = decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "approve", UserID: "mallory"})
		unknown = decide(env, workflows.ApprovalDecision{ApprovalID: "no-such-approval", Decision: "approve", UserID: "u1"})
		first = decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "reject", UserID: "u1", Username: "alice"})
		second = decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: "approve", UserID: "u1", Username: "alice"})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	r := jobResult(t, env)

	require.ErrorContains(t, bad.rejected, "decision must be")
	require.ErrorContains(t, foreign.rejected, "owner")
	require.ErrorContains(t, unknown.rejected, "not waiting")
	require.NoError(t, first.rejected)
	require.ErrorContains(t, second.rejected, "already decided: rejected by alice")
	require.Equal(t, domain.ApprovalRejected, r.Approval.Status, "the first decision stands")
	require.Len(t, j.decisions, 1)
}

// A VPCS call that only pings changes nothing: it runs at once, without approval or reads.
func TestConfigJobWithoutChangesAsksNothing(t *testing.T) {
	env, j := newJobEnv(t)
	j.changes = false
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	jobResult(t, env)
	ev := j.events()
	require.Equal(t, "plan", ev[0])
	require.ElementsMatch(t, []string{"apply:n1", "apply:n2"}, ev[1:3])
	require.Equal(t, []string{"device_finish"}, ev[3:])
}

// Under "never" a job still reads before and after, but asks nobody.
func TestConfigJobUnderNeverDoesNotWait(t *testing.T) {
	env, j := newJobEnv(t)
	in := jobInput
	in.Approval = domain.ApprovalNever
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
	jobResult(t, env)
	require.NotContains(t, j.events(), "ask")
	require.Contains(t, j.events(), "apply:n1")
	require.Contains(t, j.events(), "read_after:n2")
}

// The turn asks before a destructive lab tool; rejected, the tool never runs and the model
// reads the refusal as the tool's result.
func TestDestructiveToolWaitsForApproval(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{
				{ID: "c1", Name: "delete_gns3_node", Arguments: `{"node_ids":["PC1"]}`},
				{ID: "c2", Name: "get_gns3_topology", Arguments: `{}`},
			}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c1"), Decision: "reject", Comment: "keep PC1", UserID: "u1", Username: "alice"})
	}, time.Minute)
	in := input
	in.Mode = "lab_automation_assistant"
	in.Approval = domain.ApprovalChanges
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	r := result(t, env)
	require.Equal(t, "completed", r.Status)
	require.Len(t, j.requests, 1)
	require.Equal(t, domain.ApprovalKindDestructive, j.requests[0].Kind)
	require.Equal(t, "default-test-workflow-id", j.requests[0].WorkflowID, "the turn itself waits (the test environment names it)")
	require.Len(t, f.toolCalls, 1, "only the topology read ran")
	require.Equal(t, "c2", f.toolCalls[0].Call.ID)
	require.Len(t, f.failures, 1)
	require.Equal(t, "c1", f.failures[0].Call.ID)
	require.Contains(t, f.failures[0].Error, "keep PC1")
}

// A turn that waits three hours for a decision renews its GNS3 credential every half-lifetime
// meanwhile, and stops renewing once it ends (the finalizer then removes the credential).
func TestLongWaitRenewsTheCredentialUntilTheTurnEnds(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: "stop_gns3_node", Arguments: `{"node_ids":["PC1"]}`}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	env := newEnv(t, f)
	var mu sync.Mutex
	var renewals []time.Time
	finishedAt := time.Time{}
	turnApprovalActs(env)
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.RenewCredentialInput) error {
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, time.Hour, in.TTL)
		renewals = append(renewals, env.Now())
		return nil
	}, activity.RegisterOptions{Name: workflows.RenewCredentialActivity})
	start := env.Now()
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c1"), Decision: "approve", UserID: "u1", Username: "alice"})
	}, 3*time.Hour)
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		if info.ActivityType.Name == workflows.FinalizeActivity {
			finishedAt = env.Now()
		}
	})
	in := input
	in.Mode = "lab_automation_assistant"
	in.Approval = domain.ApprovalChanges
	in.ApprovalTimeout = 5 * time.Hour
	in.CredentialTTL = time.Hour
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	r := result(t, env)
	require.Equal(t, "completed", r.Status)
	require.Len(t, f.toolCalls, 1, "approved, the tool ran")
	require.GreaterOrEqual(t, len(renewals), 5, "renewed about every 30 minutes during the 3-hour wait")
	for i, at := range renewals {
		require.Equal(t, time.Duration(i+1)*30*time.Minute, at.Sub(start))
		require.False(t, at.After(finishedAt), "no renewal after the turn ended")
	}
}

// The turn is aborted while its job waits: the wait ends, the approval is recorded as rejected
// ("the turn was aborted"), nothing is applied and the job still stores a result.
func TestConfigJobCancelledWhileWaitingSendsNothing(t *testing.T) {
	env, j := newJobEnv(t)
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, 5*time.Minute)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError(), "the job ends cancelled")
	require.Contains(t, j.events(), "decided:rejected")
	for _, e := range j.events() {
		require.NotContains(t, e, "apply")
	}
	require.Len(t, j.finished, 1)
	require.False(t, j.finished[0].Applied)
	require.Equal(t, "the turn was aborted", j.decisions[0].Outcome.Comment)
}

// A job started after the turn's "approve all" asks nobody: its approval is stored, decided by
// the standing decision and named after it, and the lines go out.
func TestConfigJobUnderAStandingApprovalAsksNobody(t *testing.T) {
	env, j := newJobEnv(t)
	in := jobInput
	in.Standing = &workflows.ApprovalOutcome{ApprovalID: "a-first", Status: domain.ApprovalApproved, DecidedBy: "alice", Standing: true}
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, in)
	r := jobResult(t, env)
	require.Equal(t, domain.ApprovalApproved, r.Approval.Status)
	require.Equal(t, "a-first", r.Approval.StandingOf)
	require.Len(t, j.requests, 1, "the approval is stored for the audit")
	require.Equal(t, "a-first", j.requests[0].StandingOf)
	require.Len(t, j.decisions, 1)
	require.Equal(t, "alice", j.decisions[0].Outcome.DecidedBy)
	require.Equal(t, "a-first", j.decisions[0].Outcome.StandingOf)
	ev := j.events()
	require.Contains(t, ev, "apply:n1")
	require.Less(t, indexOf(ev, "decided:approved"), indexOf(ev, "apply:n1"), "decided before anything is sent: %v", ev)
}

// "approve all" on a job's question comes back in its result, the reply is kept for the
// transcript at the call's slot, and the question carried that slot too.
func TestApproveAllIsInTheJobsResult(t *testing.T) {
	env, j := newJobEnv(t)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: approvalID, Decision: workflows.DecisionApprove, Standing: true,
			Reply: "approve all", UserID: "u1", Username: "alice"})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.ConfigJobWorkflow, jobInput)
	r := jobResult(t, env)
	require.True(t, r.Approval.Standing)
	require.Equal(t, 2, j.requests[0].MessageIndex)
	require.Len(t, j.decisions, 1)
	require.Equal(t, "approve all", j.decisions[0].Reply)
	require.Equal(t, 2, j.decisions[0].MessageIndex)
}

// A destructive tool after an "approve all" in the same turn runs without asking; before it,
// the first one was asked.
func TestApproveAllCoversTheTurnsLaterDestructiveTools(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		switch in.Step {
		case 1:
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: "stop_gns3_node", Arguments: `{"node_ids":["PC1"]}`}}}, nil
		case 2:
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c2", Name: "delete_gns3_node", Arguments: `{"node_ids":["PC1"]}`}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	env.RegisterDelayedCallback(func() {
		decide(env, workflows.ApprovalDecision{ApprovalID: workflows.ApprovalID("t1", "c1"), Decision: workflows.DecisionApprove, Standing: true,
			UserID: "u1", Username: "alice"})
	}, time.Minute)
	in := input
	in.Mode = "lab_automation_assistant"
	in.Approval = domain.ApprovalChanges
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	require.Equal(t, "completed", result(t, env).Status)
	require.Len(t, f.toolCalls, 2, "both ran")
	require.Len(t, j.requests, 2, "both approvals are stored")
	require.Empty(t, j.requests[0].StandingOf, "the first was asked")
	require.Equal(t, workflows.ApprovalID("t1", "c1"), j.requests[1].StandingOf, "the second was decided by the first's approve all")
	require.Len(t, j.decisions, 2)
	require.Equal(t, domain.ApprovalApproved, j.decisions[1].Outcome.Status)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// turnApprovalActs records a turn's approval requests and decisions (a destructive tool's gate
// runs in the turn itself).
func turnApprovalActs(env *testsuite.TestWorkflowEnvironment) *jobActs {
	j := &jobActs{}
	j.registerApprovals(env)
	return j
}

// registerApprovals records destructive calls' checks ("check:<call id>"), approval requests
// ("ask") and decisions ("decided:<status>").
func (j *jobActs) registerApprovals(env *testsuite.TestWorkflowEnvironment) {
	for name, fn := range map[string]any{
		workflows.CheckDestructiveActivity: func(_ context.Context, in workflows.ToolInput) (workflows.DestructiveCheckResult, error) {
			j.add("check:" + in.Call.ID)
			j.mu.Lock()
			defer j.mu.Unlock()
			return workflows.DestructiveCheckResult{Refused: j.refuse[in.Call.ID]}, j.checkErr
		},
		workflows.RequestApprovalActivity: func(_ context.Context, in workflows.ApprovalRequest) error {
			j.mu.Lock()
			j.requests = append(j.requests, in)
			j.mu.Unlock()
			j.add("ask")
			return nil
		},
		workflows.RecordDecisionActivity: func(_ context.Context, in workflows.DecisionRecord) error {
			j.mu.Lock()
			j.decisions = append(j.decisions, in)
			j.mu.Unlock()
			j.add("decided:" + in.Outcome.Status)
			return nil
		},
	} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// An injection turn skips approvals whatever the operator's setting: its destructive tool runs
// at once and nobody is asked.
func TestSkipApprovalRunsDestructiveToolsWithoutAsking(t *testing.T) {
	f := &fakeActs{}
	f.llm = func(_ context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
		if in.Step == 1 {
			return workflows.LLMResult{ToolCalls: []workflows.ToolCall{{ID: "c1", Name: domain.DeleteNodeTool, Arguments: `{"node_ids":["PC1"]}`}}}, nil
		}
		return workflows.LLMResult{}, nil
	}
	env := newEnv(t, f)
	j := turnApprovalActs(env)
	in := input
	in.Mode = domain.ModeLabAutomation
	in.Approval = domain.ApprovalChanges
	in.SkipApproval = true
	env.ExecuteWorkflow(workflows.ChatTurnWorkflow, in)
	r := result(t, env)
	require.Equal(t, domain.TurnCompleted, r.Status)
	require.Empty(t, j.requests)
	require.Len(t, f.toolCalls, 1)
	require.Equal(t, "c1", f.toolCalls[0].Call.ID)
}
