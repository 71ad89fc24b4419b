package fakeopenai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// post sends a raw chat-completions request and returns the status and body.
func post(t *testing.T, s *fakeopenai.Server, body map[string]any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// events splits a stream into its data payloads and its comment lines.
func events(body []byte) (data []map[string]any, comments []string) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			comments = append(comments, line)
		case strings.HasPrefix(line, "data: ") && line != "data: [DONE]":
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil {
				data = append(data, m)
			}
		}
	}
	return data, comments
}

func deltas(data []map[string]any) []map[string]any {
	var out []map[string]any
	for _, d := range data {
		if ch, ok := d["choices"].([]any); ok && len(ch) > 0 {
			out = append(out, ch[0].(map[string]any)["delta"].(map[string]any))
		}
	}
	return out
}

var (
	user       = map[string]any{"role": "user", "content": "What is in my lab?"}
	toolCalled = func(extra map[string]any) map[string]any {
		m := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "get_gns3_topology", "arguments": "{}"}}}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	toolResult = map[string]any{"role": "tool", "tool_call_id": "c1", "content": "{}"}
)

// DeepSeek V4 streams reasoning_content first, and refuses an exchange with tool calls whose
// assistant messages do not carry it back, in that turn and later ones; elsewhere it is
// optional, and an empty one is accepted.
func TestDeepSeekThinkingEmulation(t *testing.T) {
	s := fakeopenai.New(t)
	s.Emulate(fakeopenai.DeepSeekThinking)
	s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Reply{Reasoning: []string{"Think ", "first."}, Content: []string{"ok"}}, true
	})
	code, body := post(t, s, map[string]any{"model": "deepseek-v4-pro", "stream": true, "messages": []any{user}})
	require.Equal(t, http.StatusOK, code)
	d := deltas(func() []map[string]any { x, _ := events(body); return x }())
	require.Equal(t, "Think ", d[1]["reasoning_content"])
	require.Equal(t, "first.", d[2]["reasoning_content"])
	require.Equal(t, "ok", d[3]["content"])

	refused := []any{user, toolCalled(nil), toolResult}
	code, body = post(t, s, map[string]any{"model": "deepseek-v4-pro", "messages": refused})
	require.Equal(t, http.StatusBadRequest, code)
	require.JSONEq(t, `{"error":{"message":"`+strings.ReplaceAll(fakeopenai.DeepSeekReasoningMissing, "`", "`")+`","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, string(body))

	// A later turn still needs it on the earlier exchange's messages, final answer included.
	later := []any{user, toolCalled(map[string]any{"reasoning_content": "r"}), toolResult,
		map[string]any{"role": "assistant", "content": "Two nodes."}, map[string]any{"role": "user", "content": "thanks"}}
	code, _ = post(t, s, map[string]any{"model": "deepseek-v4-pro", "messages": later})
	require.Equal(t, http.StatusBadRequest, code)
	later[3].(map[string]any)["reasoning_content"] = ""
	code, body = post(t, s, map[string]any{"model": "deepseek-v4-pro", "messages": later})
	require.Equal(t, http.StatusOK, code, string(body))

	// Without tools, no reasoning is needed back.
	code, _ = post(t, s, map[string]any{"model": "deepseek-v4-pro", "messages": []any{user,
		map[string]any{"role": "assistant", "content": "hi"}, map[string]any{"role": "user", "content": "again"}}})
	require.Equal(t, http.StatusOK, code)
}

// Gemini 3 signs the first of parallel calls and refuses the turn in progress without the
// signature, in Google's array-shaped body; a changed signature is refused too, Google's
// placeholder passes, and earlier turns are not checked.
func TestGemini3Emulation(t *testing.T) {
	s := fakeopenai.New(t)
	s.Emulate(fakeopenai.Gemini3)
	s.Enqueue(fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: "{}"},
		fakeopenai.ToolCall{ID: "c2", Name: "list_gns3_nodes", Arguments: "{}"}))
	code, body := post(t, s, map[string]any{"model": "gemini-3-pro-preview", "stream": true, "messages": []any{user}})
	require.Equal(t, http.StatusOK, code)
	var sig string
	signed := 0
	for _, d := range deltas(func() []map[string]any { x, _ := events(body); return x }()) {
		calls, _ := d["tool_calls"].([]any)
		for _, c := range calls {
			if ec, ok := c.(map[string]any)["extra_content"].(map[string]any); ok {
				sig = ec["google"].(map[string]any)["thought_signature"].(string)
				signed++
			}
		}
	}
	require.Equal(t, 1, signed, "parallel calls: only the first is signed")

	withSig := func(sig string) map[string]any {
		m := toolCalled(nil)
		calls := []any{m["tool_calls"].([]any)[0], map[string]any{"id": "c2", "type": "function",
			"function": map[string]any{"name": "list_gns3_nodes", "arguments": "{}"}}}
		if sig != "" {
			calls[0].(map[string]any)["extra_content"] = map[string]any{"google": map[string]any{"thought_signature": sig}}
		}
		m["tool_calls"] = calls
		return m
	}
	result2 := map[string]any{"role": "tool", "tool_call_id": "c2", "content": "{}"}
	s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) { return fakeopenai.Text("done"), true })

	code, body = post(t, s, map[string]any{"model": "gemini-3-pro-preview", "messages": []any{user, withSig(""), toolResult, result2}})
	require.Equal(t, http.StatusBadRequest, code)
	var arr []struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &arr), "Google's error body is an array: %s", body)
	require.Equal(t, "INVALID_ARGUMENT", arr[0].Error.Status)
	require.Contains(t, arr[0].Error.Message, fakeopenai.GeminiSignatureMissing)

	code, _ = post(t, s, map[string]any{"model": "gemini-3-pro-preview", "messages": []any{user, withSig(sig + "x"), toolResult, result2}})
	require.Equal(t, http.StatusBadRequest, code, "a changed signature is refused")
	for _, ok := range []string{sig, fakeopenai.GeminiSkipSignature} {
		code, body = post(t, s, map[string]any{"model": "gemini-3-pro-preview", "messages": []any{user, withSig(ok), toolResult, result2}})
		require.Equal(t, http.StatusOK, code, string(body))
	}
	// An earlier turn's unsigned calls are not checked.
	code, _ = post(t, s, map[string]any{"model": "gemini-3-pro-preview", "messages": []any{user, withSig(""), toolResult, result2,
		map[string]any{"role": "assistant", "content": "done"}, map[string]any{"role": "user", "content": "and now?"}}})
	require.Equal(t, http.StatusOK, code)
}

// OpenRouter in front of DeepSeek: comments before the data, reasoning and reasoning_details,
// and DeepSeek's refusal passed on in metadata.raw when neither comes back.
func TestOpenRouterDeepSeekEmulation(t *testing.T) {
	s := fakeopenai.New(t)
	s.Emulate(fakeopenai.OpenRouterDeepSeek)
	s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Reply{Reasoning: []string{"a", "b"}, Content: []string{"ok"}}, true
	})
	code, body := post(t, s, map[string]any{"model": "deepseek/deepseek-v4-pro", "stream": true, "messages": []any{user}})
	require.Equal(t, http.StatusOK, code)
	require.True(t, strings.HasPrefix(string(body), ": OPENROUTER PROCESSING\n\n"), "comments come before the data")
	data, comments := events(body)
	require.GreaterOrEqual(t, len(comments), 3)
	d := deltas(data)
	require.Equal(t, "a", d[1]["reasoning"])
	require.Equal(t, []any{map[string]any{"type": "reasoning.text", "text": "a", "format": "unknown", "index": float64(0)}}, d[1]["reasoning_details"])

	code, body = post(t, s, map[string]any{"model": "deepseek/deepseek-v4-pro", "messages": []any{user, toolCalled(nil), toolResult}})
	require.Equal(t, http.StatusBadRequest, code)
	var e struct {
		Error struct {
			Message  string `json:"message"`
			Metadata struct {
				Raw          string `json:"raw"`
				ProviderName string `json:"provider_name"`
			} `json:"metadata"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e))
	require.Equal(t, "Provider returned error", e.Error.Message)
	require.Equal(t, "DeepSeek", e.Error.Metadata.ProviderName)
	require.Contains(t, e.Error.Metadata.Raw, fakeopenai.DeepSeekReasoningMissing)

	for _, back := range []map[string]any{{"reasoning": "ab"}, {"reasoning_details": []any{map[string]any{"type": "reasoning.text", "text": "ab", "index": 0}}}} {
		code, body = post(t, s, map[string]any{"model": "deepseek/deepseek-v4-pro", "messages": []any{user, toolCalled(back), toolResult}})
		require.Equal(t, http.StatusOK, code, string(body))
	}
}

// OpenRouter in front of a model that signs its reasoning refuses details that are missing,
// changed or out of order in the turn in progress.
func TestOpenRouterSignedEmulation(t *testing.T) {
	s := fakeopenai.New(t)
	s.Emulate(fakeopenai.OpenRouterSigned)
	s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Reply{Reasoning: []string{"Look ", "first."}, Content: []string{"ok"}}, true
	})
	code, body := post(t, s, map[string]any{"model": "anthropic/claude-sonnet-4.5", "messages": []any{user}})
	require.Equal(t, http.StatusOK, code)
	var resp struct {
		Choices []struct {
			Message struct {
				ReasoningDetails []map[string]any `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &resp))
	issued := resp.Choices[0].Message.ReasoningDetails
	require.Len(t, issued, 2, "the signed text, then the encrypted detail")
	require.Equal(t, "Look first.", issued[0]["text"])
	whole := []any{issued[0], issued[1]}
	send := func(details []any) int {
		extra := map[string]any{}
		if details != nil {
			extra["reasoning_details"] = details
		}
		code, _ := post(t, s, map[string]any{"model": "anthropic/claude-sonnet-4.5", "messages": []any{user, toolCalled(extra), toolResult}})
		return code
	}
	require.Equal(t, http.StatusOK, send(whole))
	require.Equal(t, http.StatusBadRequest, send(nil), "missing")
	require.Equal(t, http.StatusBadRequest, send([]any{whole[1], whole[0]}), "out of order")
	changed := map[string]any{"type": "reasoning.text", "text": "Look second.", "signature": issued[0]["signature"], "index": 0}
	require.Equal(t, http.StatusBadRequest, send([]any{changed, whole[1]}), "changed")
}

// vLLM streams reasoning in its own field and refuses a reasoning field that is not text.
func TestVLLMReasoningEmulation(t *testing.T) {
	s := fakeopenai.New(t)
	s.Emulate(fakeopenai.VLLMReasoning)
	s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Reply{Reasoning: []string{"plan"}, Content: []string{"ok"}}, true
	})
	code, body := post(t, s, map[string]any{"model": "Qwen/Qwen3-8B", "stream": true, "messages": []any{user}})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "plan", deltas(func() []map[string]any { x, _ := events(body); return x }())[1]["reasoning"])
	code, _ = post(t, s, map[string]any{"model": "Qwen/Qwen3-8B", "messages": []any{user, toolCalled(map[string]any{"reasoning_content": map[string]any{"x": 1}}), toolResult}})
	require.Equal(t, http.StatusBadRequest, code)
}

// llama.cpp without a reasoning parser puts the reasoning in the content, tags cut across
// chunks, with or without the opening tag.
func TestLlamaCppThinkEmulation(t *testing.T) {
	for p, want := range map[fakeopenai.Provider]string{
		fakeopenai.LlamaCppThink:             "<think>\nplan\n</think>\n\nok",
		fakeopenai.LlamaCppThinkOpenInPrompt: "plan\n</think>\n\nok",
	} {
		s := fakeopenai.New(t)
		s.Emulate(p)
		s.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) {
			return fakeopenai.Reply{Reasoning: []string{"plan"}, Content: []string{"ok"}}, true
		})
		code, body := post(t, s, map[string]any{"model": "qwen3-8b", "stream": true, "messages": []any{user}})
		require.Equal(t, http.StatusOK, code)
		var content strings.Builder
		for _, d := range deltas(func() []map[string]any { x, _ := events(body); return x }()) {
			c, _ := d["content"].(string)
			content.WriteString(c)
			require.NotEqual(t, "<think>", c, "the tag is cut across chunks")
		}
		require.Equal(t, want, content.String(), p)
	}
}
