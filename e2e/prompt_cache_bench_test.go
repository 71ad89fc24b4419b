package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// BenchmarkPromptPrefixCache measures how much of each model request a prefix cache could
// reuse, through the whole copilot, in the session of issue 49: four lab-automation turns (what
// is in my lab; add two PCs, link and start them; address them and ping; what does it look like
// now), eleven model calls, the lab changing inside the second turn. Real VPCS answer the
// consoles.
//
// A model server caches by exact prefix, so the figure is, for each request, the share of it
// that is a byte-identical prefix of the request before it, rendered two ways: tools first (as
// OpenAI renders a request) and system text first (as the chat templates of Qwen, Hermes,
// Llama 3.1 and gpt-oss do, which vLLM, Ollama and llama.cpp use). It reports the mean and the
// lowest share in each order, and the median tokens per call.
//
//	go test -run '^$' -bench PromptPrefixCache -benchtime 1x ./e2e
func BenchmarkPromptPrefixCache(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		reqs := promptCacheSession(b)
		b.StartTimer()
		toolsFirst, systemFirst, tokens := prefixShares(b, reqs, false), prefixShares(b, reqs, true), requestTokens(b, reqs)
		b.ReportMetric(mean(toolsFirst), "prefix-share-tools-first")
		b.ReportMetric(lowest(toolsFirst), "min-prefix-share-tools-first")
		b.ReportMetric(mean(systemFirst), "prefix-share-system-first")
		b.ReportMetric(lowest(systemFirst), "min-prefix-share-system-first")
		b.ReportMetric(median(tokens), "median-tokens/call")
		b.ReportMetric(float64(len(reqs)), "calls")
		for i := range toolsFirst {
			b.Logf("call %2d: %5.0f tokens, shared prefix %.3f tools first, %.3f system first", i+2, tokens[i+1], toolsFirst[i], systemFirst[i])
		}
	}
}

// promptCacheSession runs the session and returns its model calls in order (the title call,
// which is not part of the conversation, left out).
func promptCacheSession(b *testing.B) []fakeopenai.Request {
	lab := vpcslab.Start(b, 4)
	env := e2eenv.Start(b, e2eenv.Options{Mode: "lab_automation_assistant"})
	for i, name := range []string{"PC1", "PC2"} {
		n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: name, X: i * 200, Status: "started"})
		env.GNS3.SetConsole(n.ID, "127.0.0.1", lab.Nodes[i].ConsolePort)
	}
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Lab session"), true
		}
		if last := req.LastMessage(); last.Role == "tool" && last.ToolCallID == "c_create" {
			// GNS3 gave the new PCs consoles; real VPCS answer on them.
			for _, n := range env.GNS3.Nodes(env.ProjectID) {
				switch n.Name {
				case "PC3":
					env.GNS3.SetConsole(n.ID, "127.0.0.1", lab.Nodes[2].ConsolePort)
				case "PC4":
					env.GNS3.SetConsole(n.ID, "127.0.0.1", lab.Nodes[3].ConsolePort)
				}
			}
		}
		return fakeopenai.Reply{}, false
	})
	call := func(id, name, args string) fakeopenai.Reply {
		return fakeopenai.Calls(fakeopenai.ToolCall{ID: id, Name: name, Arguments: args})
	}
	turns := []struct {
		message string
		replies []fakeopenai.Reply
	}{
		{"What is in my lab?", []fakeopenai.Reply{
			call("c_topo1", "get_gns3_topology", `{}`),
			fakeopenai.Text("Two VPCS, PC1 and PC2, both started, not linked."),
		}},
		{"Add two PCs, link them and start them.", []fakeopenai.Reply{
			call("c_create", "create_gns3_node", `{"nodes": [{"template_id": "VPCS", "x": 0, "y": 200, "name": "PC3"}, `+
				`{"template_id": "VPCS", "x": 200, "y": 200, "name": "PC4"}]}`),
			call("c_link", "create_gns3_link", `{"links": [{"node_a": "PC3", "port_a": "e0", "node_b": "PC4", "port_b": "e0"}]}`),
			call("c_start", "start_gns3_node", `{"node_ids": ["PC3", "PC4"]}`),
			fakeopenai.Text("PC3 and PC4 are linked and running."),
		}},
		{"Address them and ping.", []fakeopenai.Reply{
			call("c_ip", "execute_vpcs_commands", `{"device_configs": [{"device_name": "PC3", "commands": ["ip 10.0.34.3/24"]}, `+
				`{"device_name": "PC4", "commands": ["ip 10.0.34.4/24"]}]}`),
			call("c_ping", "execute_vpcs_commands", `{"device_configs": [{"device_name": "PC3", "commands": ["ping 10.0.34.4 -c 2"]}]}`),
			fakeopenai.Text("PC3 reaches PC4."),
		}},
		{"What does it look like now?", []fakeopenai.Reply{
			call("c_topo2", "get_gns3_topology", `{}`),
			fakeopenai.Text("Four PCs; PC3 and PC4 are linked and addressed."),
		}},
	}
	var sessionID string
	for _, turn := range turns {
		env.LLM.Enqueue(turn.replies...)
		body := map[string]any{"message": turn.message}
		if sessionID != "" {
			body["session_id"] = sessionID
		}
		frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), body, "").UntilDone(b, true)
		done := frames[len(frames)-1]
		if done.Data["status"] != "completed" {
			b.Fatalf("turn %q ended %v: %v", turn.message, done.Data, e2eenv.Types(frames))
		}
		for _, f := range frames {
			if id, ok := f.Data["session_id"].(string); ok && id != "" {
				sessionID = id
			}
		}
		if env.LLM.Pending() != 0 {
			b.Fatalf("turn %q left %d scripted replies unused", turn.message, env.LLM.Pending())
		}
	}
	return streamedRequests(env.LLM)
}

// prefixShares is, for each request after the first, the share of its rendering that is a
// prefix of the previous request's rendering.
func prefixShares(b *testing.B, reqs []fakeopenai.Request, systemFirst bool) []float64 {
	var out []float64
	var prev []byte
	for i, r := range reqs {
		cur := renderForCache(b, r, systemFirst)
		if i > 0 {
			n := 0
			for n < len(prev) && n < len(cur) && prev[n] == cur[n] {
				n++
			}
			out = append(out, float64(n)/float64(len(cur)))
		}
		prev = cur
	}
	return out
}

// renderForCache lays a request out in the order a model server reads it: the tools, then the
// messages; or, as chat templates do, the first system message's text, then the tools, then the
// other messages. Each part is the JSON the copilot sent, so a byte that differs in the request
// differs here.
func renderForCache(b *testing.B, r fakeopenai.Request, systemFirst bool) []byte {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &req); err != nil {
		b.Fatalf("request %d: %v", r.Seq, err)
	}
	var out bytes.Buffer
	msgs := req.Messages
	if systemFirst && len(msgs) > 0 && len(r.Messages) > 0 && r.Messages[0].Role == openai.ChatMessageRoleSystem {
		out.Write(msgs[0])
		msgs = msgs[1:]
	}
	out.WriteString("\ntools: ")
	out.Write(req.Tools)
	for _, m := range msgs {
		out.WriteByte('\n')
		out.Write(m)
	}
	return out.Bytes()
}

// requestTokens counts each request's messages and tools as the copilot's own counter does.
func requestTokens(b *testing.B, reqs []fakeopenai.Request) []float64 {
	out := make([]float64, len(reqs))
	for i, r := range reqs {
		var req openai.ChatCompletionRequest
		if err := json.Unmarshal(r.Raw, &req); err != nil {
			b.Fatalf("request %d: %v", r.Seq, err)
		}
		c := contextwindow.ForModel(req.Model)
		out[i] = float64(c.Messages(req.Messages) + c.Tools(req.Tools))
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func lowest(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
