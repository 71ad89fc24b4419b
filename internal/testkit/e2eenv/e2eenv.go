// Package e2eenv starts the whole copilot for end-to-end tests: a fake GNS3 controller (or a
// real one, package realgns3), a scripted OpenAI-compatible model, and the real service (API,
// worker, Temporal dev server, SQLite) on 127.0.0.1, all stopped when the test ends. It also
// reads SSE streams the way a browser would, so tests assert on the frames a client really
// receives.
package e2eenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/apicheck"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/realgns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

// Secrets the tests look for where they must never appear.
const (
	UserToken = "alice-gns3-token-7f3c9e1b-never-in-temporal"
	LLMKey    = "sk-e2e-key-4b1d8a6f-never-in-temporal"
	Username  = "alice"
	Password  = "alice-password"
)

// Options tunes Start.
type Options struct {
	// Role defaults to serve (API + worker in one process).
	Role app.Role
	// RedisURL switches the relay, credentials and locks to Redis.
	RedisURL string
	// TemporalAddress uses a running Temporal instead of starting a dev server.
	TemporalAddress string
	// DataDir defaults to a fresh temporary directory.
	DataDir string
	// Mode is the server default copilot mode.
	Mode string
	// Heartbeat shortens the SSE heartbeat.
	Heartbeat time.Duration
	// NoLLM leaves the server default LLM unconfigured.
	NoLLM bool
	// DatabaseURL uses PostgreSQL instead of SQLite in the data directory.
	DatabaseURL string
	// LLMAllowHosts is the service's --llm-allow-hosts. nil allows 127.0.0.1, where the fake
	// model listens, so users' own configurations can reach it; a test of the outbound policy
	// passes a non-nil list (empty for the default policy).
	LLMAllowHosts []string
	// LLMResolver resolves the host names of users' LLM endpoints (see service.Config).
	LLMResolver egress.Resolver
	// Configure changes the service's configuration last, for settings without an option here.
	Configure func(*app.Config)
	// ProxyGNS3 puts the service in front of the fake GNS3 (--proxy-gns3).
	ProxyGNS3 bool
	// Approval is the --approval setting; empty runs device tools directly, without jobs.
	Approval string
	// ApprovalTimeout shortens how long approvals wait.
	ApprovalTimeout time.Duration
	// LogLevel and LogFormat of the service's log, which Env.Logs captures (default warn, text).
	LogLevel  string
	LogFormat string
	// GNS3 configures the fake GNS3 (e.g. fakegns3.WithLatency for benchmarks).
	GNS3 []fakegns3.Option
	// NoLiveTopology makes the service read GNS3 per request instead of keeping a live topology.
	NoLiveTopology bool
	// RealGNS3 puts the service in front of a real GNS3 instead of the fake (Env.GNS3 is then
	// nil), acting for its signed-in account in RealProject.
	RealGNS3    *realgns3.Server
	RealProject string
}

// Env is a running copilot with its fakes.
type Env struct {
	T         testing.TB
	GNS3      *fakegns3.Server
	LLM       *fakeopenai.Server
	Service   *app.Running
	URL       string
	ProjectID string
	// Token is the GNS3 token the env's requests carry: UserToken, or the real GNS3's account's.
	Token  string
	Config app.Config
	// HTTP is the client the env's requests go through; it validates every exchange.
	HTTP *http.Client
	logs *lockedBuffer
}

// Logs is everything the service logged so far.
func (e *Env) Logs() string { return e.logs.String() }

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// RequireTemporalCLI returns the dev server binary's path (GNS3_COPILOT_TEMPORAL_CLI, as for
// serve, else temporaldev.FindCLI's search), skipping the test when it is missing outside CI.
func RequireTemporalCLI(t testing.TB) string {
	t.Helper()
	path, err := temporaldev.FindCLI(os.Getenv("GNS3_COPILOT_TEMPORAL_CLI"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Temporal CLI is required in CI: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	return path
}

// Start runs the fakes and the service.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	cli := RequireTemporalCLI(t)
	var g *fakegns3.Server
	gns3URL, pid, token := "", opts.RealProject, UserToken
	if opts.RealGNS3 != nil {
		gns3URL, token = opts.RealGNS3.URL, opts.RealGNS3.Token
	} else {
		g = fakegns3.New(t, opts.GNS3...)
		g.AddUser(Username, UserToken, false)
		g.SetPassword(Username, Password)
		pid = g.AddProject("lab1", fakegns3.Members(Username))
		gns3URL = g.URL
	}
	llm := fakeopenai.New(t)
	llm.RequireAPIKey(LLMKey)

	logs := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the service's log:\n%s", logs.String())
		}
	})
	dataDir := opts.DataDir
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cfg := app.Config{
		Listen: "127.0.0.1:0", DataDir: dataDir, GNS3URL: gns3URL, GNS3Timeout: 10 * time.Second,
		TemporalAddress: opts.TemporalAddress, TemporalNamespace: "default", TemporalCLI: cli, TemporalUIPort: -1,
		RedisURL: opts.RedisURL, DatabaseURL: opts.DatabaseURL, LLMProvider: "openai", LLMContextLimitK: 128, CopilotMode: opts.Mode,
		DeviceConcurrency: 16, EventTTL: time.Hour, LogLevel: "warn", Heartbeat: opts.Heartbeat, ProxyGNS3: opts.ProxyGNS3,
		LLMAllowHosts: opts.LLMAllowHosts, LLMResolver: opts.LLMResolver,
		Approval: opts.Approval, ApprovalTimeout: opts.ApprovalTimeout,
		LogFormat: opts.LogFormat, LogOutput: logs,
		NoLiveTopology: opts.NoLiveTopology,
	}
	if opts.LogLevel != "" {
		cfg.LogLevel = opts.LogLevel
	}
	if cfg.LLMAllowHosts == nil {
		cfg.LLMAllowHosts = []string{"127.0.0.1"}
	}
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	if !opts.NoLLM {
		cfg.LLMBaseURL, cfg.LLMAPIKey = llm.URL, LLMKey
		if cfg.LLMModel == "" { // a test may have named the server default's model (Configure)
			cfg.LLMModel = "gpt-4o-mini"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, err := app.Start(ctx, opts.Role, cfg)
	if err != nil {
		t.Fatalf("starting the service: %v", err)
	}
	t.Cleanup(func() {
		if err := run.Stop(); err != nil {
			t.Logf("stopping the service: %v", err)
		}
	})
	checker, err := apicheck.New()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	client := &http.Client{Transport: checker.Transport(nil, func(err error) { t.Errorf("OpenAPI: %v", err) })}
	e := &Env{T: t, GNS3: g, LLM: llm, Service: run, ProjectID: pid, Token: token, Config: cfg, HTTP: client, logs: logs}
	if run.Addr() != "" {
		e.URL = "http://" + run.Addr()
	}
	return e
}

// ChatPath is a chat route of the env's project.
func (e *Env) ChatPath(rest string) string {
	return "/v3/projects/" + e.ProjectID + "/chat" + rest
}

// Do sends a request with the user's token and returns the status and body.
func (e *Env) Do(method, path string, body any) (int, []byte) {
	e.T.Helper()
	return e.DoAs(e.token(), method, path, body)
}

// token is the token of the env's user; an Env put together by hand has UserToken.
func (e *Env) token() string {
	if e.Token != "" {
		return e.Token
	}
	return UserToken
}

// DoAs sends a request with the given token ("" for none).
func (e *Env) DoAs(token, method, path string, body any) (int, []byte) {
	e.T.Helper()
	resp, err := e.send(context.Background(), token, method, path, body, "")
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (e *Env) send(ctx context.Context, token, method, path string, body any, lastID string) (*http.Response, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	client := e.HTTP
	if client == nil {
		// An Env put together by hand (a test running its own serve) has no checking client.
		client = http.DefaultClient
	}
	return client.Do(req)
}

// Frame is one SSE frame as a client receives it.
type Frame struct {
	ID    string
	Event string
	Data  map[string]any
	Raw   string
}

// streamWait bounds each wait for frames (Next, Until, UntilDone): longer than any turn a test
// runs, so only a stuck stream fails on it.
const streamWait = 5 * time.Minute

// Stream is an open SSE response.
type Stream struct {
	Status int
	Header http.Header
	resp   *http.Response
	frames *ssetest.Stream
	cancel context.CancelFunc
}

// OpenStream sends a request expected to answer text/event-stream. The stream is read with
// Next and must be closed.
func (e *Env) OpenStream(method, path string, body any, lastID string) *Stream {
	e.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := e.send(ctx, e.token(), method, path, body, lastID)
	if err != nil {
		cancel()
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	s := &Stream{Status: resp.StatusCode, Header: resp.Header, resp: resp, frames: ssetest.NewStream(resp.Body), cancel: cancel}
	e.T.Cleanup(s.Close)
	return s
}

// Close hangs up, as a browser does when the page goes away.
func (s *Stream) Close() {
	s.cancel()
	s.frames.Close()
	s.resp.Body.Close()
}

// Next reads one frame; io.EOF when the server ended the stream.
func (s *Stream) Next() (Frame, error) { return s.nextBefore(time.Now().Add(streamWait)) }

func (s *Stream) nextBefore(deadline time.Time) (Frame, error) {
	f, err := s.frames.NextBefore(deadline)
	if err != nil {
		return Frame{}, err
	}
	out := Frame{ID: f.ID, Event: f.Event, Raw: f.Data}
	if out.Raw != "" {
		if err := json.Unmarshal([]byte(out.Raw), &out.Data); err != nil {
			return out, fmt.Errorf("frame data is not JSON: %q", out.Raw)
		}
	}
	return out, nil
}

// UntilDone reads frames up to and including the terminal `done`, skipping heartbeats when
// skipHeartbeats is set.
func (s *Stream) UntilDone(t testing.TB, skipHeartbeats bool) []Frame {
	t.Helper()
	deadline := time.Now().Add(streamWait)
	var out []Frame
	for {
		f, err := s.nextBefore(deadline)
		if err != nil {
			t.Fatalf("stream ended before done (after %d frames): %v", len(out), err)
		}
		if skipHeartbeats && f.Event == "heartbeat" {
			continue
		}
		out = append(out, f)
		if f.Event == "done" {
			return out
		}
	}
}

// Until reads frames, skipping heartbeats, up to and including the first that stop accepts. The
// test fails if the stream ends, or the turn ends with a done frame that stop does not accept,
// before that.
func (s *Stream) Until(t testing.TB, stop func(Frame) bool) []Frame {
	t.Helper()
	deadline := time.Now().Add(streamWait)
	var out []Frame
	for {
		f, err := s.nextBefore(deadline)
		if err != nil {
			t.Fatalf("stream ended before the awaited frame (after %v): %v", Types(out), err)
		}
		if f.Event == "heartbeat" {
			continue
		}
		out = append(out, f)
		if stop(f) {
			return out
		}
		if f.Event == "done" {
			t.Fatalf("the turn ended before the awaited frame: %v", Types(out))
		}
	}
}

// ContentReaches is an Until condition: the stream's content so far (the words of its content
// events, joined) has come to text. The copilot merges the words that arrive while an event is
// being written, so a test can wait for text, never for one event a word.
func ContentReaches(text string) func(Frame) bool {
	var so strings.Builder
	return func(f Frame) bool {
		if f.Event != "content" {
			return false
		}
		c, _ := f.Data["content"].(string)
		so.WriteString(c)
		return so.String() == text
	}
}

// Types lists the frames' event types, folding runs of the same type into one, which makes an
// expected order easy to write.
func Types(frames []Frame) []string {
	var out []string
	for _, f := range frames {
		if len(out) > 0 && out[len(out)-1] == f.Event {
			continue
		}
		out = append(out, f.Event)
	}
	return out
}
