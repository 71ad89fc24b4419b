package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

const planJSON = `{"tool":"execute_vpcs_commands","kind":"config","summary":"Send 1 line(s) to 1 device(s)","devices":[` +
	`{"node_id":"n1","name":"PC1","platform":"vpcs","lines":[{"command":"ip 10.0.0.1/24","verdict":"change"},` +
	`{"command":"quit","verdict":"blocked","reason":"it kills the node"}],` +
	`"read_command":"show ip","current_config":"NAME : PC1\nIP/MASK : 0.0.0.0/0\n"}]}`

const question = "**Approval needed** before `execute_vpcs_commands` changes the lab: send 1 line(s) to 1 device(s)."

// waitsForApproval is a configuration call's workflow: it asks, waits for the decision and
// reports it as the configuration job would.
func waitsForApproval(h *harness, in workflows.MCPCallInput) {
	if in.Standing != nil {
		h.answers(tools.Collect([]tools.Item{{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "applied by standing " + in.Standing.ApprovalID}}))(h, in)
		return
	}
	h.askApprovalWith(in, question, planJSON)
	d := <-h.wf.decided
	item := tools.Item{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "applied: ip 10.0.0.1/24; read back: IP/MASK 10.0.0.1/24; diff: +ip 10.0.0.1/24"}
	if d.D.Decision == workflows.DecisionReject {
		item = tools.Item{ID: "n1", Name: "PC1", Status: tools.StatusFailed, Error: "Nothing was done: alice rejected it. Comment: " + d.D.Comment}
	}
	h.answers(tools.Collect([]tools.Item{item}))(h, in)
}

var configArgs = func(project string) map[string]any {
	return map[string]any{"project_id": project, "device_configs": []any{map[string]any{"device_name": "PC1", "commands": []string{"ip 10.0.0.1/24"}}}}
}

// pendingAnswer reads the two-phase answer's approval.
type pendingAnswer struct {
	ApprovalID string `json:"approval_id"`
	Status     string `json:"status"`
	ExpiresAt  string `json:"expires_at"`
	Question   string `json:"question"`
}

func approvalOf(t *testing.T, out standard) pendingAnswer {
	t.Helper()
	b, err := json.Marshal(out.Meta["approval"])
	require.NoError(t, err)
	var a pendingAnswer
	require.NoError(t, json.Unmarshal(b, &a))
	require.NotEmpty(t, a.ApprovalID, "%+v", out)
	return a
}

func TestACallFromAClientWithoutElicitationAnswersAtOnceWithThePlan(t *testing.T) {
	h := newHarness(t)
	h.workflow = waitsForApproval
	cs := h.mustConnect(aliceToken)
	began := time.Now()
	res, out := call(t, cs, tools.VPCSCommandsTool, configArgs(h.project))
	require.Less(t, time.Since(began), 5*time.Second, "answered while the workflow waits")

	require.True(t, out.Success, "waiting is not a failure the model should retry: %+v", out)
	require.Len(t, out.Data, 1)
	it := out.Data[0]
	require.Equal(t, "PC1", it.Name)
	require.Equal(t, domain.JobWaiting, it.Status)
	require.Contains(t, it.Result, "ip 10.0.0.1/24    [change]")
	require.Contains(t, it.Result, "quit    [blocked, will not be sent: it kills the node]")
	require.Contains(t, it.Result, "current configuration (show ip):\nNAME : PC1\nIP/MASK : 0.0.0.0/0")
	a := approvalOf(t, out)
	require.Equal(t, domain.ApprovalPending, a.Status)
	require.Equal(t, question, a.Question, "the panel's own question")
	exp, err := time.Parse(time.RFC3339, a.ExpiresAt)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Hour), exp, time.Minute)
	next := out.Meta["next_step"].(string)
	require.Contains(t, next, "Nothing was applied")
	require.Contains(t, next, "decide_approval")
	require.Contains(t, next, a.ApprovalID)
	require.Equal(t, domain.JobWaiting, res.Meta["status"])
	require.Equal(t, a.ApprovalID, res.Meta["approval_id"])
	h.wf.mu.Lock()
	require.Empty(t, h.wf.decisions, "nothing was decided")
	h.wf.mu.Unlock()

	// The waiting call's result, fetched again, is the same plan.
	_, again := call(t, cs, callResultToolName, map[string]any{"call_id": res.Meta["call_id"]})
	require.Equal(t, out, again)

	// Approved: decide_approval returns the job's own result.
	dres, done := call(t, cs, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"})
	require.True(t, done.Success, "%+v", done)
	require.Contains(t, done.Data[0].Result, "applied: ip 10.0.0.1/24; read back")
	require.Equal(t, res.Meta["call_id"], dres.Meta["call_id"])
	h.wf.mu.Lock()
	require.Len(t, h.wf.decisions, 1)
	d := h.wf.decisions[0]
	h.wf.mu.Unlock()
	started := h.wf.calls()[0]
	require.Equal(t, "job-"+started.In.Call.TurnID, d.WorkflowID, "the Update goes to the workflow that waits")
	require.Equal(t, workflows.ApprovalDecision{ApprovalID: a.ApprovalID, Decision: workflows.DecisionApprove, UserID: h.aliceID, Username: "alice"}, d.D)

	// Deciding again changes nothing and says so.
	_, twice := call(t, cs, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "reject"})
	require.False(t, twice.Success)
	require.Contains(t, twice.Error, "already approved by alice; the first decision stands")
}

func TestARejectionReturnsTheRejectionWithItsComment(t *testing.T) {
	h := newHarness(t)
	h.workflow = waitsForApproval
	cs := h.mustConnect(aliceToken)
	_, out := call(t, cs, tools.VPCSCommandsTool, configArgs(h.project))
	a := approvalOf(t, out)
	_, rejected := call(t, cs, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "reject", "comment": "  wrong subnet  "})
	require.False(t, rejected.Success)
	require.Contains(t, rejected.Data[0].Error, "Nothing was done: alice rejected it. Comment: wrong subnet")
}

func TestAnotherUsersApprovalIsNotFound(t *testing.T) {
	h := newHarness(t)
	h.gns3.Grant(h.project, "bob")
	h.workflow = waitsForApproval
	res, out := call(t, h.mustConnect(aliceToken), tools.VPCSCommandsTool, configArgs(h.project))
	a := approvalOf(t, out)

	bob := h.mustConnect(bobToken)
	_, foreign := call(t, bob, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"})
	require.False(t, foreign.Success)
	require.Equal(t, `Approval "`+a.ApprovalID+`" not found among the approvals of your MCP calls.`, foreign.Error)
	_, unknown := call(t, bob, decideToolName, map[string]any{"approval_id": "no-such", "decision": "approve"})
	require.Equal(t, `Approval "no-such" not found among the approvals of your MCP calls.`, unknown.Error, "the same answer as for one that does not exist")
	_, fetched := call(t, bob, callResultToolName, map[string]any{"call_id": res.Meta["call_id"]})
	require.False(t, fetched.Success)
	for args, want := range map[string]string{
		`{"decision":"approve"}`:                                  "approval_id is required",
		`{"approval_id":"` + a.ApprovalID + `","decision":"yes"}`: `decision must be approve, reject or approve_all, got "yes"`,
		`{"approval_id":"` + a.ApprovalID + `","decision":"reject","comment":"` + strings.Repeat("x", 2001) + `"}`: "at most 2000 characters",
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &m))
		_, bad := call(t, h.mustConnect(aliceToken), decideToolName, m)
		require.Contains(t, bad.Error, want)
	}
	h.wf.mu.Lock()
	defer h.wf.mu.Unlock()
	require.Empty(t, h.wf.decisions, "nothing reached the workflow")
}

func TestApproveAllApprovesLaterCallsOfTheSession(t *testing.T) {
	h := newHarness(t)
	h.workflow = waitsForApproval
	cs := h.mustConnect(aliceToken)
	_, out := call(t, cs, tools.VPCSCommandsTool, configArgs(h.project))
	a := approvalOf(t, out)
	_, done := call(t, cs, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "approve_all"})
	require.True(t, done.Success, "%+v", done)
	h.wf.mu.Lock()
	require.True(t, h.wf.decisions[0].D.Standing, "approve_all is a standing approval")
	require.Equal(t, workflows.DecisionApprove, h.wf.decisions[0].D.Decision)
	h.wf.mu.Unlock()

	_, later := call(t, cs, tools.VPCSCommandsTool, configArgs(h.project))
	require.True(t, later.Success)
	require.Equal(t, "applied by standing "+a.ApprovalID, later.Data[0].Result)
	calls := h.wf.calls()
	require.Equal(t, &workflows.ApprovalOutcome{ApprovalID: a.ApprovalID, Status: domain.ApprovalApproved, DecidedBy: "alice", Standing: true}, calls[1].In.Standing)

	// Another session of the same user is asked again.
	_, other := call(t, h.mustConnect(aliceToken), tools.VPCSCommandsTool, configArgs(h.project))
	require.Equal(t, domain.JobWaiting, other.Data[0].Status)
	require.Nil(t, h.wf.calls()[2].In.Standing)
}

func TestAnUnansweredElicitationFallsBackToTheTwoPhases(t *testing.T) {
	h := newHarness(t, func(h *harness) { h.deps.ElicitTimeout = 300 * time.Millisecond })
	h.workflow = waitsForApproval
	asked := make(chan string, 4)
	// The server's cancellation of its question travels on the call's own stream, which its
	// answer may close first; the handler must not outlive the test waiting for it, or the
	// session's Close (which waits for its handlers) never returns.
	gone := make(chan struct{})
	cs := h.mustConnect(aliceToken, func(o *sdk.ClientOptions) {
		o.ElicitationHandler = func(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked <- r.Params.Message
			select { // the user never answers
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-gone:
				return nil, context.Canceled
			}
		}
	})
	t.Cleanup(func() { close(gone) }) // runs before the session's Close, registered earlier
	began := time.Now()
	_, out := call(t, cs, tools.VPCSCommandsTool, configArgs(h.project))
	require.Equal(t, question, <-asked, "asked first")
	require.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)
	a := approvalOf(t, out)
	require.Equal(t, domain.JobWaiting, out.Data[0].Status)
	_, done := call(t, cs, decideToolName, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"})
	require.True(t, done.Success, "%+v", done)

	// Dismissed without a choice: the same.
	dismissing := h.mustConnect(aliceToken, func(o *sdk.ClientOptions) {
		o.ElicitationHandler = func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
	})
	_, out = call(t, dismissing, tools.VPCSCommandsTool, configArgs(h.project))
	approvalOf(t, out)
}
