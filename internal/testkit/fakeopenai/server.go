// Package fakeopenai is a scripted OpenAI-compatible chat-completions server
// for tests. It speaks the real wire format (streamed chunks, tool-call
// deltas keyed by index, the usage chunk, [DONE], OpenAI error bodies),
// checks requests the way OpenAI does, and records them for assertions. It
// can also emulate the providers of thinking models (Emulate): how each
// streams reasoning, and what each refuses when it is not sent back.
package fakeopenai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Handler picks the reply for a request. Returning false leaves the request
// to the queue of enqueued replies, so a test can route, say, title calls
// (which offer no tools) to a fixed answer and script the rest in order.
type Handler func(req Request) (Reply, bool)

// Stats counts what the server did; Await waits on it.
type Stats struct {
	// Requests received on the chat-completions routes.
	Requests int
	// Rejected requests were answered with an error by the server's own
	// checks (bad JSON, API key, OpenAI's request validation).
	Rejected int
	// Unscripted requests found neither a handler reply nor a queued one;
	// each one fails the test.
	Unscripted int
	// Completed replies were written to the end.
	Completed int
	// Hanging replies are waiting for the client to cancel right now; Hung
	// counts all replies that ever reached their hang point.
	Hanging int
	Hung    int
	// Cancelled replies ended early because the client went away.
	Cancelled int
	// Dropped replies had their connection aborted on purpose.
	Dropped int
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	// URL is the base URL a client is configured with, ending in /v1.
	URL string
	// RootURL is the same server without the /v1 prefix, which the fake
	// also serves (some providers are configured that way).
	RootURL string

	t        testing.TB
	srv      *httptest.Server
	stopping chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	queue    []Reply
	handler  Handler
	requests []Request
	stats    Stats
	changed  chan struct{}
	apiKey   string
	lenient  bool
	models   []string
	provider Provider
	key      []byte // signs what the emulated provider issues (providers.go)
	usage    UsageShape
	autoOnly bool
}

// OnlyAutoToolChoice makes the fake refuse a tool_choice other than "auto", as some gateways do
// for some models ("Only a tool_choice of 'auto' is supported for this model."), unless its
// validation is disabled, like its other checks.
func (s *Server) OnlyAutoToolChoice() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoOnly = true
}

// UsageShape is how a server reports the prompt tokens its prompt cache served.
type UsageShape string

const (
	// OpenAIUsage is OpenAI's usage.prompt_tokens_details.cached_tokens, the default.
	OpenAIUsage UsageShape = ""
	// VLLMUsage is vLLM's, started with --enable-prompt-tokens-details: the same field, in a
	// prompt_tokens_details of that field alone, and no completion_tokens_details.
	VLLMUsage UsageShape = "vllm"
	// DeepSeekUsage is DeepSeek's usage.prompt_cache_hit_tokens and prompt_cache_miss_tokens.
	DeepSeekUsage UsageShape = "deepseek"
	// AnthropicUsage is Anthropic's usage.cache_read_input_tokens (and
	// cache_creation_input_tokens), as gateways in front of Claude pass them on.
	AnthropicUsage UsageShape = "anthropic"
	// LlamaCppUsage is llama.cpp's server: a plain usage, and timings.cache_n beside it.
	LlamaCppUsage UsageShape = "llamacpp"
)

// ReportUsage makes the fake report its replies' usage in shape.
func (s *Server) ReportUsage(shape UsageShape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = shape
}

// New starts a fake on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:        t,
		stopping: make(chan struct{}),
		changed:  make(chan struct{}),
		models:   []string{"gpt-4o-mini"},
		key:      newKey(),
	}
	mux := http.NewServeMux()
	for _, prefix := range []string{"/v1", ""} {
		mux.HandleFunc("POST "+prefix+"/chat/completions", s.serveChat)
		mux.HandleFunc("GET "+prefix+"/models", s.serveModels)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), Type: "invalid_request_error"})
	})
	s.srv = httptest.NewServer(mux)
	s.RootURL = s.srv.URL
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close releases hanging replies and stops the server. Tests need not call
// it; New registers it with t.Cleanup.
func (s *Server) Close() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Enqueue appends replies, served in order to requests the handler leaves.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetHandler installs h; nil removes it.
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// RequireAPIKey makes every request without "Authorization: Bearer key"
// fail with OpenAI's 401.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// DisableValidation stops the fake from rejecting requests OpenAI would
// reject (for example a tool message that answers no tool call). Some
// OpenAI-compatible servers are that lenient.
func (s *Server) DisableValidation() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lenient = true
}

// SetModels sets the model IDs listed by GET /v1/models.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// Pending is the number of enqueued replies not served yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of every request recorded so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the most recent request.
func (s *Server) LastRequest() (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1], true
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Await blocks until cond holds for the counters or ctx ends.
func (s *Server) Await(ctx context.Context, cond func(Stats) bool) (Stats, error) {
	for {
		s.mu.Lock()
		st, changed := s.stats, s.changed
		s.mu.Unlock()
		if cond(st) {
			return st, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return st, fmt.Errorf("fakeopenai: condition not met (stats %+v): %w", st, ctx.Err())
		}
	}
}

// WaitRequests blocks until at least n requests were received and returns
// them all.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	if _, err := s.Await(ctx, func(st Stats) bool { return st.Requests >= n }); err != nil {
		return s.Requests(), err
	}
	return s.Requests(), nil
}

// WaitHanging blocks until n replies in total have reached their hang point.
func (s *Server) WaitHanging(ctx context.Context, n int) error {
	_, err := s.Await(ctx, func(st Stats) bool { return st.Hung >= n })
	return err
}

func (s *Server) update(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids, key := append([]string(nil), s.models...), s.apiKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, authError(r.Header.Get("Authorization")))
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "fakeopenai"})
	}
	writeJSON(w, http.StatusOK, list)
}

func authError(header string) *APIError {
	if header == "" {
		return &APIError{Status: http.StatusUnauthorized, Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", Type: "invalid_request_error"}
	}
	return InvalidAPIKey()
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	rec := Request{
		Received:      time.Now(),
		Method:        r.Method,
		Path:          r.URL.Path,
		Authorization: r.Header.Get("Authorization"),
		Header:        r.Header.Clone(),
		Raw:           body,
	}
	var wire *wireRequest
	var reject *APIError
	if readErr != nil {
		rec.DecodeError = readErr.Error()
		reject = BadRequest("could not read the request body: "+readErr.Error(), "")
	} else {
		wire, reject = decodeRequest(body, &rec)
	}

	s.mu.Lock()
	rec.Seq = len(s.requests) + 1
	s.requests = append(s.requests, rec)
	// One reading of the settings serves the whole request, so the checks and the reply agree
	// even if a test changes them meanwhile.
	key, lenient, provider, usage, autoOnly := s.apiKey, s.lenient, s.provider, s.usage, s.autoOnly
	s.mu.Unlock()
	s.update(func(st *Stats) { st.Requests++ })

	if reject == nil && key != "" && rec.Authorization != "Bearer "+key {
		reject = authError(rec.Authorization)
	}
	if reject == nil && !lenient {
		reject = validate(wire, &rec)
		if choice := strings.TrimSpace(string(rec.ToolChoice)); reject == nil && autoOnly && choice != "" && choice != `"auto"` {
			reject = BadRequest("Only a tool_choice of 'auto' is supported for this model.", "tool_choice")
		}
	}
	if reject != nil {
		s.t.Logf("fakeopenai: request #%d rejected (%d): %s", rec.Seq, reject.Status, reject.Message)
		s.update(func(st *Stats) { st.Rejected++ })
		writeError(w, reject)
		return
	}
	if perr := s.refuse(provider, rec); perr != nil && !lenient {
		body, _ := json.Marshal(perr.body)
		s.t.Logf("fakeopenai: request #%d refused as %s would (%d): %s", rec.Seq, provider, perr.status, body)
		s.update(func(st *Stats) { st.Rejected++ })
		writeJSON(w, perr.status, perr.body)
		return
	}

	reply, ok := s.pick(rec)
	if !ok {
		s.t.Errorf("fakeopenai: no scripted reply for request #%d (model %q, %d messages, last %q: %.80q)",
			rec.Seq, rec.Model, len(rec.Messages), rec.LastMessage().Role, rec.LastMessage().Content)
		s.update(func(st *Stats) { st.Unscripted++ })
		writeError(w, &APIError{Status: http.StatusInternalServerError, Message: fmt.Sprintf("fakeopenai: no scripted reply for request #%d", rec.Seq), Type: "server_error"})
		return
	}
	s.serveReply(w, r, rec, reply, provider, usage)
}

func (s *Server) pick(rec Request) (Reply, bool) {
	s.mu.Lock()
	h := s.handler
	s.mu.Unlock()
	if h != nil {
		// Called without the lock so a handler may use the Server.
		if reply, ok := h(rec); ok {
			return reply, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Reply{}, false
	}
	reply := s.queue[0]
	s.queue = s.queue[1:]
	return reply, true
}

// pause waits d, or returns false as soon as the client or the server goes
// away.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ctx.Done():
			return false
		case <-s.stopping:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.stopping:
		return false
	}
}

// hang holds the reply open until the client cancels.
func (s *Server) hang(ctx context.Context) {
	s.update(func(st *Stats) { st.Hanging++; st.Hung++ })
	select {
	case <-ctx.Done():
	case <-s.stopping:
	}
	s.update(func(st *Stats) { st.Hanging-- })
	s.cancelled()
}

// cancelled ends a reply that could not finish. When the server is shutting
// down the connection is aborted: returning normally would end the chunked
// body cleanly, and a client would take the cut stream for a complete one.
func (s *Server) cancelled() {
	s.update(func(st *Stats) { st.Cancelled++ })
	select {
	case <-s.stopping:
		panic(http.ErrAbortHandler)
	default:
	}
}

// drop aborts the connection without finishing the response; net/http
// treats this panic value as a silent abort.
func (s *Server) drop() {
	s.update(func(st *Stats) { st.Dropped++ })
	panic(http.ErrAbortHandler)
}

// serveReply sends reply as provider would, its usage in the shape usage.
func (s *Server) serveReply(w http.ResponseWriter, r *http.Request, rec Request, reply Reply, provider Provider, usage UsageShape) {
	ctx := r.Context()
	if !s.pause(ctx, reply.Delay) {
		s.cancelled()
		return
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_fake%06d", rec.Seq))
	switch {
	case reply.HTMLStatus != 0:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(reply.HTMLStatus)
		_, _ = io.WriteString(w, htmlPage)
		s.update(func(st *Stats) { st.Completed++ })
		return
	case reply.Error != nil:
		writeError(w, reply.Error)
		s.update(func(st *Stats) { st.Completed++ })
		return
	}
	if thinksNot(provider, rec) {
		reply.Reasoning = nil // a model told not to think writes no reasoning, streamed or not
	}
	p := makePlan(provider, rec, reply, usage)
	if rec.Stream {
		s.serveStream(ctx, w, provider, rec, reply, p)
		return
	}
	if reply.Hang {
		s.hang(ctx)
		return
	}
	if reply.Drop {
		s.drop()
	}
	writeJSON(w, http.StatusOK, s.completion(provider, reply, p))
	s.update(func(st *Stats) { st.Completed++ })
}

func (s *Server) serveStream(ctx context.Context, w http.ResponseWriter, provider Provider, rec Request, reply Reply, p plan) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	role, events := s.streamEvents(provider, rec, reply, p)
	send := func(ev string) bool {
		if _, err := io.WriteString(w, ev); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if !send(role) {
		s.cancelled()
		return
	}
	for i := 0; ; i++ {
		if reply.Hang && i == min(reply.HangAfter, len(events)) {
			s.hang(ctx)
			return
		}
		if reply.Drop && i == min(reply.DropAfter, len(events)) {
			s.drop()
		}
		if reply.Truncate && i == min(reply.TruncateAfter, len(events)) {
			break
		}
		if i == len(events) {
			break
		}
		delay := reply.ChunkDelay
		if i == 0 {
			delay = reply.FirstChunkDelay
		}
		if !s.pause(ctx, delay) || !send(events[i]) {
			s.cancelled()
			return
		}
	}
	s.update(func(st *Stats) { st.Completed++ })
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, e *APIError) {
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]any{"error": e.wire()})
}

func (e *APIError) wire() map[string]any {
	m := map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nil}
	if e.Param != "" {
		m["param"] = e.Param
	}
	if e.Code != "" {
		m["code"] = e.Code
	}
	return m
}

// Error makes *APIError usable as a Go error in handlers and assertions.
func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

var _ error = (*APIError)(nil)

const htmlPage = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Welcome</title></head>
<body><h1>It works!</h1><p>This is a web page, not an API endpoint.</p></body>
</html>
`
