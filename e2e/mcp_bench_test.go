package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// BenchmarkMCPCallOverhead compares one get_gns3_topology run straight through the tool
// registry against the fake GNS3, with the same tool called by the SDK's MCP client through
// /mcp: authentication, the project check, the call's record and credential, an MCPCall
// workflow with its activity, the result's record, and the Streamable HTTP round trip.
//
//	go test -run '^$' -bench MCPCallOverhead -benchtime 30x ./e2e
func BenchmarkMCPCallOverhead(b *testing.B) {
	env := e2eenv.Start(b, e2eenv.Options{NoLLM: true})
	for i := range 4 {
		env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: fmt.Sprintf("PC%d", i+1), X: i * 100, Status: "started"})
	}
	ctx := context.Background()

	b.Run("direct", func(b *testing.B) {
		reg := tools.NewRegistry(tools.AllTools()...)
		client := gns3.NewServer(env.GNS3.URL, 10*time.Second).WithToken(e2eenv.UserToken)
		for b.Loop() {
			if res := reg.Execute(ctx, tools.Env{ProjectID: env.ProjectID, GNS3: client}, tools.TeachingAssistant, "get_gns3_topology", "{}"); !res.Success {
				b.Fatal(res.Error)
			}
		}
	})

	b.Run("mcp", func(b *testing.B) {
		c, err := connectMCP(b, env, e2eenv.UserToken, "")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := c.CallTool(ctx, &sdk.CallToolParams{Name: "get_gns3_topology", Arguments: map[string]any{"project_id": env.ProjectID}})
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
}
