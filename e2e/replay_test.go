package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A real turn's history (a plain tool and a device tool in parallel, then an answer) replays on
// the current workflow code. With GNS3COPILOT_WRITE_REPLAY=1 it is also saved as the fixture
// that workflows/replay_test.go replays, so a later change that breaks running turns fails there.
// The fixture it wrote before turns ran their model calls as local activities is kept as
// chat_turn_history.json: turns recorded then must still replay.
func TestRealTurnHistoryReplays(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant"})
	env.LLM.SetHandler(titleReplies("Replay"))
	env.LLM.Enqueue(
		fakeopenai.Calls(
			fakeopenai.ToolCall{ID: "c_topo", Name: "get_gns3_topology", Arguments: `{}`},
			fakeopenai.ToolCall{ID: "c_show", Name: "execute_multiple_device_commands",
				Arguments: `{"device_configs":[{"device_name":"R9","commands":["show version"]}]}`},
		),
		fakeopenai.Text("There is no R9 in this lab."),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "show version on R9"}, "").UntilDone(t, true)
	sessionID, turnID := startedIDs(t, frames)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	var sawDeviceEnd bool
	for _, o := range deviceToolEnds(t, frames) {
		if len(o.Data) == 1 && o.Data[0].Name == "R9" {
			sawDeviceEnd = true
			require.Contains(t, o.Data[0].Error, "no node")
		}
	}
	require.True(t, sawDeviceEnd, "the device tool answered for R9")

	hist := closedHistory(t, env, workflows.WorkflowID(sessionID, turnID))

	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	require.NoError(t, replayer.ReplayWorkflowHistory(nil, hist))

	if os.Getenv("GNS3COPILOT_WRITE_REPLAY") == "1" {
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("..", "workflows", "testdata", "chat_turn_local_history.json"), b, 0o644))
	}
}

// A real MCP call's history (a device command on a real VPCS, fanned out per device, with the
// credential renewal an approval-setting call keeps) replays on the current workflow code. With
// GNS3COPILOT_WRITE_REPLAY=1 it is saved as the fixture workflows/replay_test.go replays.
func TestRealMCPCallHistoryReplays(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "config"})
	node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(node.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
	c, err := connectMCP(t, env, e2eenv.UserToken, "")
	require.NoError(t, err)

	res, out := callTool(t, c, "execute_multiple_device_commands", map[string]any{"project_id": env.ProjectID,
		"device_configs": []map[string]any{{"device_name": "PC1", "commands": []string{"show ip"}}}}, nil)
	require.True(t, out.Success, "%+v", out)
	callID := res.Meta["call_id"].(string)

	replayAndSave(t, env, workflows.MCPCallID("execute_multiple_device_commands", callID), "mcp_call_history.json")
}
