package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// buildScript is the model of the topology browser test: asked to build the lab, it creates two
// PCs, cables them and starts PC1, one tool call per step, pausing before each step so the page
// can be seen changing in between.
func buildScript(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		return fakeopenai.Reply{Content: []string{"Building the lab"}}, true
	}
	if !strings.Contains(strings.ToLower(req.LastUserText()), "build") {
		return fakeopenai.Reply{Content: fakeopenai.Words("Ask me to build the lab.")}, true
	}
	done := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			done++
		}
	}
	pause := 1500 * time.Millisecond
	switch done {
	case 0:
		return fakeopenai.Reply{FirstChunkDelay: pause, ToolCalls: []fakeopenai.ToolCall{{ID: "call_nodes", Name: "create_gns3_node",
			Arguments: `{"nodes": [{"template_id": "VPCS", "x": -200, "y": 0}, {"template_id": "VPCS", "x": 200, "y": 0}]}`}}}, true
	case 1:
		return fakeopenai.Reply{FirstChunkDelay: pause, ToolCalls: []fakeopenai.ToolCall{{ID: "call_link", Name: "create_gns3_link",
			Arguments: `{"links": [{"node_a": "PC1", "port_a": "e0", "node_b": "PC2", "port_b": "e0"}]}`}}}, true
	case 2:
		return fakeopenai.Reply{FirstChunkDelay: pause, ToolCalls: []fakeopenai.ToolCall{{ID: "call_start", Name: "start_gns3_node",
			Arguments: `{"node_ids": ["PC1"]}`}}}, true
	}
	return fakeopenai.Reply{Content: fakeopenai.Words("PC1 and PC2 are cabled, and PC1 is started.")}, true
}

func TestTopologyPanelInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(buildScript)
	g := env.GNS3

	// A second project with a hundred nodes in a grid, ninety-nine links between them.
	big := g.AddProject("campus", fakegns3.Members(e2eenv.Username))
	var prev fakegns3.Node
	for i := 0; i < 100; i++ {
		tpl := fakegns3.RouterTemplateID
		n := g.AddNode(big, fakegns3.NodeSpec{Template: tpl, X: 200 * (i % 10), Y: 180 * (i / 10), Status: []string{"started", "stopped", "suspended"}[i%3]})
		if i > 0 {
			g.AddLink(big, prev.ID, 1, 0, n.ID, 0, 0)
		}
		prev = n
	}

	// The page's test makes outside changes through this, at the moments it chooses.
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		switch r.URL.Path {
		case "/capture":
			links := g.Links(env.ProjectID)
			if len(links) == 0 {
				http.Error(w, "no link yet", http.StatusConflict)
				return
			}
			g.SetCapturing(links[0].ID, true)
		case "/condition":
			links := g.Links(env.ProjectID)
			if len(links) == 0 {
				http.Error(w, "no link yet", http.StatusConflict)
				return
			}
			g.SetLinkConditions(links[0].ID, map[string][]any{"delay": {200, 20}, "packet_loss": {20}}, false)
		case "/move":
			n, ok := g.NodeByName(env.ProjectID, "PC2")
			if !ok {
				http.Error(w, "no PC2 yet", http.StatusConflict)
				return
			}
			g.MoveNode(n.ID, 200, 200)
		default:
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(control.Close)
	runNodeTests(t, node, "topology.e2e.test.mjs", sameOrigin(t, env.URL),
		"COPILOT_PROJECT=lab1", "COPILOT_BIG_PROJECT=campus", "COPILOT_CONTROL_URL="+control.URL)
}
