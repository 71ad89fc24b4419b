package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func replayAndSave(t *testing.T, env *e2eenv.Env, workflowID, fixture string) {
	t.Helper()
	hist := closedHistory(t, env, workflowID)
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	replayer.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	replayer.RegisterWorkflowWithOptions(workflows.Exercise, workflow.RegisterOptions{Name: workflows.ExerciseWorkflow})
	replayer.RegisterWorkflowWithOptions(workflows.MCPCall, workflow.RegisterOptions{Name: workflows.MCPCallWorkflow})
	require.NoError(t, replayer.ReplayWorkflowHistory(nil, hist), workflowID)
	if os.Getenv("GNS3COPILOT_WRITE_REPLAY") == "1" {
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("..", "workflows", "testdata", fixture), b, 0o644))
	}
}

// vpcsEnv is a copilot in lab automation mode with n real VPCS PCs (PC1…) in its project.
func vpcsEnv(t *testing.T, n int, opts e2eenv.Options) (*e2eenv.Env, *vpcslab.Lab) {
	t.Helper()
	lab := vpcslab.Start(t, n)
	opts.Mode = "lab_automation_assistant"
	env := e2eenv.Start(t, opts)
	env.LLM.SetHandler(titleReplies("Approvals"))
	for i, node := range lab.Nodes {
		nd := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: pcName(i), X: i * 100, Status: "started"})
		env.GNS3.SetConsole(nd.ID, "127.0.0.1", node.ConsolePort)
	}
	return env, lab
}

func pcName(i int) string { return "PC" + string(rune('1'+i)) }

func vpcsCall(id string, devs map[string][]string) fakeopenai.ToolCall {
	var cfgs []map[string]any
	for _, name := range []string{"PC1", "PC2", "PC3"} {
		if cmds, ok := devs[name]; ok {
			cfgs = append(cfgs, map[string]any{"device_name": name, "commands": cmds})
		}
	}
	b, _ := json.Marshal(map[string]any{"device_configs": cfgs})
	return fakeopenai.ToolCall{ID: id, Name: "execute_vpcs_commands", Arguments: string(b)}
}

// until reads frames up to and including the first of the given type.
func until(t *testing.T, s *e2eenv.Stream, event string) []e2eenv.Frame {
	t.Helper()
	return s.Until(t, func(f e2eenv.Frame) bool { return f.Event == event })
}

type approvalJSON struct {
	ApprovalID string `json:"approval_id"`
	ToolCallID string `json:"tool_call_id"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	ExpiresAt  string `json:"expires_at"`
	DecidedBy  string `json:"decided_by"`
	Comment    string `json:"comment"`
	CreatedAt  string `json:"created_at"`
	Standing   bool   `json:"standing"`
	StandingOf string `json:"standing_of"`
	Plan       struct {
		Devices []struct {
			Name          string `json:"name"`
			CurrentConfig string `json:"current_config"`
			ReadCommand   string `json:"read_command"`
			Lines         []struct{ Command, Verdict string }
		} `json:"devices"`
	} `json:"plan"`
}

func approvalOf(t *testing.T, f e2eenv.Frame) approvalJSON {
	t.Helper()
	raw, err := json.Marshal(f.Data["approval"])
	require.NoError(t, err)
	var a approvalJSON
	require.NoError(t, json.Unmarshal(raw, &a), f.Raw)
	return a
}

// showIP asks a real VPCS what it is, over its console, as a person would check.
func showIP(t *testing.T, node *vpcslab.Node) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := devices.ProfileByName("vpcs")
	require.NoError(t, err)
	s, err := devices.Open(ctx, node.Addr(), p, devices.Options{})
	require.NoError(t, err)
	defer s.Close()
	r, err := s.Run(ctx, "show ip")
	require.NoError(t, err)
	return r.Output
}

func linesSent(t *testing.T, env *e2eenv.Env) []models.DeviceCommand {
	t.Helper()
	db, err := models.Open("", env.Config.DataDir)
	require.NoError(t, err)
	recs, err := models.DeviceRepository{DB: db}.Audit(context.Background(), env.ProjectID, 1000)
	require.NoError(t, err)
	var out []models.DeviceCommand
	for _, r := range recs {
		if r.Seq >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// The model asks to readdress two real PCs: the turn stops and shows the plan with each PC's
// current configuration; nothing reaches a PC until the owner approves; other people, unknown
// approvals and bad decisions change nothing; afterwards the result and the audit show what
// really changed, per device.
func TestConfigurationWaitsForApprovalAndReportsWhatChanged(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes"})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.7.0.1/24", "set pcname web1"}, "PC2": {"ip 10.7.0.2/24"}})),
		fakeopenai.Text("Both PCs are addressed."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address the PCs", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	sessionID, _ := startedIDs(t, seen)
	require.Equal(t, "pending", a.Status)
	require.Equal(t, "c_ip", a.ToolCallID)
	require.Equal(t, "config", a.Kind)
	require.NotEmpty(t, a.ExpiresAt)
	require.Len(t, a.Plan.Devices, 2)
	pc1 := a.Plan.Devices[0]
	require.Equal(t, "PC1", pc1.Name)
	require.Equal(t, "show ip", pc1.ReadCommand)
	require.Contains(t, pc1.CurrentConfig, "IP/MASK", "the plan shows the configuration read before asking")
	require.Equal(t, "ip 10.7.0.1/24", pc1.Lines[0].Command)
	require.Equal(t, "change", pc1.Lines[0].Verdict)
	require.Empty(t, linesSent(t, env), "nothing is sent before the decision")
	require.NotContains(t, showIP(t, lab.Nodes[0]), "10.7.0.1")
	require.Equal(t, 1.0, value(scrape(t, env), "gns3_copilot_approvals", map[string]string{"kind": "config", "status": "pending"}),
		"/metrics shows the approval waiting")

	path := env.ChatPath("/sessions/" + sessionID + "/approvals/" + a.ApprovalID)
	// Someone else, even with access to the project, cannot see or decide it.
	env.GNS3.AddUser("bob", "bob-token", false)
	env.GNS3.Grant(env.ProjectID, "bob")
	code, body := env.DoAs("bob-token", http.MethodPost, path, map[string]any{"decision": "approve"})
	requireError(t, code, body, http.StatusNotFound, "not found")
	code, body = env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/00000000-0000-0000-0000-000000000000"), map[string]any{"decision": "approve"})
	requireError(t, code, body, http.StatusNotFound, "not found")
	code, body = env.Do(http.MethodPost, path, map[string]any{"decision": "yes please"})
	requireError(t, code, body, http.StatusUnprocessableEntity, "approve")
	code, body = env.Do(http.MethodPost, path, map[string]any{"decision": "approve", "comment": strings.Repeat("x", 2001)})
	requireError(t, code, body, http.StatusUnprocessableEntity, "comment")
	require.Empty(t, linesSent(t, env))

	// A reloaded page finds the pending approval.
	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/approvals"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list []approvalJSON
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list, 1)
	require.Equal(t, "pending", list[0].Status)

	code, body = env.Do(http.MethodPost, path, map[string]any{"decision": "approve", "comment": "looks right"})
	require.Equal(t, http.StatusOK, code, string(body))
	var decided approvalJSON
	require.NoError(t, json.Unmarshal(body, &decided))
	require.Equal(t, "approved", decided.Status)
	require.Equal(t, e2eenv.Username, decided.DecidedBy)
	// Deciding again (through the other prefix) is refused, and the first decision stands.
	code, body = env.Do(http.MethodPost, "/v3/copilot/projects/"+env.ProjectID+"/chat/sessions/"+sessionID+"/approvals/"+a.ApprovalID,
		map[string]any{"decision": "reject"})
	requireError(t, code, body, http.StatusConflict, "already approved")

	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	require.Contains(t, e2eenv.Types(rest), "approval_resolved")
	fams := scrape(t, env)
	require.Equal(t, 1.0, value(fams, "gns3_copilot_approvals", map[string]string{"kind": "config", "status": "approved"}))
	require.Equal(t, 0.0, value(fams, "gns3_copilot_approvals", map[string]string{"status": "pending"}))
	ends := deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	out := ends[0]
	require.True(t, out.Success, "%+v", out)
	status, res, _ := itemByName(t, out, "PC1")
	require.Equal(t, "success", status)
	require.Contains(t, res, "+ IP/MASK : 10.7.0.1/24", "the diff shows what really changed")
	require.Contains(t, res, "- IP/MASK : 0.0.0.0/0")
	require.Contains(t, res, "+ NAME : web1")
	require.Contains(t, showIP(t, lab.Nodes[0]), "10.7.0.1/24")
	require.Contains(t, showIP(t, lab.Nodes[1]), "10.7.0.2/24")

	// The audit: the job, its approval, and the device records with the reads before and after.
	code, body = env.Do(http.MethodGet, env.ChatPath("/config-jobs"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var jobs []struct {
		JobID    string `json:"job_id"`
		Status   string `json:"status"`
		Approval *struct {
			Status string `json:"status"`
		} `json:"approval"`
		Changes []struct {
			Name  string   `json:"name"`
			Added []string `json:"added"`
		} `json:"changes"`
		Records []struct {
			DeviceName, Kind, Command, Status, Output string
		} `json:"records"`
	}
	require.NoError(t, json.Unmarshal(body, &jobs))
	require.Len(t, jobs, 1)
	require.Contains(t, jobs[0].JobID, "config-job-")
	require.Equal(t, "completed", jobs[0].Status)
	require.Equal(t, "approved", jobs[0].Approval.Status)
	kinds := map[string]int{}
	for _, r := range jobs[0].Records {
		kinds[r.Kind]++
	}
	require.Equal(t, map[string]int{"read_before": 2, "read_after": 2, "line": 3}, kinds)
	code, body = env.DoAs("bob-token", http.MethodGet, env.ChatPath("/config-jobs"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	require.JSONEq(t, `[]`, string(body), "a user sees only their own jobs")

	// The job can be found in Temporal by project, session, user and tool.
	desc, err := env.Service.Temporal().DescribeWorkflowExecution(context.Background(), jobs[0].JobID, "")
	require.NoError(t, err)
	sa := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	for key, want := range map[string]string{"ToolName": "execute_vpcs_commands", "ProjectId": env.ProjectID, "SessionId": sessionID} {
		require.Contains(t, string(sa[key].GetData()), want, key)
	}
	// In the Temporal UI the job and each of its steps say what they do, without the lines.
	var jobSummary string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(desc.GetExecutionConfig().GetUserMetadata().GetSummary(), &jobSummary))
	require.Equal(t, "configuration job execute_vpcs_commands: PC1, PC2", jobSummary)
	steps := activitySummaries(t, env, jobs[0].JobID)
	require.Equal(t, []string{"plan execute_vpcs_commands: PC1, PC2"}, steps[workflows.DevicePlanActivity])
	require.Equal(t, []string{"ask approval: execute_vpcs_commands: PC1, PC2"}, steps[workflows.RequestApprovalActivity])
	require.Equal(t, []string{"execute_vpcs_commands: approved by " + e2eenv.Username}, steps[workflows.RecordDecisionActivity])
	require.ElementsMatch(t, []string{"PC1: 2 commands", "PC2: 1 command"}, steps[workflows.DeviceRunActivity])
	require.ElementsMatch(t, []string{"PC1: read the configuration before the change", "PC2: read the configuration before the change",
		"PC1: read the configuration after the change", "PC2: read the configuration after the change"}, steps[workflows.ReadConfigActivity])
	require.Equal(t, []string{"execute_vpcs_commands result: 2 devices (PC1, PC2)"}, steps[workflows.FinishConfigJobActivity])
	for _, list := range steps {
		for _, step := range list {
			require.NotContains(t, step, "10.7.0")
		}
	}

	// Both histories (the turn and its job) replay on the current code; with
	// GNS3COPILOT_WRITE_REPLAY=1 they become the fixtures workflows/replay_test.go replays.
	_, turnID := startedIDs(t, seen)
	replayAndSave(t, env, workflows.WorkflowID(sessionID, turnID), "chat_turn_with_config_job_history.json")
	replayAndSave(t, env, jobs[0].JobID, "config_job_history.json")
}

// Rejected: no line reaches the PC (no record, the real PC keeps its address) and the model
// reads the owner's comment as the tool's result.
func TestRejectedConfigurationSendsNothing(t *testing.T) {
	env, lab := vpcsEnv(t, 1, e2eenv.Options{Approval: "config"})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.8.0.1/24"}})),
		fakeopenai.Text("Understood, I left PC1 alone."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	sessionID, _ := startedIDs(t, seen)
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+a.ApprovalID),
		map[string]any{"decision": "reject", "comment": "PC1 keeps DHCP"})
	require.Equal(t, http.StatusOK, code, string(body))
	rest := s.UntilDone(t, true)
	ends := deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	require.False(t, ends[0].Success)
	require.Contains(t, ends[0].Error, "PC1 keeps DHCP")
	require.Empty(t, linesSent(t, env), "a rejected job sends nothing")
	require.NotContains(t, showIP(t, lab.Nodes[0]), "10.8.0.1")
	reqs := streamedRequests(env.LLM)
	last := reqs[len(reqs)-1]
	b, _ := json.Marshal(last.Messages)
	require.Contains(t, string(b), "PC1 keeps DHCP", "the model sees the comment")
}

// Unanswered, the approval expires: nothing is sent and a late decision is refused.
func TestUnansweredApprovalExpires(t *testing.T) {
	env, _ := vpcsEnv(t, 1, e2eenv.Options{Approval: "changes", ApprovalTimeout: 2 * time.Second})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.9.0.1/24"}})),
		fakeopenai.Text("Nobody answered."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	sessionID, _ := startedIDs(t, seen)
	resolved := until(t, s, "approval_resolved")
	require.Equal(t, "expired", approvalOf(t, resolved[len(resolved)-1]).Status)
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	require.Empty(t, linesSent(t, env))
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+a.ApprovalID), map[string]any{"decision": "approve"})
	requireError(t, code, body, http.StatusConflict, "expired")
}
