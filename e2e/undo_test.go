package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func undoCall(id, args string) fakeopenai.ToolCall {
	return fakeopenai.ToolCall{ID: id, Name: "undo_device_config", Arguments: args}
}

// toolMetadata is a tool_end's result metadata, by tool call id.
func toolMetadata(t *testing.T, frames []e2eenv.Frame) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, f := range frames {
		if f.Event != "tool_end" {
			continue
		}
		var o struct {
			Metadata map[string]any `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &o), f.Raw)
		id, _ := f.Data["tool_call_id"].(string)
		out[id] = o.Metadata
	}
	return out
}

// approveJobThenAskUndo approves the turn's first configuration job and returns the frames so
// far, the session, and the undo's approval with its first device's lines.
func approveJobThenAskUndo(t *testing.T, env *e2eenv.Env, s *e2eenv.Stream) (seen []e2eenv.Frame, sessionID string, undo approvalJSON, lines []string) {
	t.Helper()
	seen = until(t, s, "approval_required")
	sessionID, _ = startedIDs(t, seen)
	decide(t, env, sessionID, approvalOf(t, seen[len(seen)-1]).ApprovalID, "approve", "")
	more := until(t, s, "approval_required")
	seen = append(seen, more...)
	undo = approvalOf(t, more[len(more)-1])
	for _, l := range undo.Plan.Devices[0].Lines {
		lines = append(lines, l.Command)
	}
	return seen, sessionID, undo, lines
}

func decide(t *testing.T, env *e2eenv.Env, sessionID, approvalID, decision, comment string) {
	t.Helper()
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+approvalID), map[string]any{"decision": decision, "comment": comment})
	require.Equal(t, http.StatusOK, code, string(body))
}

// The undo on a real VPCS: a job readdresses and renames PC1; the undo of the chat's
// last job shows its lines (computed from the job's reads) as a plan and waits; rejected, it
// changes nothing; asked again and approved, it applies, reads back, and says PC1 is back to
// the configuration before the job, which the real PC confirms.
func TestUndoTakesAVPCSJobBackOnlyOnceApproved(t *testing.T) {
	env, lab := vpcsEnv(t, 1, e2eenv.Options{Approval: "changes"})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.7.0.1/24 10.7.0.254", "set pcname web"}})),
		fakeopenai.Calls(undoCall("c_undo1", `{}`)),
		fakeopenai.Calls(undoCall("c_undo2", `{"device_names":["PC1"]}`)),
		fakeopenai.Text("PC1 is back as it was."),
	)
	before := showIP(t, lab.Nodes[0])
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1, then undo it", "approval_cards": true}, "")
	seen, sessionID, a, lines := approveJobThenAskUndo(t, env, s)
	require.Equal(t, "c_undo1", a.ToolCallID)
	require.Len(t, a.Plan.Devices, 1)
	require.Equal(t, []string{"clear ip", "set pcname PC1"}, lines, "the lines that bring PC1 back, as a normal plan")
	require.Contains(t, a.Plan.Devices[0].CurrentConfig, "10.7.0.1/24")
	decide(t, env, sessionID, a.ApprovalID, "reject", "not yet")
	require.Contains(t, showIP(t, lab.Nodes[0]), "10.7.0.1/24", "a rejected undo changes nothing")

	more := until(t, s, "approval_required")
	seen = append(seen, more...)
	a = approvalOf(t, more[len(more)-1])
	require.Equal(t, "c_undo2", a.ToolCallID)
	decide(t, env, sessionID, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	frames := append(seen, rest...)

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 3)
	require.True(t, ends[0].Success, "%+v", ends[0])
	require.False(t, ends[1].Success)
	require.Contains(t, ends[1].Error, "not yet")
	require.True(t, ends[2].Success, "%+v", ends[2])
	meta := toolMetadata(t, frames)
	jobID, _ := meta["c_ip"]["config_job_id"].(string)
	require.Contains(t, jobID, "config-job-", "the job's result names it, so it can be undone by name")
	require.Equal(t, jobID, meta["c_undo2"]["undo_of"])
	status, res, _ := itemByName(t, ends[2], "PC1")
	require.Equal(t, "success", status)
	require.Contains(t, res, "Back to the configuration before job "+jobID+": the read-back equals it.")
	require.Contains(t, res, "- IP/MASK : 10.7.0.1/24")

	after := showIP(t, lab.Nodes[0])
	p, _ := devices.ProfileByName("vpcs")
	added, removed := p.SameState(before, after)
	require.Empty(t, added, after)
	require.Empty(t, removed, after)
	require.Contains(t, after, "NAME        : PC1[1]")
}

// Someone changes PC1 by hand after a job. The operator asks no approvals, yet the undo of
// that job asks: its plan shows what changed since the job, so it is not overwritten unseen.
// Approved, it brings PC1 back to before the job.
func TestUndoAsksWhenTheDeviceChangedSinceTheJob(t *testing.T) {
	env, lab := vpcsEnv(t, 1, e2eenv.Options{Approval: "never"})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.7.0.1/24"}})),
		fakeopenai.Text("PC1 is addressed."),
	)
	first := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1"}, "").UntilDone(t, true)
	sessionID, _ := startedIDs(t, first)
	ends := deviceToolEnds(t, first)
	require.Len(t, ends, 1)
	require.True(t, ends[0].Success, "applied without asking under --approval never")
	jobID, _ := toolMetadata(t, first)["c_ip"]["config_job_id"].(string)
	require.NotEmpty(t, jobID)

	require.Contains(t, vpcsRun(t, lab.Nodes[0], "ip 10.7.0.9/24"), "10.7.0.9") // by hand, at the console

	env.LLM.Enqueue(
		fakeopenai.Calls(undoCall("c_undo", `{"job":"`+jobID+`"}`)),
		fakeopenai.Text("PC1 is back."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "undo that", "session_id": sessionID, "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	f := seen[len(seen)-1]
	var plan struct {
		Plan struct {
			UndoOf  string `json:"undo_of"`
			Devices []struct {
				Name         string `json:"name"`
				ChangedSince struct {
					Added, Removed []string
				} `json:"changed_since"`
			} `json:"devices"`
		} `json:"plan"`
	}
	raw, _ := json.Marshal(f.Data["approval"])
	require.NoError(t, json.Unmarshal(raw, &plan))
	require.Equal(t, jobID, plan.Plan.UndoOf)
	require.Equal(t, []string{"IP/MASK : 10.7.0.9/24"}, plan.Plan.Devices[0].ChangedSince.Added)
	require.Equal(t, []string{"IP/MASK : 10.7.0.1/24"}, plan.Plan.Devices[0].ChangedSince.Removed)
	require.Contains(t, showIP(t, lab.Nodes[0]), "10.7.0.9/24", "nothing is sent before the decision")
	require.Contains(t, f.Raw, "Changed since the job", "the question says so in content too")

	decide(t, env, sessionID, approvalOf(t, f).ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	ends = deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	status, res, _ := itemByName(t, ends[0], "PC1")
	require.Equal(t, "success", status, res)
	require.Contains(t, res, "Back to the configuration before job "+jobID)
	require.Contains(t, showIP(t, lab.Nodes[0]), "IP/MASK     : 0.0.0.0/0")

	// The undo's job took the new path (it asked because of the change since): its history
	// replays, and with GNS3COPILOT_WRITE_REPLAY=1 it is the fixture workflows/replay_test.go replays.
	_, undoTurn := startedIDs(t, seen)
	replayAndSave(t, env, workflows.ConfigJobID(undoTurn, "c_undo"), "config_job_undo_history.json")
}

// The undo on real FRRouting: one approved job addresses both routers, starts OSPF and
// adds a static route; its undo, approved, takes all of it back, and each router's running
// configuration, read on the router itself, is the one it had before the job.
func TestUndoTakesAnFRRJobBackOnRealRouters(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
	env.LLM.SetHandler(titleReplies("FRR undo"))
	frrProject(env, lab)
	// What the routers hold before: one line the job will change and one it will remove.
	for _, r := range lab.Routers {
		_, err := r.Vtysh("configure terminal", "interface eth0", "description lab link", "exit", "ip route 10.99.0.0/16 Null0")
		require.NoError(t, err)
	}
	running := func() []string {
		var out []string
		for _, r := range lab.Routers {
			cfg, err := r.Vtysh("show running-config")
			require.NoError(t, err)
			out = append(out, cfg)
		}
		return out
	}
	before := running()

	env.LLM.Enqueue(
		fakeopenai.Calls(frrCall("c_cfg", "execute_multiple_device_config_commands", map[string][]string{
			"R1": {"interface eth0", "description to R2", "ip address 10.1.0.1/24", "ip ospf cost 10", "exit", "router ospf", "ospf router-id 1.1.1.1",
				"network 10.1.0.0/24 area 0", "exit", "no ip route 10.99.0.0/16 Null0", "ip route 10.9.0.0/16 10.1.0.2"},
			"R2": {"interface eth0", "ip address 10.1.0.2/24", "exit", "router ospf", "network 10.1.0.0/24 area 0"}})),
		fakeopenai.Calls(undoCall("c_undo", `{}`)),
		fakeopenai.Text("Both routers are back as they were."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "configure the link, then undo it", "approval_cards": true}, "")
	seen, sessionID, a, r1 := approveJobThenAskUndo(t, env, s)
	require.Equal(t, "c_undo", a.ToolCallID)
	require.Len(t, a.Plan.Devices, 2)
	require.Equal(t, []string{"no ip route 10.9.0.0/16 10.1.0.2", "interface eth0", "no ip address 10.1.0.1/24", "no ip ospf cost 10", "exit",
		"no router ospf", "ip route 10.99.0.0/16 Null0", "interface eth0", "description lab link", "exit"}, r1)
	require.Contains(t, running()[0], "router ospf", "nothing is undone before the decision")
	decide(t, env, sessionID, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	frames := append(seen, rest...)

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 2)
	require.True(t, ends[0].Success, "%+v", ends[0])
	require.True(t, ends[1].Success, "%+v", ends[1])
	jobID, _ := toolMetadata(t, frames)["c_cfg"]["config_job_id"].(string)
	for _, r := range lab.Routers {
		_, res, _ := itemByName(t, ends[1], r.Name)
		require.Contains(t, res, "Back to the configuration before job "+jobID+": the read-back equals it.", r.Name)
	}
	p, _ := devices.ProfileByName("frr")
	for i, after := range running() {
		added, removed := p.SameState(before[i], after)
		require.Empty(t, added, "%s:\n%s", lab.Routers[i].Name, after)
		require.Empty(t, removed, "%s:\n%s", lab.Routers[i].Name, after)
	}
}

// The undo on a real Linux host (bash in a network namespace, a Docker node to the copilot):
// a job adds an address and a route; its undo deletes both, route first, and the host's
// addresses and routes, read on the host itself, are what they were.
func TestUndoTakesALinuxHostJobBack(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 1, Hosts: 1})
	h := lab.Hosts[0]
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
	env.LLM.SetHandler(titleReplies("Linux undo"))
	tpl := env.GNS3.AddTemplate("", "Debian", "docker", "host{0}", []fakegns3.Port{{Name: "eth0", ShortName: "eth0", LinkType: "ethernet"}})
	n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: tpl, Name: "host1", Status: "started"})
	_, p, _ := strings.Cut(h.Addr(), ":")
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	env.GNS3.SetConsole(n.ID, "127.0.0.1", port)
	state := func() string {
		out, err := h.Shell("ip -br addr show dev eth0; ip route")
		require.NoError(t, err)
		return out
	}
	before := state()

	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_cfg", Name: "execute_multiple_device_config_commands",
			Arguments: `{"device_configs": [{"device_name": "host1", "commands": ["ip address add 10.5.0.10/24 dev eth0", "ip route add 10.50.0.0/16 via 10.5.0.1"]}]}`}),
		fakeopenai.Calls(undoCall("c_undo", `{}`)),
		fakeopenai.Text("host1 is back as it was."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address host1, then undo it", "approval_cards": true}, "")
	seen, sessionID, a, lines := approveJobThenAskUndo(t, env, s)
	require.Equal(t, []string{"ip route del 10.50.0.0/16 via 10.5.0.1 dev eth0", "ip address del 10.5.0.10/24 dev eth0"}, lines)
	require.Contains(t, state(), "10.50.0.0/16", "nothing is undone before the decision")
	decide(t, env, sessionID, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])

	ends := deviceToolEnds(t, append(seen, rest...))
	require.Len(t, ends, 2)
	require.True(t, ends[1].Success, "%+v", ends[1])
	_, res, _ := itemByName(t, ends[1], "host1")
	require.Contains(t, res, "the read-back equals it")
	require.Equal(t, before, state())
}
