package mcp

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

func TestTheGuidedPromptsAreListedAndRendered(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	require.NotNil(t, cs.InitializeResult().Capabilities.Prompts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, p := range listed.Prompts {
		names = append(names, p.Name)
		require.NotEmpty(t, p.Description, p.Name)
	}
	require.Equal(t, []string{"analyse_capture", "build_lab", "configure_routing", "run_exercise", "troubleshoot_reachability"}, names)

	text := func(name string, args map[string]string) string {
		t.Helper()
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.Len(t, res.Messages, 1)
		require.Equal(t, sdk.Role("user"), res.Messages[0].Role)
		return res.Messages[0].Content.(*sdk.TextContent).Text
	}
	lab := text("build_lab", map[string]string{"description": "three routers in a triangle", "project_id": h.project})
	require.Contains(t, lab, "Build a GNS3 lab in project "+h.project)
	require.Contains(t, lab, "three routers in a triangle")
	require.Contains(t, lab, "decide_approval")
	require.Contains(t, text("build_lab", map[string]string{"description": "x"}), "list_gns3_projects lists them", "without a project the agent asks")

	routing := text("configure_routing", map[string]string{"protocol": "OSPF", "project_id": h.project})
	require.Contains(t, routing, "OSPF routing")
	require.Contains(t, routing, `"interface {{.iface}}\n ip address {{.ip}} {{.mask}}"`, "the template form, shown as the agent sends it")
	require.Contains(t, routing, "Propose the addressing yourself")
	require.Contains(t, text("configure_routing", map[string]string{"protocol": "bgp", "addressing": "10.0.12.0/30 R1-R2"}), "Addressing to use: 10.0.12.0/30 R1-R2")

	require.Contains(t, text("troubleshoot_reachability", map[string]string{"source": "PC1", "destination": "10.0.3.1"}), "PC1 cannot reach 10.0.3.1")
	require.Contains(t, text("analyse_capture", map[string]string{"link": "R1-R2"}), "on the link R1-R2")
	require.Contains(t, text("run_exercise", nil), "never reveal an answer")

	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "troubleshoot_reachability", Arguments: map[string]string{"source": "PC1"}})
	require.ErrorContains(t, err, "needs the argument destination")
}

// The skill file an agent host loads names the front door's own tools and every prompt, so it
// cannot silently fall behind them.
func TestTheAgentSkillNamesTheToolsAndPrompts(t *testing.T) {
	b, err := os.ReadFile("../docs/mcp-skill/SKILL.md")
	require.NoError(t, err)
	skill := string(b)
	require.True(t, strings.HasPrefix(skill, "---\nname: gns3-copilot\ndescription: "), "the skill's front matter")
	for _, name := range []string{listProjectsTool.Name, openProjectTool.Name, callResultToolName, decideToolName, "waiting_approval",
		"approve_all", "metadata.approval.approval_id", "metadata.approval.question", `"template"`} {
		require.Contains(t, skill, name)
	}
	for _, p := range guidedPrompts {
		require.Contains(t, skill, "`"+p.name+"`")
	}
}
