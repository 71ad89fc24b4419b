package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// An MCP client that can ask its user (elicitation) is asked there, with the plan the chat
// shows: a rejection with a comment sends nothing and comes back in the result; an approval
// configures the real PC.
func TestMCPConfigurationAsksByElicitation(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "config"})
	node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(node.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)

	var mu sync.Mutex
	var asked []string
	answers := []map[string]any{{"decision": "reject", "comment": "not that subnet"}, {"decision": "approve"}}
	c, err := connectMCP(t, env, e2eenv.UserToken, "", func(o *sdk.ClientOptions) {
		o.ElicitationHandler = func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			return &sdk.ElicitResult{Action: "accept", Content: answers[len(asked)-1]}, nil
		}
	})
	require.NoError(t, err)
	call := func(addr string) deviceOutput {
		_, out := callTool(t, c, "execute_vpcs_commands", map[string]any{"project_id": env.ProjectID, "device_configs": []any{
			map[string]any{"device_name": "PC1", "commands": []string{"ip " + addr}}}}, nil)
		return out
	}

	rejected := call("10.5.0.1/24")
	require.False(t, rejected.Success)
	require.Contains(t, rejected.Data[0].Error+rejected.Error, "not that subnet")
	require.NotContains(t, showIP(t, lab.Nodes[0]), "10.5.0.1")

	approved := call("10.6.0.1/24")
	require.True(t, approved.Success, "%+v", approved)
	require.Contains(t, showIP(t, lab.Nodes[0]), "10.6.0.1")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, asked, 2, "each call asked once")
	require.Contains(t, asked[0], "**PC1** (vpcs)")
	require.Contains(t, asked[0], "ip 10.5.0.1/24")
	require.True(t, strings.Contains(asked[1], "ip 10.6.0.1/24"), asked[1])
}
