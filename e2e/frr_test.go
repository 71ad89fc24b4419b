package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
)

func frrCall(id, tool string, devs map[string][]string) fakeopenai.ToolCall {
	var cfgs []map[string]any
	for _, name := range []string{"R1", "R2"} {
		if cmds, ok := devs[name]; ok {
			cfgs = append(cfgs, map[string]any{"device_name": name, "commands": cmds})
		}
	}
	b, _ := json.Marshal(map[string]any{"device_configs": cfgs})
	return fakeopenai.ToolCall{ID: id, Name: tool, Arguments: string(b)}
}

// The check, against real FRRouting: a new chat in lab automation mode on two routers
// made from an "FRR" template (GNS3 v3.0: no tags) and linked eth0–eth0. It shows the running
// configuration, addresses both ends of the link as one approved job whose plan shows each
// router's current configuration and whose result is a verified diff, pings across the link and
// shows the routes on both. Every call succeeds, each well within a minute.
func TestFRRLabWithoutTags(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
	env.LLM.SetHandler(titleReplies("FRR lab"))
	tpl := env.GNS3.AddFRRTemplate()
	var ids []string
	for i, r := range lab.Routers {
		n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: tpl, X: i * 300, Status: "started"})
		require.Equal(t, r.Name, n.Name, "the template names nodes R1, R2")
		env.GNS3.SetConsole(n.ID, "127.0.0.1", r.ConsolePort)
		ids = append(ids, n.ID)
	}
	env.GNS3.AddLink(env.ProjectID, ids[0], 0, 0, ids[1], 0, 0)

	show := "execute_multiple_device_commands"
	env.LLM.Enqueue(
		fakeopenai.Calls(frrCall("c_run", show, map[string][]string{"R1": {"show running-config"}, "R2": {"show running-config"}})),
		fakeopenai.Calls(frrCall("c_addr", "execute_multiple_device_config_commands", map[string][]string{
			"R1": {"interface eth0", "ip address 10.1.0.1/24"}, "R2": {"interface eth0", "ip address 10.1.0.2/24"}})),
		fakeopenai.Calls(frrCall("c_ping", show, map[string][]string{"R1": {"ping 10.1.0.2"}})),
		fakeopenai.Calls(frrCall("c_routes", show, map[string][]string{"R1": {"show ip route"}, "R2": {"show ip route"}})),
		fakeopenai.Text("The link is up: R1 reaches R2."),
	)
	start := time.Now()
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address both ends of the link and test it", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	require.Less(t, time.Since(start), time.Minute, "show and the plan's read-back")
	a := approvalOf(t, seen[len(seen)-1])
	sessionID, _ := startedIDs(t, seen)
	require.Len(t, a.Plan.Devices, 2)
	for i, d := range a.Plan.Devices {
		require.Equal(t, lab.Routers[i].Name, d.Name)
		require.Equal(t, "show running-config", d.ReadCommand, "the job knows the routers are FRR without a tag")
		require.Contains(t, d.CurrentConfig, "hostname frr", "the plan shows the configuration read before asking")
		require.Equal(t, "interface eth0", d.Lines[0].Command)
	}
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+a.ApprovalID), map[string]any{"decision": "approve"})
	require.Equal(t, http.StatusOK, code, string(body))
	approved := time.Now()
	rest := s.UntilDone(t, true)
	// The job, the ping (5 s by design) and the routes: three calls in well under three minutes.
	require.Less(t, time.Since(approved), 3*time.Minute)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	frames := append(seen, rest...)

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 4)
	for _, o := range ends {
		require.True(t, o.Success, "%+v", o)
	}
	_, res, _ := itemByName(t, ends[0], "R2")
	require.Contains(t, res, "frr defaults traditional")
	for i, want := range []string{"10.1.0.1/24", "10.1.0.2/24"} {
		_, res, _ = itemByName(t, ends[1], lab.Routers[i].Name)
		require.Contains(t, res, "+ interface eth0 | ip address "+want, "the result is the diff read back")
	}
	_, res, _ = itemByName(t, ends[2], "R1")
	require.Contains(t, res, "bytes from 10.1.0.2")
	require.Contains(t, res, "packets transmitted")
	require.Contains(t, res, "stopped after 5s with Ctrl-C")
	for _, r := range lab.Routers {
		_, res, _ = itemByName(t, ends[3], r.Name)
		require.Contains(t, res, "10.1.0.0/24 is directly connected, eth0")
	}

	out, err := lab.Routers[1].Vtysh("show running-config")
	require.NoError(t, err)
	require.Contains(t, out, "ip address 10.1.0.2/24", "the real router holds the address")
}
