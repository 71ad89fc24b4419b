package web_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// panelApprovalScript is a model that configures PC1 as the panel user asks, one change per call,
// and reads the person's decisions in the tool results: the address in the request (or, after
// a rejection whose comment names another, that one), then "set pcname web1" when asked to
// name it, then says what it did.
func panelApprovalScript(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		return fakeopenai.Reply{Content: []string{"Addressing PC1"}}, true
	}
	addr := regexp.MustCompile(`10\.9\.\d+\.\d+/24`)
	user := req.LastUserText()
	last := req.LastMessage()
	call := func(id string, lines ...string) fakeopenai.Reply {
		b, _ := json.Marshal(map[string]any{"device_configs": []any{map[string]any{"device_name": "PC1", "commands": lines}}})
		return fakeopenai.Reply{Content: fakeopenai.Words("I will change PC1."),
			ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: "execute_vpcs_commands", Arguments: string(b)}}}
	}
	calls := 0
	for _, m := range req.Messages {
		calls += len(m.ToolCalls)
	}
	if last.Role != "tool" {
		return call("call_ip_1", "ip "+addr.FindString(user)), true
	}
	switch {
	case strings.Contains(last.Content, "rejected") && addr.MatchString(last.Content[strings.Index(last.Content, "Comment"):]):
		fixed := addr.FindString(last.Content[strings.Index(last.Content, "Comment"):])
		return call("call_ip_2", "ip "+fixed), true
	case strings.Contains(strings.ToLower(user), "name it web1") && !strings.Contains(last.Content, "pcname"):
		return call("call_name", "set pcname web1"), true
	}
	return fakeopenai.Reply{Content: fakeopenai.Words("Done: PC1 is configured as you approved.")}, true
}

// TestGNS3WebUIPanelApprovalsInBrowser drives the real panels of both builds through a
// configuration that needs approval (lab automation mode, --approval changes): the question in
// the conversation and a closed stream, "approve" typed as the next message, a rejection with a
// comment that leads to a corrected plan, and "approve all" over two changes in one answer; the
// real VPCS ends up configured as approved, and the audit shows the standing decision.
func TestGNS3WebUIPanelApprovalsInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	dir := webUIDir(t)
	for _, build := range webUIBuilds {
		t.Run(build, func(t *testing.T) {
			lab := vpcslab.Start(t, 1)
			env := startWebUIEnv(t, dir, build, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
			env.LLM.SetHandler(panelApprovalScript)
			pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
			env.GNS3.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
			runWebUITests(t, node, env, build, "webui_approvals.e2e.test.mjs")

			shown := vpcsConsole(t, lab.Nodes[0], "show ip")
			require.Contains(t, shown, "10.9.1.1", "the last approved address")
			require.Contains(t, shown, "web1", "the name, approved by approve all")
			code, body := env.Do(http.MethodGet, env.ChatPath("/approvals"), nil)
			require.Equal(t, http.StatusOK, code, string(body))
			var list []struct {
				ApprovalID string `json:"approval_id"`
				Status     string `json:"status"`
				Comment    string `json:"comment"`
				Standing   bool   `json:"standing"`
				StandingOf string `json:"standing_of"`
			}
			require.NoError(t, json.Unmarshal(body, &list))
			var statuses []string
			for _, a := range list {
				statuses = append(statuses, a.Status)
			}
			require.Equal(t, []string{"approved", "rejected", "approved", "approved", "approved"}, statuses)
			require.Equal(t, "no, use 10.9.0.6/24 instead", list[1].Comment)
			require.True(t, list[3].Standing)
			require.Equal(t, list[3].ApprovalID, list[4].StandingOf)
		})
	}
}
