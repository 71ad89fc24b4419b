package llm_test

// This file reaches the stream code through its public API only (Client.Stream against an HTTP
// server), so it holds whatever the stream and request code becomes behind that API.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
)

// Bounds of one fuzz input: a replayed stream is read in a millisecond; the memory is the
// answer, the accumulated calls and go-openai's reading of the lines.
const (
	streamDeadline = 20 * time.Second
	streamMemory   = 64 << 20
)

// What the fuzzed server answers with: the status and content type by index.
var (
	fuzzStatuses     = []int{http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}
	fuzzContentTypes = []string{"text/event-stream", "text/event-stream; charset=utf-8", "application/json", "text/html", ""}
)

// recordedStream is what fakeopenai (the repo's model of OpenAI's streaming) sends for a reply.
func recordedStream(f *testing.F, r fakeopenai.Reply) []byte {
	provider := fakeopenai.New(f)
	provider.Enqueue(r)
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(provider.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		f.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// sse lays chunks out as a stream of server-sent events ending with [DONE].
func sse(chunks ...string) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// encodeStream is a stream that answers text, in pieces, and one call of a tool whose
// arguments arrive in fragments: the encoding side of the accumulator's round trip.
func encodeStream(text, args string) []byte {
	chunk := func(delta openai.ChatCompletionStreamChoiceDelta, finish openai.FinishReason) string {
		b, _ := json.Marshal(openai.ChatCompletionStreamResponse{ID: "c", Object: "chat.completion.chunk", Model: "m",
			Choices: []openai.ChatCompletionStreamChoice{{Index: 0, Delta: delta, FinishReason: finish}}})
		return string(b)
	}
	chunks := []string{chunk(openai.ChatCompletionStreamChoiceDelta{Role: "assistant"}, "")}
	for _, piece := range pieces(text, 7) {
		chunks = append(chunks, chunk(openai.ChatCompletionStreamChoiceDelta{Content: piece}, ""))
	}
	zero := 0
	for i, piece := range pieces(args, 5) {
		call := openai.ToolCall{Index: &zero, Function: openai.FunctionCall{Arguments: piece}}
		if i == 0 {
			call.ID, call.Type, call.Function.Name = "call_1", openai.ToolTypeFunction, "get_gns3_topology"
		}
		chunks = append(chunks, chunk(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{call}}, ""))
	}
	if args == "" {
		call := openai.ToolCall{Index: &zero, ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "get_gns3_topology"}}
		chunks = append(chunks, chunk(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{call}}, ""))
	}
	chunks = append(chunks, chunk(openai.ChatCompletionStreamChoiceDelta{}, openai.FinishReasonToolCalls))
	return sse(chunks...)
}

// pieces cuts s into pieces of at most n bytes, never inside a rune.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// streamed is what one Stream call gave, with what its deltas reported on the way.
type streamed struct {
	ans      llm.Answer
	err      error
	deltas   strings.Builder
	lastArgs map[int]string
	shrunk   string
}

// streamFrom streams from url as provider's dialect reads it: "custom" splits <think> blocks
// out of the answer, "openai" keeps an answer's text as it came.
func streamFrom(url, provider string) *streamed {
	var out streamed
	out.lastArgs = map[int]string{}
	ctx, cancel := context.WithTimeout(context.Background(), streamDeadline/2)
	defer cancel()
	s := llmconfig.Settings{Provider: provider, BaseURL: url, Model: "m", APIKey: "k", Trusted: true}
	prompt := llm.Prompt{Messages: []llm.Message{llm.Text("user", "hi")}}
	out.ans, out.err = llm.NewClient(nil, nil).Stream(ctx, s, prompt, llm.Deltas{
		Content: func(text string) { out.deltas.WriteString(text) },
		ToolCall: func(c llm.ToolCall) {
			if prev := out.lastArgs[c.Index]; !strings.HasPrefix(c.Arguments, prev) && out.shrunk == "" {
				out.shrunk = prev + " → " + c.Arguments
			}
			out.lastArgs[c.Index] = c.Arguments
		},
	})
	return &out
}

// FuzzModelStream serves any bytes as a model's answer (with the status and content type the
// input picks) to Client.Stream, as a server a user points the copilot at could. The stream
// must end without a panic, within its deadline and without unbounded allocation. What the
// deltas reported is what the answer holds: the text pieces make up its content, a tool call's
// arguments only grow, a successful answer has a finish reason and every call as last
// reported, and a failure is an error a person can read. Then the round trip: a stream encoded
// from a text and a tool call's arguments decodes to exactly that text and that call. The seeds
// are fakeopenai's streams (text, interleaved parallel calls, a stream cut short, an in-band
// error) and chunks in the shapes reasoning models send.
func FuzzModelStream(f *testing.F) {
	for _, r := range []fakeopenai.Reply{
		fakeopenai.Text("Hello from the lab."),
		{Content: []string{"Let me ", "look."}, ToolCalls: []fakeopenai.ToolCall{
			{ID: "a", Name: "get_gns3_topology", Arguments: `{"project_id":"p1"}`},
			{ID: "b", Name: "start_gns3_node", Arguments: `{"node_ids":["n1","n2"]}`}}},
		{Content: []string{"cut"}, Truncate: true, TruncateAfter: 1},
		{Content: []string{"almost"}, StreamError: fakeopenai.Overloaded()},
	} {
		f.Add(uint8(0), uint8(0), recordedStream(f, r), "", "")
	}
	// Reasoning dialects: DeepSeek's reasoning_content, OpenRouter's reasoning_details, and a
	// <think> block inside the content as Qwen and R1 distillations served by Ollama send it.
	f.Add(uint8(0), uint8(0), sse(`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"The user wants "}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"OSPF."}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Check the hello timers."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}`), "", "")
	f.Add(uint8(0), uint8(1), sse(`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"think"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`), "", "")
	f.Add(uint8(0), uint8(0), sse(`{"choices":[{"index":0,"delta":{"content":"<think>R1 is"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":" down</think>R1's link is down."},"finish_reason":"stop"}]}`), "<think>x</think>y", `{"node_ids":["n1"]}`)
	f.Add(uint8(0), uint8(0), sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":7,"id":"x","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}`), "", "{}")
	f.Add(uint8(4), uint8(2), []byte(`{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`), "", "")
	f.Add(uint8(0), uint8(3), []byte("<html><body>GNS3</body></html>"), "", "")

	var body atomic.Pointer[[]byte]
	var status, ctype atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if ct := ctype.Load().(string); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(status.Load().(int))
		_, _ = w.Write(*body.Load())
	}))
	f.Cleanup(srv.Close)
	serve := func(st int, ct string, b []byte, provider string) *streamed {
		status.Store(st)
		ctype.Store(ct)
		body.Store(&b)
		return streamFrom(srv.URL, provider)
	}

	f.Fuzz(func(t *testing.T, statusIdx, ctypeIdx uint8, raw []byte, text, args string) {
		st, ct := fuzzStatuses[int(statusIdx)%len(fuzzStatuses)], fuzzContentTypes[int(ctypeIdx)%len(fuzzContentTypes)]
		valid := utf8.ValidString(text) && utf8.ValidString(args)
		var got, trip *streamed
		fuzzcheck.Bounded(t, streamDeadline, streamMemory+64*uint64(len(raw)+len(text)+len(args)), func() {
			got = serve(st, ct, raw, "custom")
			if valid {
				// A plain dialect's round trip: a local server's would take <think> out of the text.
				trip = serve(http.StatusOK, "text/event-stream", encodeStream(text, args), "openai")
			}
		})
		if got.deltas.String() != got.ans.Content {
			t.Fatalf("the deltas said %q, the answer holds %q", got.deltas.String(), got.ans.Content)
		}
		if got.shrunk != "" {
			t.Fatalf("a tool call's arguments went back: %s", got.shrunk)
		}
		if got.err != nil {
			if got.err.Error() == "" || got.ans.ErrorClass == "" {
				t.Fatalf("a failure without words or class: %#v (class %q)", got.err, got.ans.ErrorClass)
			}
			// The server has sent all it will and closed the body: only a reader that does not
			// end would run into the call's deadline.
			var le *llm.Error
			if !errors.As(got.err, &le) {
				t.Fatalf("a failure that is not an llm.Error: %#v", got.err)
			}
		} else {
			if got.ans.FinishReason == "" {
				t.Fatal("a successful answer without a finish reason")
			}
			for _, c := range got.ans.ToolCalls {
				if c.Arguments != got.lastArgs[c.Index] {
					t.Fatalf("call %d: reported %q last, answered %q", c.Index, got.lastArgs[c.Index], c.Arguments)
				}
			}
		}
		if !valid {
			return
		}
		if trip.err != nil || trip.ans.Content != text || len(trip.ans.ToolCalls) != 1 || !sameCall(trip.ans.ToolCalls[0],
			llm.ToolCall{Index: 0, ID: "call_1", Name: "get_gns3_topology", Arguments: args}) {
			t.Fatalf("round trip of %q and %q: %+v, %v", text, args, trip.ans, trip.err)
		}
	})
}

// sameCall compares the parts of a tool call a caller sees.
func sameCall(a, b llm.ToolCall) bool {
	return a.Index == b.Index && a.ID == b.ID && a.Name == b.Name && a.Arguments == b.Arguments
}
