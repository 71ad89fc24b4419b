package llmconfig

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// toolSchema uses the keywords the copilot's real tools use, plus a property named like a
// keyword, which must survive any cleaning.
const toolSchema = `{"type":"object","additionalProperties":false,"required":["node_ids"],"properties":{
 "node_ids":{"type":"array","minItems":1,"uniqueItems":true,"items":{"type":"string"}},
 "default":{"type":"string","description":"a property called default"},
 "mode":{"const":"fast"},
 "opts":{"type":"object","additionalProperties":{"type":"string"},"properties":{"x":{"type":"integer","minimum":1}}}}}`

// send shapes the request the way the LLM activity builds it and sends it to the fake model,
// returning the body the provider would receive.
func send(t *testing.T, provider string, temperature float32, maxTokens int) (fakeopenai.Request, map[string]any) {
	t.Helper()
	fake := fakeopenai.New(t)
	fake.Enqueue(fakeopenai.Text("ok"))
	s := Settings{Provider: provider, BaseURL: fake.URL, Model: "some-model", APIKey: "k-" + provider, MaxTokens: maxTokens}
	req := openai.ChatCompletionRequest{
		Model:         s.Model,
		Messages:      []openai.ChatCompletionMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: "hi"}},
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Temperature:   temperature,
		MaxTokens:     maxTokens,
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "start_gns3_node", Description: "start nodes", Parameters: json.RawMessage(toolSchema)}}},
	}
	ShapeRequest(s, &req)
	cfg := openai.DefaultConfig(s.APIKey)
	cfg.BaseURL = s.BaseURL
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: the fake model refused the shaped request: %v", provider, err)
	}
	var text strings.Builder
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	stream.Close()
	if text.String() != "ok" {
		t.Fatalf("%s: streamed %q", provider, text.String())
	}
	got, ok := fake.LastRequest()
	if !ok {
		t.Fatal("no request recorded")
	}
	var body map[string]any
	if err := json.Unmarshal(got.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return got, body
}

func schemaOf(t *testing.T, r fakeopenai.Request) map[string]any {
	t.Helper()
	if len(r.Tools) != 1 {
		t.Fatalf("tools: %v", r.Tools)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Tools[0].Parameters, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPresetRequestOpenAIUnchanged(t *testing.T) {
	r, body := send(t, "openai", 1.5, 0)
	if !r.IncludeUsage() || *r.Temperature != 1.5 || body["max_tokens"] != nil {
		t.Fatalf("openai request changed: %s", r.Raw)
	}
	if !strings.Contains(string(r.Tools[0].Parameters), `"additionalProperties"`) {
		t.Fatalf("openai schema changed: %s", r.Tools[0].Parameters)
	}
}

func TestPresetRequestAnthropic(t *testing.T) {
	r, _ := send(t, "anthropic", 1.5, 0)
	if r.Authorization != "Bearer k-anthropic" {
		t.Fatalf("authorization %q", r.Authorization)
	}
	if *r.Temperature != 1 {
		t.Fatalf("temperature %v, want Claude's maximum 1", *r.Temperature)
	}
	if r.MaxTokens == nil || *r.MaxTokens != anthropicDefaultMaxTokens {
		t.Fatalf("max_tokens %v, want %d when the configuration sets none", r.MaxTokens, anthropicDefaultMaxTokens)
	}
	if !r.IncludeUsage() {
		t.Fatal("Anthropic supports stream_options; usage must still be asked for")
	}
	// The configuration's own limit and a temperature in range go through as they are.
	r, _ = send(t, "anthropic", 0.3, 1000)
	if math.Abs(*r.Temperature-0.3) > 1e-6 || *r.MaxTokens != 1000 {
		t.Fatalf("temperature %v, max_tokens %v", *r.Temperature, *r.MaxTokens)
	}
}

func TestPresetRequestGoogle(t *testing.T) {
	r, body := send(t, "google", 0.7, 0)
	if _, ok := body["stream_options"]; ok {
		t.Fatalf("stream_options sent to Gemini: %s", r.Raw)
	}
	raw := string(r.Tools[0].Parameters)
	for _, kw := range []string{"additionalProperties", "uniqueItems", `"const"`} {
		if strings.Contains(raw, kw) {
			t.Fatalf("schema still has %s: %s", kw, raw)
		}
	}
	s := schemaOf(t, r)
	props := s["properties"].(map[string]any)
	if _, ok := props["default"]; !ok {
		t.Fatalf("the property named default was removed: %s", raw)
	}
	if props["node_ids"].(map[string]any)["minItems"] != 1.0 || s["required"].([]any)[0] != "node_ids" {
		t.Fatalf("supported keywords must stay: %s", raw)
	}
	if enum := props["mode"].(map[string]any)["enum"].([]any); len(enum) != 1 || enum[0] != "fast" {
		t.Fatalf("const became %v, want enum [fast]", props["mode"])
	}
	if props["opts"].(map[string]any)["properties"].(map[string]any)["x"].(map[string]any)["minimum"] != 1.0 {
		t.Fatalf("nested schema damaged: %s", raw)
	}
}

func TestPresetRequestXAI(t *testing.T) {
	r, _ := send(t, "xai", 1.2, 0)
	if !r.IncludeUsage() || *r.Temperature != 1.2 || r.MaxTokens != nil || r.APIKey() != "k-xai" {
		t.Fatalf("xAI speaks OpenAI's dialect; the request must go as built: %s", r.Raw)
	}
	if !strings.Contains(string(r.Tools[0].Parameters), "additionalProperties") {
		t.Fatalf("schema changed: %s", r.Tools[0].Parameters)
	}
}

func TestPresetRequestAWS(t *testing.T) {
	r, body := send(t, "aws", 0.5, 0)
	if _, ok := body["stream_options"]; ok {
		t.Fatalf("stream_options sent to Bedrock: %s", r.Raw)
	}
	if r.APIKey() != "k-aws" || !r.Stream || len(r.Tools) != 1 {
		t.Fatalf("request: %s", r.Raw)
	}
}

func TestPresetsOfThePanelCreateWithoutBaseURL(t *testing.T) {
	st := NewStore(testDB(t), sealer(t, 1), nil)
	for id, url := range map[string]string{
		"anthropic": "https://api.anthropic.com/v1",
		"google":    "https://generativelanguage.googleapis.com/v1beta/openai",
		"xai":       "https://api.x.ai/v1",
		"aws":       "https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1",
	} {
		ch := openAIChange(id)
		ch.Provider = ptr(id)
		c, err := st.Create(context.Background(), UserOwner("u-"+id), ch)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if c.BaseURL != url {
			t.Fatalf("%s: base URL %q, want %q", id, c.BaseURL, url)
		}
		ch = openAIChange(id + " no key")
		ch.Provider, ch.APIKey = ptr(id), nil
		if _, err := st.Create(context.Background(), UserOwner("u-"+id), ch); err == nil || !strings.Contains(err.Error(), "api_key is required") {
			t.Fatalf("%s without a key: %v", id, err)
		}
	}
}
