package fakeopenai_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

func client(url, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = url
	return openai.NewClientWithConfig(cfg)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func streamRequest(tools bool) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:         "gpt-4o-mini",
		Temperature:   0.2,
		MaxTokens:     512,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are a network copilot."},
			{Role: openai.ChatMessageRoleUser, Content: "Show me the topology"},
		},
	}
	if tools {
		req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        "get_topology",
			Description: "Read the project's nodes and links",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"project_id":{"type":"string"}}}`),
		}}}
	}
	return req
}

// collected is what a client that follows the wire format rebuilds from a
// stream.
type collected struct {
	chunks       []openai.ChatCompletionStreamResponse
	content      string
	contentParts int
	calls        map[int]*openai.ToolCall
	callDeltas   map[int]int
	finish       openai.FinishReason
	usage        *openai.Usage
	role         string
}

func drain(t *testing.T, stream *openai.ChatCompletionStream) collected {
	t.Helper()
	c := collected{calls: map[int]*openai.ToolCall{}, callDeltas: map[int]int{}}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return c
		}
		require.NoError(t, err)
		c.chunks = append(c.chunks, resp)
		if resp.Usage != nil {
			c.usage = resp.Usage
		}
		for _, ch := range resp.Choices {
			if ch.Delta.Role != "" {
				c.role = ch.Delta.Role
			}
			if ch.Delta.Content != "" {
				c.content += ch.Delta.Content
				c.contentParts++
			}
			for _, td := range ch.Delta.ToolCalls {
				require.NotNil(t, td.Index, "tool-call delta without index")
				i := *td.Index
				c.callDeltas[i]++
				acc, ok := c.calls[i]
				if !ok {
					require.NotEmpty(t, td.ID, "first delta of call %d carries the id", i)
					require.NotEmpty(t, td.Function.Name, "first delta of call %d carries the name", i)
					acc = &openai.ToolCall{ID: td.ID, Type: td.Type, Function: openai.FunctionCall{Name: td.Function.Name}}
					c.calls[i] = acc
				} else {
					assert.Empty(t, td.ID, "only the first delta of call %d carries the id", i)
					assert.Empty(t, td.Function.Name, "only the first delta of call %d carries the name", i)
				}
				acc.Function.Arguments += td.Function.Arguments
			}
			if ch.FinishReason != "" {
				c.finish = ch.FinishReason
			}
		}
	}
}

func TestStreamContentReassembles(t *testing.T) {
	srv := fakeopenai.New(t)
	text := "Your project has 3 nodes: R1, R2 and PC1.\nR1 links to R2."
	srv.Enqueue(fakeopenai.Text(text))

	stream, err := client(srv.URL, "sk-test-123").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	got := drain(t, stream)

	assert.Equal(t, text, got.content)
	assert.Greater(t, got.contentParts, 5, "text arrives in many chunks")
	assert.Equal(t, "assistant", got.role)
	assert.Equal(t, openai.FinishReasonStop, got.finish)
	require.NotNil(t, got.usage, "usage chunk")
	assert.Positive(t, got.usage.PromptTokens)
	assert.Positive(t, got.usage.CompletionTokens)
	assert.Equal(t, got.usage.PromptTokens+got.usage.CompletionTokens, got.usage.TotalTokens)
	last := got.chunks[len(got.chunks)-1]
	assert.Empty(t, last.Choices, "usage chunk has no choices")
	for _, ch := range got.chunks {
		assert.Equal(t, "chat.completion.chunk", ch.Object)
		assert.Equal(t, got.chunks[0].ID, ch.ID, "one id per completion")
		assert.Equal(t, "gpt-4o-mini", ch.Model)
		assert.NotZero(t, ch.Created)
	}

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, 1, r.Seq)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "Bearer sk-test-123", r.Authorization)
	assert.Equal(t, "sk-test-123", r.APIKey())
	assert.Equal(t, "gpt-4o-mini", r.Model)
	assert.True(t, r.Stream)
	assert.True(t, r.IncludeUsage())
	require.NotNil(t, r.Temperature)
	assert.InDelta(t, 0.2, *r.Temperature, 1e-6)
	require.NotNil(t, r.MaxTokens)
	assert.Equal(t, 512, *r.MaxTokens)
	require.Len(t, r.Messages, 2)
	assert.Equal(t, "system", r.Messages[0].Role)
	assert.Equal(t, "Show me the topology", r.LastUserText())
	assert.Equal(t, []string{"get_topology"}, r.ToolNames())
	assert.JSONEq(t, `{"type":"object","properties":{"project_id":{"type":"string"}}}`, string(r.Tools[0].Parameters))
	st, err := srv.Await(testCtx(t), func(s fakeopenai.Stats) bool { return s.Completed == 1 })
	require.NoError(t, err)
	assert.Equal(t, fakeopenai.Stats{Requests: 1, Completed: 1}, st)
}

func TestStreamToolCallsReassembleByIndex(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		t.Run(fmt.Sprintf("sequential=%v", sequential), func(t *testing.T) {
			srv := fakeopenai.New(t)
			calls := []fakeopenai.ToolCall{
				{ID: "call_topo", Name: "get_topology", Arguments: `{"project_id":"8c3c2d5e-2b2f-4c7a-9a51-1f3e7b0d6c11"}`},
				{Name: "run_show_command", Arguments: `{"node":"R1","command":"show ip interface brief — «résumé»"}`, ArgumentChunkSize: 5},
				{Name: "list_templates", Arguments: `{}`, ArgumentChunks: []string{"{", "}"}},
			}
			reply := fakeopenai.Reply{Content: []string{"Let me ", "look."}, ToolCalls: calls, SequentialToolCalls: sequential}
			srv.Enqueue(reply)

			stream, err := client(srv.URL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
			require.NoError(t, err)
			defer stream.Close()
			got := drain(t, stream)

			assert.Equal(t, "Let me look.", got.content)
			assert.Equal(t, openai.FinishReasonToolCalls, got.finish)
			require.Len(t, got.calls, 3)
			assert.Equal(t, "call_topo", got.calls[0].ID)
			assert.Equal(t, "call_1_1", got.calls[1].ID, "default ids are unique per request and index")
			for i, want := range calls {
				assert.Equal(t, openai.ToolTypeFunction, got.calls[i].Type)
				assert.Equal(t, want.Name, got.calls[i].Function.Name)
				assert.Equal(t, want.Arguments, got.calls[i].Function.Arguments)
				assert.True(t, json.Valid([]byte(got.calls[i].Function.Arguments)))
				assert.Greater(t, got.callDeltas[i], 2, "call %d: arguments split across chunks", i)
			}
			require.NotNil(t, got.usage)

			// Interleaving: with parallel deltas, call 1 starts before call 0 ends.
			var order []int
			for _, ch := range got.chunks {
				for _, c := range ch.Choices {
					for _, td := range c.Delta.ToolCalls {
						order = append(order, *td.Index)
					}
				}
			}
			interleaved := false
			for i := 1; i < len(order); i++ {
				if order[i] < order[i-1] {
					interleaved = true
				}
			}
			assert.Equal(t, !sequential, interleaved, "delta order %v", order)
		})
	}
}

func TestUsageChunkOnlyWhenAsked(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"ok"}, Usage: &fakeopenai.Usage{PromptTokens: 11, CompletionTokens: 7}})
	srv.Enqueue(fakeopenai.Reply{Content: []string{"ok"}, Usage: &fakeopenai.Usage{PromptTokens: 11, CompletionTokens: 7}})
	c := client(srv.URL, "k")

	req := streamRequest(false)
	stream, err := c.CreateChatCompletionStream(testCtx(t), req)
	require.NoError(t, err)
	got := drain(t, stream)
	stream.Close()
	require.NotNil(t, got.usage)
	assert.Equal(t, openai.Usage{PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18,
		PromptTokensDetails:     &openai.PromptTokensDetails{},
		CompletionTokensDetails: &openai.CompletionTokensDetails{}}, *got.usage)

	req.StreamOptions = nil
	stream, err = c.CreateChatCompletionStream(testCtx(t), req)
	require.NoError(t, err)
	got = drain(t, stream)
	stream.Close()
	assert.Nil(t, got.usage)
	assert.NotEmpty(t, got.chunks[len(got.chunks)-1].Choices, "no usage chunk without include_usage")
}

func TestErrorsMapToAPIError(t *testing.T) {
	cases := []struct {
		err    *fakeopenai.APIError
		status int
		code   any
		typ    string
	}{
		{fakeopenai.InvalidAPIKey(), 401, "invalid_api_key", "invalid_request_error"},
		// go-openai turns a JSON null code into int 0.
		{fakeopenai.BadRequest("Invalid 'messages[1].content': string too long.", "messages[1].content"), 400, 0, "invalid_request_error"},
		{fakeopenai.RateLimited(), 429, "rate_limit_exceeded", "requests"},
		{fakeopenai.ServerError(), 500, 0, "server_error"},
		{fakeopenai.ModelNotFound("gpt-9"), 404, "model_not_found", "invalid_request_error"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.Enqueue(fakeopenai.Reply{Error: tc.err}, fakeopenai.Reply{Error: tc.err})
			c := client(srv.URL, "k")

			_, err := c.CreateChatCompletionStream(testCtx(t), streamRequest(true))
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.HTTPStatusCode)
			assert.Equal(t, tc.err.Message, apiErr.Message)
			assert.Equal(t, tc.typ, apiErr.Type)
			assert.Equal(t, tc.code, apiErr.Code)
			if tc.err.Param == "" {
				assert.Nil(t, apiErr.Param)
			} else {
				require.NotNil(t, apiErr.Param)
				assert.Equal(t, tc.err.Param, *apiErr.Param)
			}

			req := streamRequest(false)
			req.Stream, req.StreamOptions = false, nil
			_, err = c.CreateChatCompletion(testCtx(t), req)
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.HTTPStatusCode)
		})
	}
}

func TestRetryAfterHeader(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Error: fakeopenai.RateLimited(), Header: http.Header{"Retry-After": {"2"}}})
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
}

func TestHTMLPage(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{HTMLStatus: http.StatusNotFound}, fakeopenai.Reply{HTMLStatus: http.StatusOK})
	c := client(srv.URL, "k")

	_, err := c.CreateChatCompletionStream(testCtx(t), streamRequest(true))
	var reqErr *openai.RequestError
	require.ErrorAs(t, err, &reqErr, "a non-JSON error page is a RequestError, not an APIError")
	assert.Equal(t, 404, reqErr.HTTPStatusCode)
	assert.Contains(t, string(reqErr.Body), "<html")

	// A 200 HTML page is the nasty case: go-openai opens the stream and its
	// reader then finds no data lines. A client has to look at the
	// Content-Type (or at getting nothing at all) to report it.
	stream, err := c.CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	assert.Contains(t, stream.Header().Get("Content-Type"), "text/html")
	// go-openai reports io.EOF, as if the model had answered nothing: the
	// page has no data lines, and its error accumulator only recognises JSON.
	_, err = stream.Recv()
	assert.ErrorIs(t, err, io.EOF)
}

func TestHangUntilClientCancels(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"Partial ", "answer ", "never sent"}, Hang: true, HangAfter: 2})

	ctx, cancel := context.WithCancel(testCtx(t))
	stream, err := client(srv.URL, "k").CreateChatCompletionStream(ctx, streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()

	var text string
	for text != "Partial answer " {
		resp, err := stream.Recv()
		require.NoError(t, err)
		for _, ch := range resp.Choices {
			text += ch.Delta.Content
		}
	}
	require.NoError(t, srv.WaitHanging(testCtx(t), 1))
	assert.Equal(t, 1, srv.Stats().Hanging)

	cancel()
	_, err = stream.Recv()
	require.Error(t, err)
	st, err := srv.Await(testCtx(t), func(s fakeopenai.Stats) bool { return s.Cancelled == 1 })
	require.NoError(t, err)
	assert.Equal(t, 0, st.Hanging)
	assert.Equal(t, 0, st.Completed)
}

func TestHangBeforeHeadersNonStreaming(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"x"}, Hang: true})
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := client(srv.URL, "k").CreateChatCompletion(ctx, openai.ChatCompletionRequest{
			Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
		done <- err
	}()
	require.NoError(t, srv.WaitHanging(testCtx(t), 1))
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

func TestDropConnection(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"one ", "two ", "three"}, Drop: true, DropAfter: 2})

	stream, err := client(srv.URL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	var text string
	for {
		resp, err := stream.Recv()
		if err != nil {
			assert.NotErrorIs(t, err, io.EOF, "a dropped connection must not look like a finished stream")
			break
		}
		for _, ch := range resp.Choices {
			text += ch.Delta.Content
		}
	}
	assert.Equal(t, "one two ", text)
	assert.Equal(t, 1, srv.Stats().Dropped)
}

func TestTruncatedStreamLooksFinishedToGoOpenAI(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"half ", "an answer"}, Truncate: true, TruncateAfter: 1})
	stream, err := client(srv.URL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	got := drain(t, stream) // ends with io.EOF
	assert.Equal(t, "half ", got.content)
	assert.Empty(t, got.finish, "only the missing finish_reason tells the client")
	assert.Nil(t, got.usage)
}

func TestStreamErrorInBand(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"Starting..."}, StreamError: fakeopenai.Overloaded()})

	stream, err := client(srv.URL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	var text string
	for {
		resp, err := stream.Recv()
		if err != nil {
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, "overloaded", apiErr.Code)
			break
		}
		for _, ch := range resp.Choices {
			text += ch.Delta.Content
		}
	}
	assert.Equal(t, "Starting...", text)
}

func TestNonStreaming(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(
		fakeopenai.Text("Lab topology"),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_a", Name: "get_topology", Arguments: `{"project_id":"p"}`}),
	)
	c := client(srv.URL, "k")
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "name this chat"}}}

	resp, err := c.CreateChatCompletion(testCtx(t), req)
	require.NoError(t, err)
	assert.Equal(t, "chat.completion", resp.Object)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Lab topology", resp.Choices[0].Message.Content)
	assert.Equal(t, openai.FinishReasonStop, resp.Choices[0].FinishReason)
	assert.Positive(t, resp.Usage.TotalTokens)

	resp, err = c.CreateChatCompletion(testCtx(t), req)
	require.NoError(t, err)
	assert.Equal(t, openai.FinishReasonToolCalls, resp.Choices[0].FinishReason)
	require.Len(t, resp.Choices[0].Message.ToolCalls, 1)
	assert.Equal(t, "call_a", resp.Choices[0].Message.ToolCalls[0].ID)
	assert.Equal(t, `{"project_id":"p"}`, resp.Choices[0].Message.ToolCalls[0].Function.Arguments)
}

// TestWireFormat reads the raw bytes, since a client library could hide a
// malformed frame.
func TestWireFormat(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Content: []string{"Hi"}, ToolCalls: []fakeopenai.ToolCall{{ID: "call_x", Name: "f", Arguments: `{"a":1}`, ArgumentChunks: []string{`{"a"`, `:1}`}}}})
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(srv.RootURL+"/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))

	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	frames := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	require.Len(t, frames, 8)
	var decoded []map[string]any
	for _, f := range frames[:len(frames)-1] {
		require.True(t, strings.HasPrefix(f, "data: {"), f)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(f, "data: ")), &m))
		decoded = append(decoded, m)
	}
	assert.Equal(t, "data: [DONE]", frames[len(frames)-1])

	delta := func(i int) map[string]any {
		return decoded[i]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	assert.Equal(t, map[string]any{"role": "assistant", "content": "", "refusal": nil}, delta(0))
	assert.Equal(t, map[string]any{"content": "Hi"}, delta(1))
	assert.Equal(t, map[string]any{"tool_calls": []any{map[string]any{"index": 0.0, "id": "call_x", "type": "function", "function": map[string]any{"name": "f", "arguments": ""}}}}, delta(2))
	assert.Equal(t, map[string]any{"tool_calls": []any{map[string]any{"index": 0.0, "function": map[string]any{"arguments": `{"a"`}}}}, delta(3))
	assert.Equal(t, map[string]any{"tool_calls": []any{map[string]any{"index": 0.0, "function": map[string]any{"arguments": `:1}`}}}}, delta(4))
	finish := decoded[5]["choices"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{}, finish["delta"])
	assert.Equal(t, "tool_calls", finish["finish_reason"])
	for i := 0; i < 6; i++ {
		assert.Contains(t, decoded[i], "usage", "usage is null in every chunk when asked for")
		assert.Nil(t, decoded[i]["usage"])
		assert.Equal(t, "chat.completion.chunk", decoded[i]["object"])
	}
	assert.Equal(t, []any{}, decoded[6]["choices"])
	assert.Contains(t, decoded[6]["usage"], "total_tokens")
}

func TestHandlerRoutesTitleCalls(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.HasTools() {
			return fakeopenai.Text("Topology overview"), true
		}
		return fakeopenai.Reply{}, false
	})
	srv.Enqueue(fakeopenai.Text("first"), fakeopenai.Text("second"))
	c := client(srv.URL, "k")

	run := func(tools bool) string {
		stream, err := c.CreateChatCompletionStream(testCtx(t), streamRequest(tools))
		require.NoError(t, err)
		defer stream.Close()
		return drain(t, stream).content
	}
	assert.Equal(t, "first", run(true))
	assert.Equal(t, "Topology overview", run(false))
	assert.Equal(t, "second", run(true))
	assert.Equal(t, 0, srv.Pending())
}

func TestConcurrentRequests(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Reply{Content: fakeopenai.Words("echo " + req.LastUserText()), ChunkDelay: time.Millisecond}, true
	})
	c := client(srv.URL, "k")
	const n = 16
	var wg sync.WaitGroup
	results := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := streamRequest(true)
			req.Messages[1].Content = fmt.Sprint("message ", i)
			stream, err := c.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				results[i] = err.Error()
				return
			}
			defer stream.Close()
			for {
				resp, err := stream.Recv()
				if err != nil {
					return
				}
				for _, ch := range resp.Choices {
					results[i] += ch.Delta.Content
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		assert.Equal(t, fmt.Sprint("echo message ", i), results[i])
	}
	reqs, err := srv.WaitRequests(testCtx(t), n)
	require.NoError(t, err)
	assert.Len(t, reqs, n)
}

func TestValidationLikeOpenAI(t *testing.T) {
	user := openai.ChatCompletionMessage{Role: "user", Content: "hi"}
	call := openai.ToolCall{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: "{}"}}
	cases := map[string]struct {
		msgs  []openai.ChatCompletionMessage
		param string
		msg   string
	}{
		"orphan tool message": {
			msgs:  []openai.ChatCompletionMessage{user, {Role: "tool", ToolCallID: "call_1", Content: "x"}},
			param: "messages.[1].role", msg: "must be a response to a preceeding message with 'tool_calls'",
		},
		"unanswered tool call": {
			msgs:  []openai.ChatCompletionMessage{user, {Role: "assistant", ToolCalls: []openai.ToolCall{call}}, user},
			param: "messages.[1].role", msg: "did not have response messages: call_1",
		},
		"trailing unanswered tool call": {
			msgs:  []openai.ChatCompletionMessage{user, {Role: "assistant", ToolCalls: []openai.ToolCall{call}}},
			param: "messages.[1].role", msg: "call_1",
		},
		"wrong tool_call_id": {
			msgs:  []openai.ChatCompletionMessage{user, {Role: "assistant", ToolCalls: []openai.ToolCall{call}}, {Role: "tool", ToolCallID: "call_2", Content: "x"}},
			param: "messages.[2].tool_call_id", msg: "not found",
		},
		"unknown role": {
			msgs:  []openai.ChatCompletionMessage{{Role: "robot", Content: "x"}},
			param: "messages[0].role", msg: "Supported values",
		},
		"empty user content": {
			msgs:  []openai.ChatCompletionMessage{{Role: "user"}},
			param: "messages.[0].content", msg: "got null",
		},
		"no messages": {
			msgs:  []openai.ChatCompletionMessage{},
			param: "messages", msg: "too short",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			_, err := client(srv.URL, "k").CreateChatCompletion(testCtx(t), openai.ChatCompletionRequest{Model: "m", Messages: tc.msgs})
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 400, apiErr.HTTPStatusCode)
			assert.Contains(t, apiErr.Message, tc.msg)
			require.NotNil(t, apiErr.Param)
			assert.Equal(t, tc.param, *apiErr.Param)
			assert.Equal(t, fakeopenai.Stats{Requests: 1, Rejected: 1}, srv.Stats())
			require.Len(t, srv.Requests(), 1, "rejected requests are recorded too")
		})
	}

	t.Run("a well-formed tool round trip passes", func(t *testing.T) {
		srv := fakeopenai.New(t)
		srv.Enqueue(fakeopenai.Text("done"))
		msgs := []openai.ChatCompletionMessage{user, {Role: "assistant", ToolCalls: []openai.ToolCall{call}}, {Role: "tool", ToolCallID: "call_1", Content: `{"success":true}`}}
		resp, err := client(srv.URL, "k").CreateChatCompletion(testCtx(t), openai.ChatCompletionRequest{Model: "m", Messages: msgs})
		require.NoError(t, err)
		assert.Equal(t, "done", resp.Choices[0].Message.Content)
		r, _ := srv.LastRequest()
		assert.Equal(t, "call_1", r.Messages[1].ToolCalls[0].ID)
		assert.Equal(t, "call_1", r.Messages[2].ToolCallID)
	})

	t.Run("stream_options without stream", func(t *testing.T) {
		srv := fakeopenai.New(t)
		resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, 400, resp.StatusCode)
	})

	t.Run("bad JSON", func(t *testing.T) {
		srv := fakeopenai.New(t)
		resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":`))
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, 400, resp.StatusCode)
		var body struct{ Error map[string]any }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		assert.Contains(t, body.Error["message"], "could not parse the JSON body")
		assert.NotEmpty(t, srv.Requests()[0].DecodeError)
	})

	t.Run("lenient servers accept it", func(t *testing.T) {
		srv := fakeopenai.New(t)
		srv.DisableValidation()
		srv.Enqueue(fakeopenai.Text("fine"))
		_, err := client(srv.URL, "k").CreateChatCompletion(testCtx(t), openai.ChatCompletionRequest{Model: "m", Messages: cases["orphan tool message"].msgs})
		require.NoError(t, err)
	})
}

func TestRequireAPIKey(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.RequireAPIKey("sk-right")
	srv.Enqueue(fakeopenai.Text("hello"))

	_, err := client(srv.URL, "sk-wrong").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 401, apiErr.HTTPStatusCode)
	assert.Equal(t, "invalid_api_key", apiErr.Code)
	assert.Equal(t, 1, srv.Pending(), "a rejected request does not consume a reply")

	stream, err := client(srv.URL, "sk-right").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	assert.Equal(t, "hello", drain(t, stream).content)

	models, err := client(srv.URL, "sk-right").ListModels(testCtx(t))
	require.NoError(t, err)
	require.Len(t, models.Models, 1)
	assert.Equal(t, "gpt-4o-mini", models.Models[0].ID)
}

func TestUnprefixedBaseURL(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Text("no prefix"))
	stream, err := client(srv.RootURL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	assert.Equal(t, "no prefix", drain(t, stream).content)
	r, _ := srv.LastRequest()
	assert.Equal(t, "/chat/completions", r.Path)
}

func TestUnknownRouteIsOpenAIError(t *testing.T) {
	srv := fakeopenai.New(t)
	_, err := client(srv.URL+"/nope", "k").CreateChatCompletion(testCtx(t), openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.HTTPStatusCode)
	assert.Contains(t, apiErr.Message, "Invalid URL")
}

// recordingTB catches the failure the fake reports for an unscripted call.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestUnscriptedRequestFailsTheTest(t *testing.T) {
	tb := &recordingTB{TB: t}
	srv := fakeopenai.New(tb)
	_, err := client(srv.URL, "k").CreateChatCompletion(testCtx(t), openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "surprise"}}})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.HTTPStatusCode)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	require.Len(t, tb.errors, 1)
	assert.Contains(t, tb.errors[0], "no scripted reply for request #1")
	assert.Contains(t, tb.errors[0], "surprise")
}

func TestCloseReleasesHangingReplies(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Reply{Hang: true})
	stream, err := client(srv.URL, "k").CreateChatCompletionStream(testCtx(t), streamRequest(true))
	require.NoError(t, err)
	defer stream.Close()
	require.NoError(t, srv.WaitHanging(testCtx(t), 1))
	srv.Close() // must not block on the open stream
	for err == nil {
		_, err = stream.Recv() // the role chunk, then the end
	}
	assert.NotErrorIs(t, err, io.EOF)
}

func TestWords(t *testing.T) {
	for _, s := range []string{"", "one", "Hello, world! How are you?", "  lead and trail  ", "a\n\nb\tc", "名前 は R1 です"} {
		w := fakeopenai.Words(s)
		assert.Equal(t, s, strings.Join(w, ""), "%q", s)
	}
	assert.Equal(t, []string{"Hello,", " world!", " How", " are", " you?"}, fakeopenai.Words("Hello, world! How are you?"))
}

// TestRawStreamIsLineOriented guards the property a hand-written SSE reader
// depends on: every event is one line, terminated by a blank line.
func TestRawStreamIsLineOriented(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.Enqueue(fakeopenai.Text("multi\nline\ntext"))
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			assert.False(t, blank, "no empty events")
			blank = true
			continue
		}
		assert.True(t, blank, "one data line per event")
		assert.True(t, strings.HasPrefix(line, "data: "), line)
		blank = false
	}
	require.NoError(t, sc.Err())
}

// Each usage shape is the provider's own: where it puts the prompt tokens its cache served.
func TestUsageShapes(t *testing.T) {
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	lastChunk := func(shape fakeopenai.UsageShape) map[string]any {
		srv := fakeopenai.New(t)
		srv.ReportUsage(shape)
		srv.Enqueue(fakeopenai.Reply{Content: []string{"ok"}, Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 5, CachedTokens: 64}})
		resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		frames := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(frames[len(frames)-2], "data: ")), &m))
		return m
	}
	usage := func(m map[string]any) map[string]any { return m["usage"].(map[string]any) }

	assert.Equal(t, 64.0, usage(lastChunk(fakeopenai.OpenAIUsage))["prompt_tokens_details"].(map[string]any)["cached_tokens"])
	vllm := usage(lastChunk(fakeopenai.VLLMUsage))
	assert.Equal(t, map[string]any{"cached_tokens": 64.0}, vllm["prompt_tokens_details"])
	deepseek := usage(lastChunk(fakeopenai.DeepSeekUsage))
	assert.Equal(t, 64.0, deepseek["prompt_cache_hit_tokens"])
	assert.Equal(t, 36.0, deepseek["prompt_cache_miss_tokens"])
	assert.NotContains(t, deepseek, "prompt_tokens_details")
	assert.Equal(t, 64.0, usage(lastChunk(fakeopenai.AnthropicUsage))["cache_read_input_tokens"])
	llamacpp := lastChunk(fakeopenai.LlamaCppUsage)
	assert.Equal(t, 64.0, llamacpp["timings"].(map[string]any)["cache_n"])
	assert.NotContains(t, usage(llamacpp), "prompt_tokens_details")
}

// tool_choice needs tools, as OpenAI says; a fake told to take only "auto" refuses "none" as
// some gateways do.
func TestToolChoiceIsChecked(t *testing.T) {
	srv := fakeopenai.New(t)
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	code, text := post(`{"model":"m","tool_choice":"none","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, text, "'tool_choice' is only allowed when 'tools' are specified")
	srv.OnlyAutoToolChoice()
	code, text = post(`{"model":"m","tool_choice":"none","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, text, "Only a tool_choice of 'auto' is supported for this model.")
}
