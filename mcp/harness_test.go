package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The front door in one process without Temporal: the real handler, authentication against
// the fake GNS3, SQLite rows and the in-memory event log, and a fake of the Workflows
// interface whose "workflow" is a Go function a test gives, which writes the call's result and
// events exactly as the MCPCall workflow's activities do.

const (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
)

// callWorkflow plays one MCPCall workflow: it is run on its own goroutine when the call starts.
type callWorkflow func(h *harness, in workflows.MCPCallInput)

type startedCall struct {
	WorkflowID string
	In         workflows.MCPCallInput
	Username   string
	Client     string
}

type decision struct {
	WorkflowID string
	D          workflows.ApprovalDecision
}

// fakeWorkflows is the front door's Workflows.
type fakeWorkflows struct {
	h *harness

	mu        sync.Mutex
	started   []startedCall
	done      map[string]chan struct{}
	decisions []decision
	decided   chan decision
	// startErr fails the next start.
	startErr error
	// decideErr answers every decision.
	decideErr error
}

func (w *fakeWorkflows) StartMCPCall(_ context.Context, workflowID string, in workflows.MCPCallInput, username, clientName string) error {
	w.mu.Lock()
	if err := w.startErr; err != nil {
		w.startErr = nil
		w.mu.Unlock()
		return err
	}
	w.started = append(w.started, startedCall{WorkflowID: workflowID, In: in, Username: username, Client: clientName})
	done := make(chan struct{})
	w.done[workflowID] = done
	run := w.h.workflow
	w.mu.Unlock()
	go func() {
		defer close(done)
		run(w.h, in)
	}()
	return nil
}

func (w *fakeWorkflows) TurnEnded(_ context.Context, workflowID string) (ended, started bool, err error) {
	w.mu.Lock()
	done, ok := w.done[workflowID]
	w.mu.Unlock()
	if !ok {
		return true, false, nil
	}
	select {
	case <-done:
		return true, true, nil
	default:
		return false, true, nil
	}
}

func (w *fakeWorkflows) DecideApproval(_ context.Context, workflowID string, d workflows.ApprovalDecision) (workflows.ApprovalOutcome, error) {
	w.mu.Lock()
	err := w.decideErr
	w.decisions = append(w.decisions, decision{workflowID, d})
	w.mu.Unlock()
	if err != nil {
		return workflows.ApprovalOutcome{}, err
	}
	status := domain.ApprovalRejected
	if d.Decision == workflows.DecisionApprove {
		status = domain.ApprovalApproved
	}
	// As the workflow's update handler does: the decision is stored before the update answers.
	if _, err := w.h.apprs.Decide(context.Background(), d.ApprovalID, models.Decision{Status: status, By: d.Username, Comment: d.Comment,
		At: time.Now(), Standing: d.Standing}); err != nil {
		return workflows.ApprovalOutcome{}, err
	}
	w.decided <- decision{workflowID, d}
	return workflows.ApprovalOutcome{ApprovalID: d.ApprovalID, Status: status, DecidedBy: d.Username, Comment: d.Comment, Standing: d.Standing}, nil
}

func (w *fakeWorkflows) Wait(ctx context.Context, workflowID string) error {
	w.mu.Lock()
	done, ok := w.done[workflowID]
	w.mu.Unlock()
	if !ok {
		return errors.New("workflow not found")
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *fakeWorkflows) calls() []startedCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]startedCall(nil), w.started...)
}

// fakeCredentials is the worker-side credential store.
type fakeCredentials struct {
	mu     sync.Mutex
	stored map[string]string
	putErr error
}

func (c *fakeCredentials) Put(_ context.Context, key, secret string, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.putErr != nil {
		return c.putErr
	}
	c.stored[key] = secret
	return nil
}

func (c *fakeCredentials) Delete(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.stored, key)
	return nil
}

func (c *fakeCredentials) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stored[key]
	return s, ok
}

// fakeLLM tells each user's copilot mode.
type fakeLLM struct {
	modes map[string]string // by user id
	err   error
}

func (l fakeLLM) Choose(_ context.Context, userID string, _ *gns3.Client) (llmconfig.Settings, error) {
	if l.err != nil {
		return llmconfig.Settings{}, l.err
	}
	m, ok := l.modes[userID]
	if !ok {
		return llmconfig.Settings{}, llmconfig.ErrNotConfigured
	}
	return llmconfig.Settings{CopilotMode: m}, nil
}

type harness struct {
	t        testing.TB
	gns3     *fakegns3.Server
	project  string
	bobs     string
	closed   string
	aliceID  string
	bobID    string
	wf       *fakeWorkflows
	creds    *fakeCredentials
	calls    models.MCPCallRepository
	apprs    models.ApprovalRepository
	events   *relay.Memory
	url      string
	workflow callWorkflow
	deps     Deps
	// panicked is the first panic of a request: net/http recovers a handler's panic and only
	// logs it, so the harness records it for the test to fail on.
	panicked atomic.Pointer[string]
}

type harnessOption func(*harness)

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	g := fakegns3.New(t)
	h := &harness{t: t, gns3: g}
	h.aliceID = g.AddUser("alice", aliceToken, false)
	h.bobID = g.AddUser("bob", bobToken, false)
	h.project = g.AddProject("lab1", fakegns3.Members("alice"))
	h.bobs = g.AddProject("bob-lab", fakegns3.Members("bob"))
	h.closed = g.AddProject("shelved", fakegns3.Members("alice"), fakegns3.Closed())
	db, err := models.Open("", t.TempDir())
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	h.calls, h.apprs = models.MCPCallRepository{DB: db}, models.ApprovalRepository{DB: db}
	h.events = relay.NewMemory(relay.MemoryOptions{})
	t.Cleanup(func() { _ = h.events.Close() })
	h.wf = &fakeWorkflows{h: h, done: map[string]chan struct{}{}, decided: make(chan decision, 16)}
	h.creds = &fakeCredentials{stored: map[string]string{}}
	h.workflow = h.answers(tools.Collect([]tools.Item{{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "ok"}}))
	h.deps = Deps{Workflows: h.wf, Calls: h.calls, Approvals: h.apprs, Events: h.events, Credentials: h.creds,
		Tools: tools.NewRegistry(tools.AllTools()...), DefaultMode: string(tools.LabAutomation), Version: "1.2.3",
		Work:   durable.Settings{Approval: domain.ApprovalChanges, ApprovalTimeout: time.Hour},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(h)
	}
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(h.recordPanics)
	t.Cleanup(func() {
		if p := h.panicked.Load(); p != nil {
			t.Errorf("a request panicked: %s", *p)
		}
	})
	authn := auth.New(gns3.NewServer(g.URL, 10*time.Second), 30*time.Second)
	handler := Handler(h.deps)
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		r.Handle(m, Path, authn.RequireUser, handler)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	h.url = srv.URL + Path
	return h
}

func (h *harness) recordPanics(c *gin.Context) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("%s %s: %v\n%s", c.Request.Method, c.Request.URL, p, debug.Stack())
			h.panicked.CompareAndSwap(nil, &msg)
			c.AbortWithStatus(http.StatusInternalServerError)
		}
	}()
	c.Next()
}

// answers is a workflow that finishes the call at once with res as the tool's result.
func (h *harness) answers(res tools.Result) callWorkflow {
	return func(h *harness, in workflows.MCPCallInput) {
		res.Metadata = map[string]any{"tool_name": in.Tool.Name, "version": tools.FormatVersion}
		h.finish(in, res.JSON())
	}
}

// finish does what the workflow's last activities do: the result in the call's record, the
// record closed, the log ended.
func (h *harness) finish(in workflows.MCPCallInput, result string) {
	ctx := context.Background()
	require.NoError(h.t, h.calls.SaveResult(ctx, in.Call.TurnID, result))
	require.NoError(h.t, h.calls.Finish(ctx, in.Call.TurnID, domain.MCPCallCompleted, "", time.Now()))
	h.publish(in.Call.TurnID, relay.Payload{Type: relay.TypeDone, Status: domain.MCPCallCompleted})
}

func (h *harness) publish(stream string, p relay.Payload) {
	b, err := json.Marshal(p)
	require.NoError(h.t, err)
	_, err = h.events.Append(context.Background(), stream, p.Type, b)
	require.NoError(h.t, err)
}

// askApproval is what RequestApproval does for a call: the pending row and its event.
func (h *harness) askApproval(in workflows.MCPCallInput, question string) *models.Approval {
	return h.askApprovalWith(in, question, `{"tool":"`+in.Tool.Name+`","kind":"config"}`)
}

func (h *harness) askApprovalWith(in workflows.MCPCallInput, question, plan string) *models.Approval {
	ctx := context.Background()
	id := workflows.ApprovalID(in.Call.TurnID, in.Tool.ID)
	row, err := h.apprs.Create(ctx, &models.Approval{ID: id, SessionID: in.Call.SessionID, TurnID: in.Call.TurnID, ToolCallID: in.Tool.ID,
		ProjectID: in.Call.ProjectID, UserID: in.Call.UserID, ToolName: in.Tool.Name, Kind: "config", WorkflowID: "job-" + in.Call.TurnID,
		Plan: plan, Status: domain.ApprovalPending, ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(h.t, err)
	h.publish(in.Call.TurnID, relay.Payload{Type: relay.TypeApprovalRequired, ToolName: in.Tool.Name, ToolCallID: in.Tool.ID,
		Approval: row.View(), Content: question})
	return row
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

type clientOption func(*sdk.ClientOptions)

// connect opens an MCP session as the official Go client does.
func (h *harness) connect(token, query string, opts ...clientOption) (*sdk.ClientSession, error) {
	h.t.Helper()
	o := &sdk.ClientOptions{}
	for _, f := range opts {
		f(o)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "unit-agent", Version: "0.1"}, o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.url + query,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}, nil)
	if err == nil {
		h.t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func (h *harness) mustConnect(token string, opts ...clientOption) *sdk.ClientSession {
	h.t.Helper()
	cs, err := h.connect(token, "", opts...)
	require.NoError(h.t, err)
	return cs
}

// standard is a tool result in the standard format.
type standard struct {
	Success bool           `json:"success"`
	Total   int            `json:"total"`
	Data    []tools.Item   `json:"data"`
	Error   string         `json:"error"`
	Meta    map[string]any `json:"metadata"`
}

// call calls a tool and reads its standard result, checking that text and structured content
// agree and that a failure is a tool error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, standard) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*sdk.TextContent).Text
	var out standard
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	structured, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.JSONEq(t, text, string(structured))
	require.Equal(t, !out.Success, res.IsError, text)
	return res, out
}

// rpc posts one JSON-RPC message with the headers Streamable HTTP asks for.
func (h *harness) rpc(token, session string, msg any, header ...string) (*http.Response, []byte) {
	h.t.Helper()
	b, err := json.Marshal(msg)
	require.NoError(h.t, err)
	req, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(b))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp, body
}

func initialize(clientName string, meta map[string]any) map[string]any {
	params := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": clientName, "version": "1"}}
	if meta != nil {
		params["_meta"] = meta
	}
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
}
