package contextwindow

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestForModelPicksTheModelsVocabulary(t *testing.T) {
	cases := []struct {
		model, enc string
		exact      bool
	}{
		{"gpt-4o-mini", "o200k_base", true},
		{"gpt-4o", "o200k_base", true},
		{"GPT-4.1-nano", "o200k_base", true},
		{"gpt-5", "o200k_base", true},
		{"o3-mini", "o200k_base", true},
		{"o1", "o200k_base", true},
		{"openai/gpt-4o-mini", "o200k_base", true},
		{"ft:gpt-4o-mini:acme::abc", "o200k_base", true},
		{"gpt-4-turbo", "cl100k_base", true},
		{"gpt-3.5-turbo", "cl100k_base", true},
		{"gpt-35-turbo", "cl100k_base", true},
		{"deepseek-chat", "cl100k_base", false},
		{"llama3.1:8b", "cl100k_base", false},
		{"qwen2.5-coder", "cl100k_base", false},
		{"olmo-2", "cl100k_base", false},
		{"", "cl100k_base", false},
	}
	for _, tc := range cases {
		c := ForModel(tc.model)
		if c.Encoding() != tc.enc || c.Exact() != tc.exact {
			t.Errorf("ForModel(%q) = %s exact=%v, want %s exact=%v", tc.model, c.Encoding(), c.Exact(), tc.enc, tc.exact)
		}
	}
}

func TestCountsMatchTiktoken(t *testing.T) {
	// Reference counts from OpenAI's tiktoken.
	cases := []struct {
		model, text string
		want        int
	}{
		{"gpt-4", "Hello, world!", 4},
		{"gpt-4o", "Hello, world!", 4},
		{"gpt-4", "", 0},
		{"gpt-4", "show running-config", 3},
	}
	for _, tc := range cases {
		if got := ForModel(tc.model).Text(tc.text); got != tc.want {
			t.Errorf("%s Text(%q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
}

func TestEstimateIsAboveTheExactCount(t *testing.T) {
	text := strings.Repeat("interface GigabitEthernet0/1\n ip address 10.0.0.1 255.255.255.0\n no shutdown\n!\n", 50)
	exact := ForModel("gpt-4").Text(text)
	est := ForModel("llama3").Text(text)
	if est < exact || est > exact*13/10 {
		t.Fatalf("estimate %d for exact cl100k count %d; want within [1, 1.3]×", est, exact)
	}
	if Text(text) != est {
		t.Fatalf("package Text %d != Estimator %d", Text(text), est)
	}
}

func TestMessageCountsToolCallArguments(t *testing.T) {
	c := ForModel("gpt-4o")
	args := `{"node_ids":["` + strings.Repeat("a1b2c3d4-", 40) + `"],"command":"show ip interface brief"}`
	bare := openai.ChatCompletionMessage{Role: "assistant"}
	withCall := bare
	withCall.ToolCalls = []openai.ToolCall{{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "run_show", Arguments: args}}}
	diff := c.Message(withCall) - c.Message(bare)
	if diff < c.Text(args) {
		t.Fatalf("a tool call adds %d tokens, less than its arguments alone (%d)", diff, c.Text(args))
	}
	tool := openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_1", Content: "ok"}
	if c.Message(tool) <= c.Text("ok") {
		t.Fatalf("tool message framing not counted")
	}
	img := openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
		{Type: openai.ChatMessagePartTypeText, Text: "what is this"},
		{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}}}}
	if c.Message(img) < perImage {
		t.Fatalf("image part not counted")
	}
	if got, want := c.Messages([]openai.ChatCompletionMessage{bare, tool}), c.Message(bare)+c.Message(tool); got != want {
		t.Fatalf("Messages = %d, want %d", got, want)
	}
}

func TestToolsCountsTheSchemas(t *testing.T) {
	c := ForModel("gpt-4o")
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_gns3_topology", Description: "Read the nodes, links and consoles of the open project.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"project_id": map[string]any{"type": "string"}}},
	}}}
	one := c.Tools(tools)
	if one < 20 || one > 200 {
		t.Fatalf("one small tool counted as %d tokens", one)
	}
	if two := c.Tools(append(tools, tools[0])); two != 2*one {
		t.Fatalf("two tools = %d, want %d", two, 2*one)
	}
	bad := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "x", Parameters: make(chan int)}}}
	if c.Tools(bad) != 1000 {
		t.Fatalf("unencodable schema not counted as a typical tool")
	}
}

func TestCountingIsSafeConcurrently(t *testing.T) {
	text := strings.Repeat("R1#show ip route\nGateway of last resort is not set\n", 20)
	want := ForModel("gpt-4o").Text(text)
	var wg sync.WaitGroup
	errs := make(chan int, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := ForModel("gpt-4o").Text(text); got != want {
				errs <- got
			}
		}()
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Fatalf("concurrent count %d, want %d", got, want)
	}
}

func TestBudget(t *testing.T) {
	cases := []struct {
		k        int
		strategy string
		sys, tls int
		want     int
	}{
		{128, Conservative, 0, 0, 76800},
		{128, Balanced, 0, 0, 96000},
		{128, Aggressive, 0, 0, 108800},
		{128, "", 0, 0, 96000},
		{128, "bogus", 0, 0, 96000},
		{8, Balanced, 1000, 2000, 3000},
		{8, Conservative, 4000, 2000, 0},
		{0, Balanced, 0, 0, DefaultContextLimitK * 750},
		{-5, Balanced, 0, 0, DefaultContextLimitK * 750},
	}
	for _, tc := range cases {
		if got := Budget(tc.k, tc.strategy, tc.sys, tc.tls); got != tc.want {
			t.Errorf("Budget(%d, %q, %d, %d) = %d, want %d", tc.k, tc.strategy, tc.sys, tc.tls, got, tc.want)
		}
	}
	if !ValidStrategy(Balanced) || ValidStrategy("Balanced") || ValidStrategy("") {
		t.Fatal("ValidStrategy accepts only the exact names")
	}
	if len(Strategies()) != 3 {
		t.Fatal("three strategies")
	}
}

var showOutput = strings.Repeat("GigabitEthernet0/1     10.0.12.1       YES manual up                    up      \n", 1250)

// BenchmarkCount100KB is the tokenizer itself: a 100 KB tool output counted for the first time.
func BenchmarkCount100KB(b *testing.B) {
	c := ForModel("gpt-4o")
	c.Text("warm up")
	b.SetBytes(int64(len(showOutput)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.count(showOutput)
	}
}

// BenchmarkCount100KBAgain is the same output counted again before the turn's next LLM call.
func BenchmarkCount100KBAgain(b *testing.B) {
	c := ForModel("gpt-4o")
	c.Text(showOutput)
	b.SetBytes(int64(len(showOutput)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Text(showOutput)
	}
}

// Issue 36: a definition whose parameters are JSON is counted from the cache on every call
// after its first, and the count is the one its encoding gives; a definition that differs in
// any part is counted afresh.
func TestToolCountsAreRememberedByTheirParts(t *testing.T) {
	c := ForModel("gpt-4o")
	def := func(desc string) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "run_show_commands", Description: desc,
			Parameters: json.RawMessage(`{"type":"object","properties":{"commands":{"type":"array","items":{"type":"string"}}}}`),
		}}
	}
	tool := def("Run show commands on the devices " + strings.Repeat("through their consoles ", 40))
	b, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	want := perTool + c.Text(string(b))
	key, keyed := toolKey(c.encoding, tool)
	if !keyed {
		t.Fatal("a definition with JSON parameters has no key")
	}
	if got := c.Tools([]openai.Tool{tool}); got != want {
		t.Fatalf("first count %d, want %d", got, want)
	}
	if n, ok := counts.Get(key); !ok || perTool+c.scale(n) != want {
		t.Fatalf("cached %d (%v), want the count of the encoding", n, ok)
	}
	if got := c.Tools([]openai.Tool{tool}); got != want {
		t.Fatalf("second count %d, want %d", got, want)
	}
	longer := def("Run show commands on the devices " + strings.Repeat("through their consoles ", 80))
	if got := c.Tools([]openai.Tool{longer}); got <= want {
		t.Fatalf("a longer description counted %d, not more than %d", got, want)
	}
	if other, _ := toolKey(c.encoding, longer); other == key {
		t.Fatal("two definitions share a key")
	}
	if _, keyed := toolKey(c.encoding, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "x", Parameters: map[string]any{}}}); keyed {
		t.Fatal("parameters given as a Go value are keyed: their encoding is not known without encoding them")
	}
}

// A bound is never below the count it stands for, for exact vocabularies and for estimates
// alike, and is a byte count: texts, messages and tool definitions.
func TestBoundsAreNeverBelowTheCounts(t *testing.T) {
	texts := []string{"", "a", "Hello, world!", "show running-config", "Grüße, 你好 🙂",
		strings.Repeat("interface GigabitEthernet0/1\n ip address 10.0.0.1 255.255.255.0\n!\n", 40)}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "run_show", Description: "Run a show command on <devices> & report.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}}
	for _, model := range []string{"gpt-4o", "gpt-4", "llama3"} {
		c := ForModel(model)
		b := c.Bounded()
		if b.Encoding() != c.Encoding() || b.Exact() != c.Exact() {
			t.Fatalf("%s: the bounded counter is of another model", model)
		}
		for _, s := range texts {
			if b.Text(s) < c.Text(s) {
				t.Errorf("%s: bound %d below count %d of %q", model, b.Text(s), c.Text(s), s)
			}
			if c.Exact() && b.Text(s) != len(s) {
				t.Errorf("%s: bound %d of %q is not its %d bytes", model, b.Text(s), s, len(s))
			}
			m := openai.ChatCompletionMessage{Role: "assistant", Content: s, ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function",
				Function: openai.FunctionCall{Name: "run_show", Arguments: `{"command":"` + s + `"}`}}}}
			if b.Message(m) < c.Message(m) {
				t.Errorf("%s: message bound %d below its count %d", model, b.Message(m), c.Message(m))
			}
		}
		if b.Tools(tools) < c.Tools(tools) {
			t.Errorf("%s: tools bound %d below their count %d", model, b.Tools(tools), c.Tools(tools))
		}
	}
}
