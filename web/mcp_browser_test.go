package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/mcp"
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestMCPApprovalOnChatPage runs web/e2e/mcp.e2e.test.mjs: an agent's configuration call over
// MCP waits for approval, the chat page lists it among the project's pending approvals, and
// approving it there lets the call apply and return.
func TestMCPApprovalOnChatPage(t *testing.T) {
	node := requireBrowserTools(t)
	lab := vpcslab.Start(t, 1)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "config", ApprovalTimeout: 10 * time.Minute})
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(pc1.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "browser-test-agent", Version: "1.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: env.URL + mcp.Path,
		HTTPClient: &http.Client{Transport: bearer{token: e2eenv.UserToken, base: env.HTTP.Transport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// Without elicitation the call answers at once with its plan; it waits on the page.
	first, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_vpcs_commands", Arguments: map[string]any{
		"project_id": env.ProjectID, "device_configs": []any{map[string]any{"device_name": "PC1", "commands": []string{"ip 10.6.0.1/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	callID, _ := first.Meta["call_id"].(string)
	if first.Meta["status"] != "waiting_approval" || callID == "" {
		t.Fatalf("the configuration call did not answer with its plan: %+v", first.Meta)
	}
	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// Its result once the page approved it: get_mcp_call_result waits up to a minute a try.
		for {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_mcp_call_result", Arguments: map[string]any{"call_id": callID, "wait_seconds": 60}})
			if err != nil || res.Meta["status"] != "waiting_approval" {
				done <- outcome{res, err}
				return
			}
		}
	}()

	runNodeTests(t, node, "mcp.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_PROJECT=lab1")

	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		var out struct {
			Success bool `json:"success"`
		}
		b, _ := json.Marshal(o.res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		if o.res.IsError || !out.Success {
			t.Fatalf("the approved call did not succeed: %s", b)
		}
	case <-ctx.Done():
		t.Fatal("the MCP call did not return after its approval on the page")
	}
}
