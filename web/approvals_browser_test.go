package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// approvalScript answers "address PC1" with a VPCS configuration (a job that asks), "delete PC2"
// with a destructive tool (the turn asks), and words after the tool.
func approvalScript(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		return fakeopenai.Reply{Content: []string{"Lab changes"}}, true
	}
	user := strings.ToLower(req.LastUserText())
	if req.LastMessage().Role == "tool" {
		return fakeopenai.Text("Done, see the card above."), true
	}
	switch {
	case strings.Contains(user, "address pc1"):
		return fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_addr", Name: "execute_vpcs_commands",
			Arguments: `{"device_configs":[{"device_name":"PC1","commands":["ip 10.5.0.1/24","set pcname web1"]}]}`}), true
	case strings.Contains(user, "delete pc2"):
		return fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_del", Name: "delete_gns3_node", Arguments: `{"node_ids":["PC2"]}`}), true
	}
	return fakeopenai.Text("Tell me what to change."), true
}

// TestApprovalCardInBrowser runs web/e2e/approvals.e2e.test.mjs: the approval card of a real
// VPCS configuration job (plan, current configuration, Approve, the diff after), a reload while
// it waits, a rejected destructive tool, and the cards as records after a reload.
func TestApprovalCardInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes", ApprovalTimeout: 10 * time.Minute})
	env.LLM.SetHandler(approvalScript)
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
	env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC2", X: 200})
	runNodeTests(t, node, "approvals.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_PROJECT=lab1")
}
