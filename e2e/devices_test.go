package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
)

type deviceOutput struct {
	Success    bool `json:"success"`
	Total      int  `json:"total"`
	Successful int  `json:"successful"`
	Failed     int  `json:"failed"`
	Data       []struct {
		ID, Name, Status, Result, Error string
	} `json:"data"`
	Error string `json:"error"`
}

func deviceToolEnds(t *testing.T, frames []e2eenv.Frame) []deviceOutput {
	t.Helper()
	var out []deviceOutput
	for _, f := range frames {
		if f.Event != "tool_end" {
			continue
		}
		var o deviceOutput
		require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &o), f.Raw)
		out = append(out, o)
	}
	return out
}

func itemByName(t testing.TB, o deviceOutput, name string) (status, result, errText string) {
	t.Helper()
	for _, d := range o.Data {
		if d.Name == name {
			return d.Status, d.Result, d.Error
		}
	}
	t.Fatalf("no item %q in %+v", name, o)
	return
}

// A full chat turn against two real VPCS processes linked to each other: the model sets their
// addresses, pings across the link and reads `show ip`, through the device tools, the fan-out
// activities and the consoles the fake GNS3 reports.
func TestChatTurnConfiguresAndPingsRealVPCS(t *testing.T) {
	lab := vpcslab.Start(t, 2)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant"})
	env.LLM.SetHandler(titleReplies("VPCS lab"))
	for i, n := range lab.Nodes {
		node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: []string{"PC1", "PC2"}[i],
			X: i * 300, Status: "started"})
		env.GNS3.SetConsole(node.ID, "127.0.0.1", n.ConsolePort)
	}

	call := func(id, tool string, devs map[string][]string) fakeopenai.ToolCall {
		var cfgs []map[string]any
		for _, name := range []string{"PC1", "PC2"} {
			if cmds, ok := devs[name]; ok {
				cfgs = append(cfgs, map[string]any{"device_name": name, "commands": cmds})
			}
		}
		b, _ := json.Marshal(map[string]any{"device_configs": cfgs})
		return fakeopenai.ToolCall{ID: id, Name: tool, Arguments: string(b), ArgumentChunkSize: 17}
	}
	env.LLM.Enqueue(
		fakeopenai.Calls(call("c_ip", "execute_vpcs_commands", map[string][]string{
			"PC1": {"ip 10.0.0.1/24"}, "PC2": {"ip 10.0.0.2/24"}})),
		fakeopenai.Calls(call("c_ping", "execute_vpcs_commands", map[string][]string{"PC1": {"ping 10.0.0.2 -c 2"}})),
		fakeopenai.Calls(call("c_show", "execute_multiple_device_commands", map[string][]string{
			"PC1": {"show ip"}, "PC2": {"show ip", "traceroute 10.0.0.1"}})),
		fakeopenai.Text("PC1 reaches PC2."),
	)

	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address the PCs and test the link"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 3)

	ipSet := ends[0]
	require.True(t, ipSet.Success, "%+v", ipSet)
	require.Equal(t, 2, ipSet.Total)
	_, res, _ := itemByName(t, ipSet, "PC1")
	require.Contains(t, res, "10.0.0.1")

	ping := ends[1]
	require.True(t, ping.Success, "%+v", ping)
	_, res, _ = itemByName(t, ping, "PC1")
	require.Contains(t, res, "10.0.0.2 icmp_seq=1")
	require.Contains(t, res, "icmp_seq=2")

	show := ends[2]
	status, res, _ := itemByName(t, show, "PC1")
	require.Equal(t, "success", status)
	require.Contains(t, res, "10.0.0.1/24")
	status, res, errText := itemByName(t, show, "PC2")
	require.Equal(t, "partial_success", status, "the allowed command ran, the forbidden one did not")
	require.Contains(t, res, "10.0.0.2/24")
	require.Contains(t, errText, "traceroute")
	require.False(t, show.Success)

	var progress int
	for _, f := range frames {
		if f.Event == "tool_progress" {
			progress++
		}
	}
	require.Greater(t, progress, 6, "per-device progress is streamed")

	// Every command is audited, the blocked one too, and it never reached the device.
	db, err := models.Open("", env.Config.DataDir)
	require.NoError(t, err)
	recs, err := models.DeviceRepository{DB: db}.Audit(context.Background(), env.ProjectID, 100)
	require.NoError(t, err)
	var sent, blocked []string
	for _, r := range recs {
		require.Equal(t, e2eenv.Username, userName(t, env, r.UserID))
		if r.Blocked {
			blocked = append(blocked, r.DeviceName+": "+r.Command)
		} else {
			require.Equal(t, models.CommandOK, r.Status, "%s %s", r.DeviceName, r.Command)
			sent = append(sent, r.DeviceName+": "+r.Command)
		}
	}
	require.ElementsMatch(t, []string{"PC1: ip 10.0.0.1/24", "PC2: ip 10.0.0.2/24", "PC1: ping 10.0.0.2 -c 2", "PC1: show ip", "PC2: show ip"}, sent)
	require.Equal(t, []string{"PC2: traceroute 10.0.0.1"}, blocked)
}

func userName(t *testing.T, env *e2eenv.Env, userID string) string {
	t.Helper()
	code, body := env.Do(http.MethodGet, "/v3/access/users/me", nil)
	require.Equal(t, http.StatusOK, code)
	var me struct {
		UserID   string `json:"user_id"`
		Username string `json:"username"`
	}
	require.NoError(t, json.Unmarshal(body, &me))
	if strings.EqualFold(me.UserID, userID) {
		return me.Username
	}
	return userID
}
