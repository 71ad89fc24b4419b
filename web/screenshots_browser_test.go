package web_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// gns3WebUI is a build of GNS3's web UI to serve behind the fake GNS3: GNS3_WEB_UI_DIR, else the
// upstream 3.1 build of the shared reference material ($COPILOT_GNS3_WEB_UI, or shared/ beside
// the checkout, as the panel tests find it) when it is there.
func gns3WebUI() string {
	shared := os.Getenv("COPILOT_GNS3_WEB_UI")
	if shared == "" {
		shared = filepath.Join("..", "..", "shared", "gns3-web-ui")
	}
	for _, dir := range []string{os.Getenv("GNS3_WEB_UI_DIR"), filepath.Join(shared, "upstream-3.1")} {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
			return dir
		}
	}
	return ""
}

// TestScreenshots regenerates the README's pictures from the real pages, so they never show a
// page that no longer exists: `make screenshots` runs it with GNS3_COPILOT_SCREENSHOTS set to
// docs/images. It drives web/e2e/screenshots.e2e.test.mjs against the service, a small lab
// (a router and two VPCS, one of them real for its configuration) and the scripted model of
// the approval tests; then, when a build of GNS3's web UI is at hand, that UI's AI panel
// through --proxy-gns3. The normal suite skips it: it proves nothing the approval and topology
// tests do not, and costs a browser session.
func TestScreenshots(t *testing.T) {
	out := os.Getenv("GNS3_COPILOT_SCREENSHOTS")
	if out == "" {
		t.Skip("set GNS3_COPILOT_SCREENSHOTS to the directory for the pictures (make screenshots writes docs/images)")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	node := requireBrowserTools(t)
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes", ApprovalTimeout: 10 * time.Minute})
	env.LLM.SetHandler(approvalScript)
	g := env.GNS3
	r1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, Name: "R1", X: 0, Y: -140, Status: "started"})
	pc1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", X: -220, Y: 80, Status: "started"})
	g.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
	pc2 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC2", X: 220, Y: 80})
	g.AddLink(env.ProjectID, r1.ID, 0, 0, pc1.ID, 0, 0)
	g.AddLink(env.ProjectID, r1.ID, 1, 0, pc2.ID, 0, 0)
	runNodeTests(t, node, "screenshots.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_PROJECT=lab1", "COPILOT_SCREENSHOTS="+out)
	names := []string{"page-approval.png", "page-approved.png"}
	if webUI := gns3WebUI(); webUI != "" {
		panel := e2eenv.Start(t, e2eenv.Options{ProxyGNS3: true, GNS3: []fakegns3.Option{fakegns3.WithWebUI(webUI)}})
		panel.LLM.SetHandler((&pageScript{broken: map[string]bool{}}).reply)
		pg := panel.GNS3
		// The lab the page script's answer describes: three stopped PCs (on a switch), left of
		// where the panel opens.
		sw := pg.AddNode(panel.ProjectID, fakegns3.NodeSpec{Template: fakegns3.EthernetSwitchTemplateID, Name: "Switch1", X: -420, Y: -160, Status: "started"})
		for i, x := range []int{-620, -420, -220} {
			pc := pg.AddNode(panel.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC" + string(rune('1'+i)), X: x, Y: 60})
			pg.AddLink(panel.ProjectID, sw.ID, 0, i, pc.ID, 0, 0)
		}
		runNodeTests(t, node, "screenshots.e2e.test.mjs", panel.URL, "COPILOT_SCREENSHOTS="+out,
			"COPILOT_WEBUI=1", "COPILOT_PROJECT_ID="+panel.ProjectID)
		names = append(names, "gns3-web-ui-panel.png")
	} else {
		t.Log("no GNS3 web UI build (set GNS3_WEB_UI_DIR): the picture of GNS3's panel is not taken")
	}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Error(err)
		} else if fi.Size() < 10_000 {
			t.Errorf("%s is only %d bytes: not a picture of the page", name, fi.Size())
		}
	}
}
