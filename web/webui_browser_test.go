package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// GNS3's own web UI is the client the chat contract is written for. These tests serve its real
// production builds from the fake GNS3, put the copilot in front (--proxy-gns3, as the README
// deploys it) and drive the AI panel in Chromium: web/e2e/webui.mjs has the helpers, and
// web/e2e/webui.e2e.test.mjs the tests.

// webUIBuilds are the builds in shared/gns3-web-ui/ (see its README): the fork the seed's copilot
// came with, and upstream 3.1 with its fault-injection dialog.
var webUIBuilds = []string{"fork-master-3.0", "upstream-3.1"}

// webUIDir finds the builds: $COPILOT_GNS3_WEB_UI, else shared/gns3-web-ui beside the checkout.
// Missing, the test skips, or fails in CI.
func webUIDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("COPILOT_GNS3_WEB_UI")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "gns3-web-ui")
	}
	for _, b := range webUIBuilds {
		if _, err := os.Stat(filepath.Join(dir, b, "index.html")); err != nil {
			msg := "skipping the GNS3 web UI tests: no build at " + filepath.Join(dir, b) + " (set COPILOT_GNS3_WEB_UI to shared/gns3-web-ui)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// panelScript answers the panel's turns: an injection turn breaks PC1 and records the fault
// (exerciseScript), anything else is pageScript's.
func panelScript() func(fakeopenai.Request) (fakeopenai.Reply, bool) {
	page := &pageScript{broken: map[string]bool{}}
	return func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		for _, name := range req.ToolNames() {
			if name == "record_injected_fault" {
				return exerciseScript(req)
			}
		}
		return page.reply(req)
	}
}

// startWebUIEnv starts the copilot with --proxy-gns3 in front of the fake GNS3 serving the web UI
// build (one of webUIBuilds, found in dir), tuned further by opts; browsers open env.URL.
func startWebUIEnv(t *testing.T, dir, build string, opts e2eenv.Options) *e2eenv.Env {
	t.Helper()
	opts.ProxyGNS3 = true
	opts.GNS3 = append(opts.GNS3, fakegns3.WithWebUI(filepath.Join(dir, build)))
	return e2eenv.Start(t, opts)
}

// runWebUITests runs a browser test file of web/e2e against env's web UI build, with the project
// and build in COPILOT_PROJECT_ID and COPILOT_WEBUI_BUILD.
func runWebUITests(t *testing.T, node string, env *e2eenv.Env, build, file string, extraEnv ...string) {
	t.Helper()
	runNodeTests(t, node, file, env.URL, append([]string{"COPILOT_PROJECT_ID=" + env.ProjectID, "COPILOT_WEBUI_BUILD=" + build}, extraEnv...)...)
}

// TestGNS3WebUIPanelInBrowser runs web/e2e/webui.e2e.test.mjs against each build: a question
// answered in the panel, readable dates in its session list, and (3.1) the fault dialog followed
// by a typed "check" on a real VPCS, answered live and after a reload.
func TestGNS3WebUIPanelInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	dir := webUIDir(t)
	for _, build := range webUIBuilds {
		t.Run(build, func(t *testing.T) {
			lab := vpcslab.Start(t, 1)
			env := startWebUIEnv(t, dir, build, e2eenv.Options{Mode: "teaching_assistant"})
			env.LLM.SetHandler(panelScript())
			pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", X: -200, Status: "started"})
			env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC2", X: 0})
			env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC3", X: 200})
			env.GNS3.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
			vpcsConsole(t, lab.Nodes[0], "ip 10.0.0.1/24 10.0.0.254")
			runWebUITests(t, node, env, build, "webui.e2e.test.mjs")
		})
	}
}
