package web_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// Words of the scripted thinking model's reasoning, which the browser tests look for where they
// must appear (folded away) and where they must not (the answer).
const (
	thoughtBeforeTools = "I should read the topology before I answer, so I will call the topology tool first."
	thoughtAfterTools  = "The topology lists three VPCS nodes and no links, so the answer is short."
	thinkingAnswer     = "Your lab has **three** VPCS nodes and no links yet."
)

// thinkingScript is a thinking model behind DeepSeek's wire: it reasons, calls the topology tool,
// reasons again and answers; its title call thinks too. The reasoning streams slowly enough for
// a browser to see the model thinking.
func thinkingScript(projectID string) func(fakeopenai.Request) (fakeopenai.Reply, bool) {
	return func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.HasTools() {
			return fakeopenai.Reply{Reasoning: []string{"A short title."}, Content: []string{"Thinking about the lab"}}, true
		}
		if req.LastMessage().Role == "tool" {
			return fakeopenai.Reply{Reasoning: fakeopenai.Words(thoughtAfterTools), Content: fakeopenai.Words(thinkingAnswer),
				ChunkDelay: 30 * time.Millisecond}, true
		}
		return fakeopenai.Reply{Reasoning: fakeopenai.Words(thoughtBeforeTools), ChunkDelay: 60 * time.Millisecond,
			ToolCalls: []fakeopenai.ToolCall{{ID: "call_topology", Name: "get_gns3_topology", Arguments: `{"project_id":"` + projectID + `"}`}}}, true
	}
}

// startThinkingEnv starts the copilot whose server default is DeepSeek V4 in thinking mode
// (emulated), with a lab of three PCs; opts tunes it further.
func startThinkingEnv(t *testing.T, opts e2eenv.Options) *e2eenv.Env {
	t.Helper()
	configure := opts.Configure
	opts.Configure = func(c *app.Config) {
		c.LLMProvider, c.LLMModel = "deepseek", "deepseek-v4-flash"
		if configure != nil {
			configure(c)
		}
	}
	env := e2eenv.Start(t, opts)
	env.LLM.Emulate(fakeopenai.DeepSeekThinking)
	env.LLM.SetHandler(thinkingScript(env.ProjectID))
	for i, name := range []string{"PC1", "PC2", "PC3"} {
		env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: name, X: -200 + 200*i})
	}
	return env
}

// TestThinkingOnTheChatPageInBrowser runs web/e2e/thinking.e2e.test.mjs: a thinking model's turn
// with a tool call shows the model thinking while it thinks, its reasoning folded away (open on
// click) and apart from the answer, live and from the history.
func TestThinkingOnTheChatPageInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := startThinkingEnv(t, e2eenv.Options{})
	runNodeTests(t, node, "thinking.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_PROJECT=lab1",
		"COPILOT_THOUGHT_BEFORE="+thoughtBeforeTools, "COPILOT_THOUGHT_AFTER="+thoughtAfterTools,
		"COPILOT_ANSWER="+strings.ReplaceAll(thinkingAnswer, "**", ""))
	if n := env.LLM.Stats().Rejected; n != 0 {
		t.Fatalf("the provider refused %d requests", n)
	}
}

// TestGNS3WebUIPanelThinkingInBrowser runs web/e2e/webui_thinking.e2e.test.mjs against each of
// GNS3's web UI builds: its AI panel, which reads only the chat API's event types, shows a
// thinking model's answer alone, live and from the history, and stays with the turn while the
// model thinks and calls a tool.
func TestGNS3WebUIPanelThinkingInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	dir := webUIDir(t)
	for _, build := range webUIBuilds {
		t.Run(build, func(t *testing.T) {
			opts := e2eenv.Options{ProxyGNS3: true, GNS3: []fakegns3.Option{fakegns3.WithWebUI(filepath.Join(dir, build))}}
			env := startThinkingEnv(t, opts)
			runWebUITests(t, node, env, build, "webui_thinking.e2e.test.mjs",
				"COPILOT_THOUGHT_BEFORE="+thoughtBeforeTools, "COPILOT_THOUGHT_AFTER="+thoughtAfterTools,
				"COPILOT_ANSWER="+strings.ReplaceAll(thinkingAnswer, "**", ""))
			if n := env.LLM.Stats().Rejected; n != 0 {
				t.Fatalf("the provider refused %d requests", n)
			}
		})
	}
}
