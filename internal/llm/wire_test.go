package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// The event reader keeps to the SSE specification where providers lean on it (comments before
// and between the data, CRLF line ends, data split over several lines) and to what servers that
// leave out the blank lines mean.
func TestEventReader(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		want   []string
	}{
		{"OpenAI", "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, `{"a":2}`}},
		{"OpenRouter's comments", ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {\"a\":1}\n\n: OPENROUTER PROCESSING\n\ndata: [DONE]\n\n", []string{`{"a":1}`}},
		{"CRLF", "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n", []string{`{"a":1}`}},
		{"no space after the colon", "data:{\"a\":1}\n\n", []string{`{"a":1}`}},
		{"one event on two lines", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"no blank lines", "data: {\"a\":1}\ndata: {\"a\":2}\ndata: [DONE]\n", []string{`{"a":1}`, `{"a":2}`}},
		{"other fields", "event: message\nid: 7\nretry: 100\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no end line", "data: {\"a\":1}", []string{`{"a":1}`}},
		{"nothing after DONE is read", "data: [DONE]\n\ndata: {\"a\":1}\n\n", nil},
		{"many comments", strings.Repeat(": OPENROUTER PROCESSING\n\n", 5000) + "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newEventReader(strings.NewReader(tc.stream))
			var got []string
			for {
				data, err := r.next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				got = append(got, string(data))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// sse answers every request with these SSE events (each a JSON value, or a raw line when it
// starts with ":"), after recording the request body.
func sse(t *testing.T, events ...string) (string, *[]map[string]any) {
	t.Helper()
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			if strings.HasPrefix(ev, ":") {
				fmt.Fprint(w, ev+"\n\n")
				continue
			}
			fmt.Fprint(w, "data: "+ev+"\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &bodies
}

func delta(fields string) string {
	return `{"choices":[{"index":0,"delta":{` + fields + `},"finish_reason":null}]}`
}

func finish(reason string) string {
	return `{"choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}],"usage":{"prompt_tokens":10,"completion_tokens":20}}`
}

// Each provider's way of sending reasoning is read into Reasoning and the state it needs back,
// never into the answer, and streamed to the Reasoning hook as it arrives.
func TestStreamReadsEveryDialectsReasoning(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		model     string
		events    []string
		content   string
		reasoning string
		check     func(t *testing.T, a Answer)
	}{
		{"DeepSeek's reasoning_content", "deepseek", "deepseek-v4-pro", []string{
			delta(`"role":"assistant","content":null,"reasoning_content":"The user "`),
			delta(`"content":null,"reasoning_content":"wants the topology."`),
			delta(`"content":"Looking."`),
			finish("stop"),
		}, "Looking.", "The user wants the topology.", nil},
		{"vLLM's reasoning", "vllm", "Qwen/Qwen3-8B", []string{
			delta(`"reasoning":"Check R1 first."`),
			delta(`"content":"R1 is up."`),
			finish("stop"),
		}, "R1 is up.", "Check R1 first.", nil},
		{"OpenRouter's reasoning and details, with comments", "openrouter", "deepseek/deepseek-v4-pro", []string{
			": OPENROUTER PROCESSING",
			delta(`"reasoning":"Step one","reasoning_details":[{"type":"reasoning.text","text":"Step one","format":"unknown","index":0}]`),
			": OPENROUTER PROCESSING",
			delta(`"reasoning":", step two.","reasoning_details":[{"type":"reasoning.text","text":", step two.","index":0}]`),
			delta(`"reasoning_details":[{"type":"reasoning.text","signature":"sig-1","index":0},{"type":"reasoning.encrypted","data":"ENC==","id":"rs_1","format":"anthropic-claude-v1","index":1}]`),
			delta(`"content":"Done."`),
			finish("stop"),
		}, "Done.", "Step one, step two.", func(t *testing.T, a Answer) {
			require.Len(t, a.details, 2)
			require.JSONEq(t, `{"type":"reasoning.text","text":"Step one, step two.","format":"unknown","index":0,"signature":"sig-1"}`, string(a.details[0]))
			require.Equal(t, `{"type":"reasoning.encrypted","data":"ENC==","id":"rs_1","format":"anthropic-claude-v1","index":1}`, string(a.details[1]),
				"a detail that came whole goes back byte for byte")
		}},
		{"details alone are the readable reasoning", "openrouter", "openai/gpt-5", []string{
			delta(`"reasoning_details":[{"type":"reasoning.summary","summary":"**Checking**","index":0}]`),
			delta(`"content":"ok"`),
			finish("stop"),
		}, "ok", "**Checking**", nil},
		{"Gemini's signatures on tool calls", "google", "gemini-3-pro-preview", []string{
			delta(`"role":"assistant","tool_calls":[{"index":0,"id":"fc_1","type":"function","function":{"name":"get_gns3_topology","arguments":"{}"},"extra_content":{"google":{"thought_signature":"SIG/A=="}}}]`),
			delta(`"tool_calls":[{"index":1,"id":"fc_2","type":"function","function":{"name":"list_gns3_nodes","arguments":"{}"}}]`),
			finish("tool_calls"),
		}, "", "", func(t *testing.T, a Answer) {
			require.Len(t, a.ToolCalls, 2)
			require.JSONEq(t, `{"google":{"thought_signature":"SIG/A=="}}`, string(a.ToolCalls[0].extra))
			require.Nil(t, a.ToolCalls[1].extra, "parallel calls: only the first is signed")
		}},
		{"think tags of a local server", "ollama", "qwen3:8b", []string{
			delta(`"content":"<thi"`),
			delta(`"content":"nk>\nR1 lacks a route."`),
			delta(`"content":"\n</th"`),
			delta(`"content":"ink>\n\nAdd a default route on R1."`),
			finish("stop"),
		}, "Add a default route on R1.", "R1 lacks a route.", nil},
		{"a thinking model whose template opens the tag", "custom", "DeepSeek-R1-Distill-Qwen-7B", []string{
			delta(`"content":"Okay, the user says hi."`),
			delta(`"content":"\n</think>\n\nHello!"`),
			finish("stop"),
		}, "Hello!", "Okay, the user says hi.", nil},
		{"tags from OpenAI are the answer's text", "openai", "gpt-4.1", []string{
			delta(`"content":"<think> is an HTML-like tag."`),
			finish("stop"),
		}, "<think> is an HTML-like tag.", "", nil},
		{"content parts with a thinking part", "custom", "magistral-medium-latest", []string{
			delta(`"content":[{"type":"thinking","thinking":[{"type":"text","text":"Which node? "}]}]`),
			delta(`"content":[{"type":"text","text":"PC1."}]`),
			finish("stop"),
		}, "PC1.", "Which node? ", nil},
		{"unknown reasoning shapes are kept, not fatal", "deepseek", "deepseek-v4-flash", []string{
			delta(`"reasoning_content":{"steps":["a","b"]},"thinking_signature":"xyz","reasoning_details":"not an array"`),
			delta(`"content":"fine"`),
			finish("stop"),
		}, "fine", "", func(t *testing.T, a Answer) {
			require.JSONEq(t, `{"steps":["a","b"]}`, string(a.unknown["reasoning_content"][0]))
			require.Equal(t, `"xyz"`, string(a.unknown["thinking_signature"][0]))
			require.Equal(t, `"not an array"`, string(a.unknown["reasoning_details"][0]))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := sse(t, tc.events...)
			s := llmconfig.Settings{Provider: tc.provider, BaseURL: url, Model: tc.model, APIKey: "k", Trusted: true}
			var content, reasoning strings.Builder
			ans, err := NewClient(nil, nil).Stream(context.Background(), s, hello, Deltas{
				Content:   func(t string) { content.WriteString(t) },
				Reasoning: func(t string) { reasoning.WriteString(t) },
			})
			require.NoError(t, err)
			require.Equal(t, tc.content, ans.Content)
			require.Equal(t, tc.content, content.String(), "what streamed as content is the answer")
			require.Equal(t, tc.reasoning, ans.Reasoning)
			if tc.reasoning != "" {
				require.Contains(t, reasoning.String(), tc.reasoning, "the reasoning streamed through its hook")
				require.NotContains(t, ans.Content, tc.reasoning)
				require.Positive(t, ans.FirstToken)
			}
			require.Equal(t, int64(20), ans.OutputTokens)
			if tc.check != nil {
				tc.check(t, ans)
			}
		})
	}
}

// An error a provider sends in the middle of a stream, after comment lines, is read in its own
// words (go-openai's reader took the comments for the start of an error body).
func TestStreamErrorAfterCommentsIsInTheProvidersWords(t *testing.T) {
	url, _ := sse(t, ": OPENROUTER PROCESSING", delta(`"reasoning":"thinking"`),
		`{"id":"gen-1","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`)
	s := llmconfig.Settings{Provider: "openrouter", BaseURL: url, Model: "deepseek/deepseek-v4-pro", Trusted: true}
	ans, err := NewClient(nil, nil).Stream(context.Background(), s, hello, Deltas{})
	var failure *Error
	require.ErrorAs(t, err, &failure)
	require.Contains(t, failure.Message, "reported an error: Provider disconnected")
	require.True(t, failure.Retryable())
	require.Equal(t, "thinking", ans.Reasoning, "what arrived is kept")
}

// An unstreamed answer (the session's title) keeps reasoning out of its content too.
func TestCompleteKeepsReasoningOutOfTheAnswer(t *testing.T) {
	for _, tc := range []struct{ provider, message string }{
		{"deepseek", `{"role":"assistant","content":"Lab check","reasoning_content":"A short title."}`},
		{"ollama", `{"role":"assistant","content":"<think>A short title.</think>\n\nLab check"}`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"index":0,"message":`+tc.message+`,"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`)
		}))
		s := llmconfig.Settings{Provider: tc.provider, BaseURL: srv.URL + "/v1", Model: "m", Trusted: true}
		ans, err := NewClient(nil, nil).Complete(context.Background(), s, hello.Messages, 24)
		srv.Close()
		require.NoError(t, err)
		require.Equal(t, "Lab check", ans.Content, tc.provider)
		require.Equal(t, "A short title.", ans.Reasoning, tc.provider)
		require.Equal(t, int64(4), ans.OutputTokens)
	}
}

// A server that parses the reasoning out itself (vLLM, Ollama) streams the answer as it comes,
// even for a model whose template would put the opening tag into the prompt: its content is not
// held back for a closing tag that will never come.
func TestParsedReasoningLetsTheAnswerStream(t *testing.T) {
	var got []string
	a := newAnswer(dialectFor(llmconfig.Settings{Provider: "vllm", Model: "Qwen/Qwen3.5-27B"}), "Qwen/Qwen3.5-27B",
		Deltas{Content: func(s string) { got = append(got, s) }}, time.Now())
	require.NotNil(t, a.think)
	a.take(map[string]rawJSON{"reasoning": rawJSON(`"plan"`)})
	a.take(map[string]rawJSON{"content": rawJSON(`"The answer"`)})
	require.Equal(t, []string{"The answer"}, got, "the answer streamed before the end")
}
