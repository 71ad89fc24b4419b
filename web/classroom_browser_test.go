package web_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeios"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// classroomScript is the scripted model of the classroom page tests: "capture" analyses the
// PC1–PC2 link, "partial" runs a show command together with a forbidden one on R1.
func classroomScript(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		return fakeopenai.Reply{Content: []string{"Capture on the PC link"}, Usage: &fakeopenai.Usage{PromptTokens: 30, CompletionTokens: 4}}, true
	}
	user := strings.ToLower(req.LastUserText())
	afterTool := req.LastMessage().Role == "tool"
	switch {
	case afterTool && strings.Contains(user, "capture"):
		return fakeopenai.Reply{Content: fakeopenai.Words("PC1 asked three times who has **10.5.0.9** and nobody answered: that host is missing.")}, true
	case afterTool:
		return fakeopenai.Reply{Content: fakeopenai.Words("R1 answered; `debug all` was refused.")}, true
	case strings.Contains(user, "capture"):
		return fakeopenai.Reply{Content: fakeopenai.Words("Capturing on the link now."),
			ToolCalls: []fakeopenai.ToolCall{{ID: "call_capture", Name: "analyze_link_capture", Arguments: `{"node_a": "PC1", "node_b": "PC2", "packet_count": 41}`}}}, true
	case strings.Contains(user, "partial"):
		return fakeopenai.Reply{Content: fakeopenai.Words("Reading R1."),
			ToolCalls: []fakeopenai.ToolCall{{ID: "call_partial", Name: "execute_multiple_device_commands", Arguments: `{"device_names": ["R1"], "commands": ["show version", "debug all"]}`}}}, true
	}
	return fakeopenai.Reply{Content: fakeopenai.Words("Ask me to capture.")}, true
}

func TestClassroomPageInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(classroomScript)

	g := env.GNS3
	pc1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", X: -250})
	pc2 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC2", X: 250})
	g.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	// Slow enough that the packets-so-far progress shows before the result.
	g.SetCaptureFeed("", fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 64, Delay: 25 * time.Millisecond})

	ios := fakeios.Start(t, fakeios.Options{Hostname: "R1"})
	r1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, Name: "R1", Status: "started", Y: 250})
	host, port, err := net.SplitHostPort(ios.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	g.SetConsole(r1.ID, host, p)

	runNodeTests(t, node, "classroom.e2e.test.mjs", sameOrigin(t, env.URL))
}
