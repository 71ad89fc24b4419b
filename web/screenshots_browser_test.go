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

// TestScreenshots regenerates the README's pictures from the real page, so they never show a
// page that no longer exists: `make screenshots` runs it with GNS3_COPILOT_SCREENSHOTS set to
// docs/images. It drives web/e2e/screenshots.e2e.test.mjs against the service, a small lab
// (a router and two VPCS, one of them real for its configuration) and the scripted model of
// the approval tests. The normal suite skips it: it proves nothing the approval and topology
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
	for _, name := range []string{"page-approval.png", "page-approved.png"} {
		fi, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Error(err)
		} else if fi.Size() < 10_000 {
			t.Errorf("%s is only %d bytes: not a picture of the page", name, fi.Size())
		}
	}
}
