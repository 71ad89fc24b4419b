package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func toolNames(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	out := map[string]*sdk.Tool{}
	for _, tl := range listed.Tools {
		out[tl.Name] = tl
	}
	return out
}

var ownTools = []string{"list_gns3_projects", "open_gns3_project", "get_mcp_call_result"}

func TestInitializeNamesTheServerAndWhatItOffers(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	init := cs.InitializeResult()
	require.Equal(t, "gns3-copilot", init.ServerInfo.Name)
	require.Equal(t, "1.2.3", init.ServerInfo.Version)
	require.Equal(t, "2025-11-25", init.ProtocolVersion)
	require.Contains(t, init.Instructions, "list_gns3_projects")
	require.Contains(t, init.Instructions, "get_mcp_call_result")
	require.NotNil(t, init.Capabilities.Tools)
	require.NotNil(t, init.Capabilities.Resources)
	require.True(t, init.Capabilities.Resources.Subscribe, "topology changes can be subscribed to")
	require.Nil(t, init.Capabilities.Logging, "nothing is logged to clients")

	// An older protocol version is still spoken; one that was never published is answered with
	// the newest.
	resp, body := h.rpc(aliceToken, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "old", "version": "1"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), `"protocolVersion":"2025-03-26"`)
}

func TestToolsListIsTheCatalogueOfTheSessionsMode(t *testing.T) {
	h := newHarness(t, func(h *harness) { h.deps.DefaultMode = string(tools.TeachingAssistant) })
	reg := tools.NewRegistry(tools.AllTools()...)

	teaching := toolNames(t, h.mustConnect(aliceToken))
	want := reg.For(tools.TeachingAssistant)
	require.Len(t, teaching, len(want)+len(ownTools))
	for _, tl := range want {
		got, ok := teaching[tl.Name()]
		require.True(t, ok, tl.Name())
		require.Equal(t, tl.Description(), got.Description)
		schema, err := json.Marshal(got.InputSchema)
		require.NoError(t, err)
		require.JSONEq(t, string(WithProjectID(tl.Parameters())), string(schema))
	}
	for _, own := range ownTools {
		require.Contains(t, teaching, own)
	}
	require.NotContains(t, teaching, tools.ConfigCommandsTool, "teaching mode changes nothing")

	// Above the default mode: refused on initialize with a message saying what is allowed.
	_, err := h.connect(aliceToken, "?mode=lab_automation_assistant")
	require.Error(t, err)
	resp, body := h.rpc(aliceToken, "", initialize("x", map[string]any{"mode": "lab_automation_assistant"}))
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, string(body), "above what you may use (teaching_assistant)")
	resp, body = h.rpc(aliceToken, "", initialize("x", map[string]any{"mode": "troubleshooting_injection"}))
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	require.Contains(t, string(body), "chat/inject only")
	resp, body = h.rpc(aliceToken, "", initialize("x", map[string]any{"mode": "no-such-mode"}))
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, string(body))
}

func TestTheUsersConfiguredModeIsTheCeiling(t *testing.T) {
	h := newHarness(t, func(h *harness) {
		h.deps.DefaultMode = string(tools.TeachingAssistant)
		h.deps.LLM = fakeLLM{modes: map[string]string{h.aliceID: string(tools.LabAutomation)}}
	})
	// Alice's configuration allows lab automation, which is then her default; Bob has none
	// and gets the server's default.
	alice := toolNames(t, h.mustConnect(aliceToken))
	require.Contains(t, alice, tools.ConfigCommandsTool)
	cs, err := h.connect(aliceToken, "?mode=teaching_assistant")
	require.NoError(t, err, "asking for less is always allowed")
	require.NotContains(t, toolNames(t, cs), tools.ConfigCommandsTool)
	require.NotContains(t, toolNames(t, h.mustConnect(bobToken)), tools.ConfigCommandsTool)

	broken := newHarness(t, func(h *harness) { h.deps.LLM = fakeLLM{err: errors.New("database is locked")} })
	resp, body := broken.rpc(aliceToken, "", initialize("x", nil))
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Contains(t, string(body), "Reading your copilot mode failed")
}

func TestACallOutsideTheModeGetsTheChatsRefusalAndStartsNothing(t *testing.T) {
	h := newHarness(t)
	cs, err := h.connect(aliceToken, "?mode=teaching_assistant")
	require.NoError(t, err)
	_, out := call(t, cs, tools.ConfigCommandsTool, map[string]any{"project_id": h.project})
	require.False(t, out.Success)
	require.Contains(t, out.Error, "not available in teaching_assistant mode")
	require.Empty(t, h.wf.calls())

	// A name that is no tool at all is the protocol's error.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "format_the_disk", Arguments: map[string]any{}})
	require.ErrorContains(t, err, "format_the_disk")
}

func TestACatalogueCallRunsAsAnMCPCallWorkflowForItsUser(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	res, out := call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project, "verbose": true})
	require.True(t, out.Success)
	require.Equal(t, "PC1", out.Data[0].Name)

	started := h.wf.calls()
	require.Len(t, started, 1)
	s := started[0]
	callID := res.Meta["call_id"].(string)
	require.Equal(t, workflows.MCPCallID("get_gns3_topology", callID), s.WorkflowID)
	require.Equal(t, s.WorkflowID, res.Meta["workflow_id"])
	require.Equal(t, domain.MCPCallCompleted, res.Meta["status"])
	require.Equal(t, "alice", s.Username)
	require.Equal(t, "unit-agent", s.Client)
	require.Equal(t, workflows.WorkRef{SessionID: cs.ID(), TurnID: callID, ProjectID: h.project, UserID: h.aliceID,
		Mode: string(tools.LabAutomation), Origin: "mcp:unit-agent"}, s.In.Call)
	require.Equal(t, workflows.ToolCall{ID: callID, Name: "get_gns3_topology", Arguments: `{"verbose":true}`}, s.In.Tool,
		"the tool gets its own arguments, without project_id")
	require.Equal(t, domain.ApprovalChanges, s.In.Approval)
	require.Equal(t, time.Hour, s.In.ApprovalTimeout)
	require.Equal(t, 2*time.Hour, s.In.CredentialTTL, "the default lifetime")

	tok, ok := h.creds.get(callID)
	require.True(t, ok, "the call's credential is stored worker-side under the call id")
	require.Equal(t, aliceToken, tok)
	row, err := h.calls.Get(context.Background(), callID)
	require.NoError(t, err)
	require.Equal(t, h.aliceID, row.UserID)
	require.Equal(t, cs.ID(), row.SessionID)
	require.Equal(t, "unit-agent", row.Client)
}

func TestProjectChecksAnswerBeforeAnythingStarts(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	for name, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"no project": {map[string]any{}, "project_id is required"},
		"not a uuid": {map[string]any{"project_id": "lab1"}, `project_id must be a UUID, got "lab1"`},
		"another's":  {map[string]any{"project_id": h.bobs}, "You do not have access to project"},
		"closed":     {map[string]any{"project_id": h.closed}, "must be opened first (it is closed); open_gns3_project opens it"},
		// GNS3 checks privileges first: a project nobody granted reads as one not allowed.
		"unknown":          {map[string]any{"project_id": "0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11"}, "You do not have access to project"},
		"arguments as one": {map[string]any{"project_id": []string{h.project}}, "project_id must be a string"},
	} {
		t.Run(name, func(t *testing.T) {
			_, out := call(t, cs, "get_gns3_topology", c.args)
			require.False(t, out.Success)
			require.Contains(t, out.Error, c.want)
			require.Equal(t, "get_gns3_topology", out.Meta["tool_name"])
		})
	}
	require.Empty(t, h.wf.calls())
	rows, err := h.calls.Recent(context.Background(), h.aliceID, 10)
	require.NoError(t, err)
	require.Empty(t, rows, "no call was recorded")
}

func TestALaunchThatFailsIsUndone(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	h.wf.mu.Lock()
	h.wf.startErr = errors.New("frontend unavailable")
	h.wf.mu.Unlock()
	_, out := call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project})
	require.False(t, out.Success)
	require.Equal(t, "The workflow engine did not accept the call; nothing was done, try again in a moment.", out.Error)
	rows, err := h.calls.Recent(context.Background(), h.aliceID, 10)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, domain.MCPCallFailed, rows[0].Status, "the claimed row is closed")
	_, stored := h.creds.get(rows[0].ID)
	require.False(t, stored, "and its credential removed")

	h.creds.mu.Lock()
	h.creds.putErr = errors.New("redis down")
	h.creds.mu.Unlock()
	_, out = call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project})
	require.Contains(t, out.Error, "Storing the call's credentials failed; nothing was done")
	require.Empty(t, h.wf.calls(), "no workflow was started without a credential")
}

func TestOneUsersRunningCallsAreBounded(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, func(h *harness) { h.deps.MaxCallsPerUser = 1 })
	h.workflow = func(h *harness, in workflows.MCPCallInput) {
		<-release
		h.answers(tools.Collect(nil))(h, in)
	}
	ctx := context.Background()
	// A call recorded as running whose workflow never started stops counting at once.
	require.NoError(t, h.calls.Start(ctx, &models.MCPCall{ID: "stale", WorkflowID: "mcp-call-gone", SessionID: "s", UserID: h.aliceID,
		ProjectID: h.project, ToolName: "get_gns3_topology", Client: "x", Mode: "teaching_assistant"}, 0))

	cs := h.mustConnect(aliceToken)
	first := make(chan standard, 1)
	go func() {
		_, out := call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project})
		first <- out
	}()
	require.Eventually(t, func() bool { return len(h.wf.calls()) == 1 }, 10*time.Second, 10*time.Millisecond)
	stale, err := h.calls.Get(ctx, "stale")
	require.NoError(t, err)
	require.Equal(t, domain.MCPCallFailed, stale.Status)

	_, out := call(t, h.mustConnect(aliceToken), "get_gns3_topology", map[string]any{"project_id": h.project})
	require.Contains(t, out.Error, "You already have 1 MCP calls running (at most 1 at once per user)")
	require.Len(t, h.wf.calls(), 1)
	// Another user has a limit of their own.
	h.gns3.Grant(h.project, "bob")
	bobCall := make(chan standard, 1)
	go func() {
		_, out := call(t, h.mustConnect(bobToken), "get_gns3_topology", map[string]any{"project_id": h.project})
		bobCall <- out
	}()
	require.Eventually(t, func() bool { return len(h.wf.calls()) == 2 }, 10*time.Second, 10*time.Millisecond)
	close(release)
	require.True(t, (<-first).Success)
	require.True(t, (<-bobCall).Success)
	_, out = call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project})
	require.True(t, out.Success, "once the first call ended another may run")
}

func TestACallsResultCanBeFetchedAgainByItsOwnerOnly(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	res, first := call(t, cs, "get_gns3_topology", map[string]any{"project_id": h.project})
	callID := res.Meta["call_id"].(string)

	again, out := call(t, h.mustConnect(aliceToken), callResultToolName, map[string]any{"call_id": callID})
	require.Equal(t, first, out, "from another session of the same user too")
	require.Equal(t, callID, again.Meta["call_id"])

	_, foreign := call(t, h.mustConnect(bobToken), callResultToolName, map[string]any{"call_id": callID})
	require.False(t, foreign.Success)
	require.Contains(t, foreign.Error, "No MCP call")
	_, unknown := call(t, cs, callResultToolName, map[string]any{"call_id": "nope"})
	require.Contains(t, unknown.Error, `No MCP call "nope" of yours`)
	_, bad := call(t, cs, callResultToolName, map[string]any{"call_id": callID, "wait_seconds": 61})
	require.Contains(t, bad.Error, "wait_seconds must be from 0 to 60")

	// A call still running: said so at once, or its result after waiting for it.
	h.workflow = func(h *harness, in workflows.MCPCallInput) {
		<-release
		h.answers(tools.Collect([]tools.Item{{ID: "n2", Name: "PC2", Status: tools.StatusSuccess, Result: "later"}}))(h, in)
	}
	progress := make(chan string, 8)
	slow := h.mustConnect(aliceToken, func(o *sdk.ClientOptions) {
		o.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params.Message }
	})
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		p := &sdk.CallToolParams{Name: "get_gns3_topology", Arguments: map[string]any{"project_id": h.project}}
		p.SetProgressToken("p1")
		go func() {
			<-progress // the call's id is in its first progress notification; then hang up
			cancel()
		}()
		_, _ = slow.CallTool(ctx, p)
	}()
	require.Eventually(t, func() bool { return len(h.wf.calls()) == 2 }, 10*time.Second, 10*time.Millisecond)
	running := h.wf.calls()[1].In.Call.TurnID
	_, still := call(t, cs, callResultToolName, map[string]any{"call_id": running})
	require.True(t, still.Success)
	require.Equal(t, domain.MCPCallRunning, still.Data[0].Status)
	require.Contains(t, still.Data[0].Result, "still running since")

	waited := make(chan standard, 1)
	go func() {
		_, out := call(t, cs, callResultToolName, map[string]any{"call_id": running, "wait_seconds": 30})
		waited <- out
	}()
	close(release)
	out = <-waited
	require.True(t, out.Success)
	require.Equal(t, "later", out.Data[0].Result)

	_, list := call(t, cs, callResultToolName, map[string]any{})
	require.True(t, list.Success)
	require.Equal(t, 2, list.Total)
	ids := []string{list.Data[0].ID, list.Data[1].ID}
	sort.Strings(ids)
	want := []string{callID, running}
	sort.Strings(want)
	require.Equal(t, want, ids)
}

func TestProgressOfTheCallReachesAClientThatAskedForIt(t *testing.T) {
	h := newHarness(t)
	h.workflow = func(h *harness, in workflows.MCPCallInput) {
		h.publish(in.Call.TurnID, relay.Payload{Type: relay.TypeToolProgress, Progress: tools.Progress{ItemID: "n1", ItemName: "PC1", Status: "running"}})
		h.publish(in.Call.TurnID, relay.Payload{Type: relay.TypeToolProgress, Progress: tools.Progress{ItemID: "n1", ItemName: "PC1", Status: "done", Message: "3 lines"}})
		h.answers(tools.Collect(nil))(h, in)
	}
	var mu sync.Mutex
	var seen []string
	cs := h.mustConnect(aliceToken, func(o *sdk.ClientOptions) {
		o.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			seen = append(seen, r.Params.Message)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := &sdk.CallToolParams{Name: "get_gns3_topology", Arguments: map[string]any{"project_id": h.project}}
	p.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, p)
	require.NoError(t, err)
	// The last progress is sent before the result, though notifications may arrive after it.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 3
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, seen[0], "call "+res.Meta["call_id"].(string)+" started")
	require.Equal(t, []string{"PC1: running", "PC1: done (3 lines)"}, seen[1:])
}

func TestAnElicitingClientIsAskedAndItsAnswerDecides(t *testing.T) {
	h := newHarness(t)
	h.workflow = func(h *harness, in workflows.MCPCallInput) {
		h.askApproval(in, "**Approval needed** before `execute_vpcs_commands` changes the lab")
		d := <-h.wf.decided
		h.answers(tools.Collect([]tools.Item{{ID: "n1", Name: "PC1", Status: tools.StatusFailed, Error: "Nothing was done: " + d.D.Decision + " " + d.D.Comment}}))(h, in)
	}
	var asked []string
	var mu sync.Mutex
	answers := []*sdk.ElicitResult{
		{Action: "accept", Content: map[string]any{"decision": "reject", "comment": "not that subnet"}},
		{Action: "decline"},
	}
	cs := h.mustConnect(aliceToken, func(o *sdk.ClientOptions) {
		o.ElicitationHandler = func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			schema, _ := json.Marshal(r.Params.RequestedSchema)
			require.Contains(t, string(schema), `"enum":["approve","reject"]`)
			return answers[len(asked)-1], nil
		}
	})
	args := map[string]any{"project_id": h.project, "device_configs": []any{map[string]any{"device_name": "PC1", "commands": []string{"ip 10.0.0.1/24"}}}}
	for _, want := range []string{"reject not that subnet", "reject declined in unit-agent"} {
		_, out := call(t, cs, tools.VPCSCommandsTool, args)
		require.Contains(t, out.Data[0].Error, want)
	}
	mu.Lock()
	require.Len(t, asked, 2)
	require.Contains(t, asked[0], "**Approval needed**")
	mu.Unlock()
	h.wf.mu.Lock()
	defer h.wf.mu.Unlock()
	for i, d := range h.wf.decisions {
		started := h.wf.started[i]
		require.Equal(t, "job-"+started.In.Call.TurnID, d.WorkflowID, "sent to the workflow the approval row names")
		require.Equal(t, h.aliceID, d.D.UserID)
		require.Equal(t, "alice", d.D.Username)
		require.Equal(t, workflows.ApprovalID(started.In.Call.TurnID, started.In.Tool.ID), d.D.ApprovalID)
	}
}

func TestTheTopologyResourceShowsOnlyTheCallersProjects(t *testing.T) {
	h := newHarness(t)
	h.gns3.AddNode(h.project, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC7"})
	cs := h.mustConnect(aliceToken)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	templates, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 1)
	require.Equal(t, topologyTemplate, templates.ResourceTemplates[0].URITemplate)

	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: TopologyURI(h.project)})
	require.NoError(t, err)
	require.Equal(t, "application/json", read.Contents[0].MIMEType)
	require.Contains(t, read.Contents[0].Text, `"PC7"`)

	for _, uri := range []string{TopologyURI(h.bobs), TopologyURI("0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11"), "gns3://projects/lab1/topology"} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		require.Error(t, err, uri)
		require.Contains(t, strings.ToLower(err.Error()), "not found", "another's project reads as one that does not exist: %s", uri)
	}
	err = cs.Subscribe(ctx, &sdk.SubscribeParams{URI: TopologyURI(h.project)})
	require.ErrorContains(t, err, "live topology, which is turned off")
}

func TestTheProjectToolsListAndOpenTheCallersProjects(t *testing.T) {
	h := newHarness(t)
	cs := h.mustConnect(aliceToken)
	_, list := call(t, cs, "list_gns3_projects", map[string]any{})
	require.True(t, list.Success)
	byID := map[string]string{}
	for _, it := range list.Data {
		byID[it.ID] = it.Result
	}
	require.Equal(t, map[string]string{h.project: "status: opened", h.closed: "status: closed"}, byID)

	_, opened := call(t, cs, "open_gns3_project", map[string]any{"project_id": h.closed})
	require.True(t, opened.Success)
	require.Equal(t, "status: opened", opened.Data[0].Result)
	_, foreign := call(t, cs, "open_gns3_project", map[string]any{"project_id": h.bobs})
	require.Contains(t, foreign.Error, "You do not have access")
	require.Empty(t, h.wf.calls(), "the project tools need no workflow")
}

func TestASessionBelongsToTheUserWhoOpenedIt(t *testing.T) {
	h := newHarness(t)
	resp, body := h.rpc("", "", initialize("x", nil))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
	require.Contains(t, string(body), "Sign in first")
	resp, _ = h.rpc("not-a-token", "", initialize("x", nil))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	cs := h.mustConnect(aliceToken)
	list := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
	resp, body = h.rpc(aliceToken, cs.ID(), list)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), "get_gns3_topology")
	resp, body = h.rpc(bobToken, cs.ID(), list)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "Bob cannot use Alice's session: %s", body)

	resp, body = h.rpc(aliceToken, cs.ID(), map[string]any{"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), `"no/such/method" unsupported`)
	resp, body = h.rpc(aliceToken, "unknown-session", list)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
}
