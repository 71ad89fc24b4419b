package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// requireMCPSDK finds node and the official MCP TypeScript SDK installed in e2e/mcpsdk (make
// web-deps runs npm ci there): missing, the test skips, or fails in CI.
func requireMCPSDK(t *testing.T) string {
	t.Helper()
	missing := func(what string) string {
		msg := "skipping the MCP TypeScript SDK tests: " + what
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
		return ""
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return missing("node is not installed (Node >= 20 with npm; see the README)")
	}
	if _, err := os.Stat(filepath.Join("mcpsdk", "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return missing("e2e/mcpsdk/node_modules is missing (run: make web-deps, or cd e2e/mcpsdk && npm ci)")
	}
	return node
}

// TestMCPWithTheTypeScriptSDK runs e2e/mcpsdk/mcp.sdk.test.mjs: the official MCP TypeScript SDK,
// with and without elicitation, against the copilot and three real VPCS — the two-phase call,
// decide_approval's approve, reject with a comment, a foreign user's id and approve all, the
// elicitation timeout's fallback, the Origin rule, an API key accepted and then revoked, and a
// template rendered for three devices and refused for a missing var. A control server lets the
// script read a PC's address from its console and revoke the key.
func TestMCPWithTheTypeScriptSDK(t *testing.T) {
	node := requireMCPSDK(t)
	lab := vpcslab.Start(t, 3)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "config", ApprovalTimeout: 10 * time.Minute,
		Configure: func(c *app.Config) {
			c.MCPElicitTimeout = 2 * time.Second
			c.CheckCacheTTL = 2 * time.Second
		}})
	env.GNS3.AddUser("bob", "bob-token", false)
	env.GNS3.Grant(env.ProjectID, "bob")
	pcs := map[string]*vpcslab.Node{}
	for i, n := range lab.Nodes {
		name := []string{"PC1", "PC2", "PC3"}[i]
		node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: name, X: i * 200, Status: "started"})
		env.GNS3.SetConsole(node.ID, "127.0.0.1", n.ConsolePort)
		pcs[name] = n
	}
	key := env.GNS3.IssueAPIKey(e2eenv.Username)

	control := http.NewServeMux()
	control.HandleFunc("POST /revoke", func(w http.ResponseWriter, _ *http.Request) {
		env.GNS3.RevokeAPIKey(key)
		w.WriteHeader(http.StatusNoContent)
	})
	control.HandleFunc("GET /show-ip/{name}", func(w http.ResponseWriter, r *http.Request) {
		pc, ok := pcs[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		out, err := vpcsShowIP(r.Context(), pc)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, out)
	})
	ctl := httptest.NewServer(control)
	t.Cleanup(ctl.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "--test-reporter=spec", "mcp.sdk.test.mjs")
	cmd.Dir = "mcpsdk"
	cmd.Env = append(os.Environ(), "COPILOT_URL="+env.URL, "COPILOT_TOKEN="+e2eenv.UserToken, "COPILOT_BOB_TOKEN=bob-token",
		"COPILOT_API_KEY="+key, "COPILOT_PROJECT_ID="+env.ProjectID, "COPILOT_CONTROL_URL="+ctl.URL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		t.Log(lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the MCP TypeScript SDK tests failed: %v", err)
	}
}

// vpcsShowIP reads a PC's address from its console.
func vpcsShowIP(ctx context.Context, pc *vpcslab.Node) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	p, err := devices.ProfileByName("vpcs")
	if err != nil {
		return "", err
	}
	s, err := devices.Open(ctx, pc.Addr(), p, devices.Options{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	r, err := s.Run(ctx, "show ip")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(r.Output), nil
}
