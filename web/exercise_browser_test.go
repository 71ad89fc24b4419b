package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// exerciseScript answers an injection turn by giving PC1 a wrong address and recording it, and
// any other turn in words.
func exerciseScript(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		return fakeopenai.Reply{Content: []string{"Exercise"}}, true
	}
	injecting := false
	for _, t := range req.ToolNames() {
		injecting = injecting || t == "record_injected_fault"
	}
	if !injecting {
		return fakeopenai.Text("Type check when you think it is fixed."), true
	}
	tools := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "user"; i-- {
		if req.Messages[i].Role == "tool" {
			tools++
		}
	}
	switch tools {
	case 0:
		return fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_break", Name: "execute_vpcs_commands",
			Arguments: `{"device_configs":[{"device_name":"PC1","commands":["ip 10.0.0.99/24 10.0.0.254"]}]}`}), true
	case 1:
		return fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_record", Name: "record_injected_fault",
			Arguments: `{"device_name":"PC1","lines":["ip 10.0.0.99/24 10.0.0.254"],"description":"wrong address","verify_command":"show ip",` +
				`"verify_expect":"10.0.0.1/24","hints":["One PC is not where it should be.","Look at the PCs' addresses."]}`}), true
	}
	return fakeopenai.Text("I set PC1 to 10.0.0.99."), true
}

// TestExerciseBannerInBrowser runs web/e2e/exercise.e2e.test.mjs: the Inject fault button on a
// real VPCS, the banner (open, a hint, a failing check), the fix at the console, and a passing check.
func TestExerciseBannerInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "teaching_assistant"})
	env.LLM.SetHandler(exerciseScript)
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
	vpcsConsole(t, lab.Nodes[0], "ip 10.0.0.1/24 10.0.0.254")

	// The page test repairs PC1 itself, at the PC's console, as the student would.
	runNodeTests(t, node, "exercise.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_PROJECT=lab1",
		"COPILOT_PC1_CONSOLE="+lab.Nodes[0].Addr())
	require.Contains(t, vpcsConsole(t, lab.Nodes[0], "show ip"), "10.0.0.1/24")
}

func vpcsConsole(t *testing.T, node *vpcslab.Node, cmd string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := devices.ProfileByName("vpcs")
	require.NoError(t, err)
	s, err := devices.Open(ctx, node.Addr(), p, devices.Options{})
	require.NoError(t, err)
	defer s.Close()
	r, err := s.Run(ctx, cmd)
	require.NoError(t, err)
	return strings.TrimSpace(r.Output)
}
