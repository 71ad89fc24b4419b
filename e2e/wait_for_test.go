package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ospfJob is a configuration call that brings OSPF up on R1 and R2's eth0 with fast timers, and
// waits until each has a Full neighbour.
func ospfJob(id string, r1, r2 []string, timeout int) fakeopenai.ToolCall {
	wait := []map[string]any{{"command": "show ip ospf neighbor", "expect": "Full", "count": 1, "timeout_seconds": timeout}}
	b, _ := json.Marshal(map[string]any{"wait_for": wait, "device_configs": []map[string]any{
		{"device_name": "R1", "commands": r1}, {"device_name": "R2", "commands": r2}}})
	return fakeopenai.ToolCall{ID: id, Name: "execute_multiple_device_config_commands", Arguments: string(b)}
}

func ospfLines(addr, rid, area string) []string {
	return []string{"interface eth0", "ip address " + addr, "ip ospf hello-interval 1", "ip ospf dead-interval 4", "exit",
		"router ospf", "ospf router-id " + rid, "network 10.1.0.0/24 area " + area}
}

// The check against real FRR: a job whose routers are in different areas waits its
// 10 s and reports, per router, that the neighbour never became Full, with the last output;
// the next job puts R2 in R1's area and holds as soon as the adjacency forms, in the same call.
// Progress streams while it waits, and the job's history (the holding one) replays.
func TestConfigJobWaitsForOSPFOnRealFRR(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "never"})
	env.LLM.SetHandler(titleReplies("OSPF"))
	tpl := env.GNS3.AddFRRTemplate()
	var ids []string
	for i, r := range lab.Routers {
		n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: tpl, X: i * 300, Status: "started"})
		env.GNS3.SetConsole(n.ID, "127.0.0.1", r.ConsolePort)
		ids = append(ids, n.ID)
	}
	env.GNS3.AddLink(env.ProjectID, ids[0], 0, 0, ids[1], 0, 0)

	env.LLM.Enqueue(
		fakeopenai.Calls(ospfJob("c_areas", ospfLines("10.1.0.1/24", "1.1.1.1", "0"), ospfLines("10.1.0.2/24", "2.2.2.2", "1"), 10)),
		fakeopenai.Calls(ospfJob("c_fix", []string{"router ospf", "ospf router-id 1.1.1.1"},
			[]string{"router ospf", "no network 10.1.0.0/24 area 1", "network 10.1.0.0/24 area 0"}, 60)),
		fakeopenai.Text("OSPF is up: R1 and R2 are Full."),
	)
	start := time.Now()
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "bring OSPF up between R1 and R2"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	_, turnID := startedIDs(t, frames)

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 2)
	mismatch, fixed := ends[0], ends[1]
	for _, r := range lab.Routers {
		status, res, errText := itemByName(t, mismatch, r.Name)
		require.Equal(t, "partial_success", status, "%s: configured, but the check never held: %s", r.Name, res)
		require.Contains(t, errText, `wait_for did not hold: "show ip ospf neighbor" showed 0 of 1 "Full" within 10 s`)
		require.Contains(t, res, "did NOT hold after")
		require.Contains(t, res, "last output:")
	}
	require.False(t, mismatch.Success)

	require.True(t, fixed.Success, "%+v", fixed)
	for _, r := range lab.Routers {
		status, res, _ := itemByName(t, fixed, r.Name)
		require.Equal(t, "success", status, res)
		require.Contains(t, res, `show ip ospf neighbor: 1 of 1 "Full", held after`)
		require.Contains(t, res, "Full/", "the last output is the neighbour table")
	}
	// The wrong area costs its 10 s; the fixed one holds well within its 60.
	require.Less(t, time.Since(start), 70*time.Second)

	var waiting []string
	for _, f := range frames {
		if f.Event != "tool_progress" {
			continue
		}
		p, _ := f.Data["progress"].(map[string]any)
		if p["status"] == "waiting" {
			waiting = append(waiting, p["item_name"].(string)+": "+p["message"].(string))
		}
	}
	require.NotEmpty(t, waiting)
	joined := strings.Join(waiting, "\n")
	require.Contains(t, joined, "R2: 0 of 1 Full, ")
	require.Contains(t, joined, "R1: 1 of 1 Full, ")

	out, err := lab.Routers[1].Vtysh("show ip ospf neighbor")
	require.NoError(t, err)
	require.Contains(t, out, "Full", "the real routers are adjacent")

	replayAndSave(t, env, workflows.ConfigJobID(turnID, "c_fix"), "config_job_wait_for_history.json")
}
