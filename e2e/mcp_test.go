package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/mcp"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// bearer adds the user's GNS3 token to every request of the MCP client, as an MCP client's
// configuration does with an Authorization header.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// mcpClient is the official Go SDK's client connected to the running service at /mcp, its
// traffic checked against the OpenAPI document like every other e2e request.
type mcpClient struct {
	*sdk.ClientSession
	mu       sync.Mutex
	progress []string
	updated  chan string
}

func connectMCP(t testing.TB, env *e2eenv.Env, token, query string, more ...func(*sdk.ClientOptions)) (*mcpClient, error) {
	t.Helper()
	c := &mcpClient{updated: make(chan string, 16)}
	opts := &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params.Message)
			c.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			select {
			case c.updated <- r.Params.URI:
			default:
			}
		},
	}
	for _, m := range more {
		m(opts)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-agent", Version: "1.0"}, opts)
	transport := &sdk.StreamableClientTransport{Endpoint: env.URL + mcp.Path + query,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: env.HTTP.Transport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.ClientSession = cs
	return c, nil
}

func (c *mcpClient) progressSeen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.progress...)
}

// callTool calls a tool and decodes its standard result from structuredContent, checking that
// the text content says the same.
func callTool(t testing.TB, c *mcpClient, name string, args map[string]any, progressToken any) (*sdk.CallToolResult, deviceOutput) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		params.SetProgressToken(progressToken)
	}
	res, err := c.CallTool(ctx, params)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*sdk.TextContent).Text
	var fromText, fromStructured deviceOutput
	require.NoError(t, json.Unmarshal([]byte(text), &fromText), text)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &fromStructured))
	require.Equal(t, fromText, fromStructured, "structuredContent is the text content's object")
	require.Equal(t, !fromText.Success, res.IsError, "a result that is not a success is a tool error: %s", text)
	return res, fromText
}

// The SDK's client against the running service: the catalogue is the chat's, the topology tool
// answers, a device command runs on real VPCS with per-device progress, a forbidden command is
// blocked and audited with the MCP client as its origin, the call is a findable workflow, its
// result can be fetched again, and the topology resource reads and notifies.
func TestMCPToolsOnRealVPCS(t *testing.T) {
	lab := vpcslab.Start(t, 2)
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "config"})
	for i, n := range lab.Nodes {
		node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: []string{"PC1", "PC2"}[i],
			X: i * 300, Status: "started"})
		env.GNS3.SetConsole(node.ID, "127.0.0.1", n.ConsolePort)
	}
	c, err := connectMCP(t, env, e2eenv.UserToken, "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The catalogue: the chat's tools of the user's mode, same descriptions and schemas plus
	// project_id, and the three tools of MCP's own.
	listed, err := c.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tl := range listed.Tools {
		byName[tl.Name] = tl
	}
	chat := tools.NewRegistry(tools.AllTools()...).For(tools.LabAutomation)
	require.Len(t, byName, len(chat)+3)
	for _, want := range chat {
		got, ok := byName[want.Name()]
		require.True(t, ok, "tool %s is offered", want.Name())
		require.Equal(t, want.Description(), got.Description)
		gotSchema, _ := json.Marshal(got.InputSchema)
		require.JSONEq(t, string(mcp.WithProjectID(want.Parameters())), string(gotSchema), want.Name())
	}
	for _, own := range []string{"list_gns3_projects", "open_gns3_project", "get_mcp_call_result"} {
		require.Contains(t, byName, own)
	}
	for _, labControl := range []string{"create_gns3_snapshot", "list_gns3_snapshots", "restore_gns3_snapshot",
		"set_gns3_link_conditions", "clear_gns3_link_conditions"} {
		require.Contains(t, byName, labControl, "snapshots and link conditions reach MCP through the one catalogue")
	}
	require.True(t, *byName["restore_gns3_snapshot"].Annotations.DestructiveHint, "a restore loses work")
	require.False(t, byName["set_gns3_link_conditions"].Annotations.ReadOnlyHint)

	_, projects := callTool(t, c, "list_gns3_projects", map[string]any{}, nil)
	require.True(t, projects.Success)
	require.Equal(t, env.ProjectID, projects.Data[0].ID)

	res, topo := callTool(t, c, "get_gns3_topology", map[string]any{"project_id": env.ProjectID}, nil)
	require.True(t, topo.Success, "%+v", topo)
	itemByName(t, topo, "PC1")
	topoCall := res.Meta["call_id"].(string)
	require.NotEmpty(t, topoCall)

	res, show := callTool(t, c, "execute_multiple_device_commands", map[string]any{"project_id": env.ProjectID, "device_configs": []any{
		map[string]any{"device_name": "PC1", "commands": []string{"show ip"}},
		map[string]any{"device_name": "PC2", "commands": []string{"show ip", "traceroute 10.0.0.1"}},
	}}, "show-1")
	status, _, _ := itemByName(t, show, "PC1")
	require.Equal(t, "success", status, "%+v", show)
	status, result, errText := itemByName(t, show, "PC2")
	require.Equal(t, "partial_success", status, "the allowed command ran, the forbidden one did not: %+v", show)
	require.Contains(t, result, "IP/MASK")
	require.Contains(t, errText, "traceroute")
	seen := strings.Join(c.progressSeen(), "\n")
	require.Contains(t, seen, "call "+res.Meta["call_id"].(string)+" started")
	require.Contains(t, seen, "PC2: running")
	require.Contains(t, seen, "PC2: done")

	// The audit names the MCP client; the blocked command never reached the device.
	db, err := models.Open("", env.Config.DataDir)
	require.NoError(t, err)
	recs, err := models.DeviceRepository{DB: db}.Audit(ctx, env.ProjectID, 100)
	require.NoError(t, err)
	var blocked []string
	for _, r := range recs {
		require.Equal(t, "mcp:e2e-agent", r.Origin, "%s %s", r.DeviceName, r.Command)
		if r.Blocked {
			blocked = append(blocked, r.DeviceName+": "+r.Command)
			require.Equal(t, models.CommandBlocked, r.Status)
		}
	}
	require.Equal(t, []string{"PC2: traceroute 10.0.0.1"}, blocked)

	// The call is a workflow of its own, findable by the turn's search attributes.
	wf := res.Meta["workflow_id"].(string)
	require.True(t, strings.HasPrefix(wf, "mcp-call-execute_multiple_device_commands-"), wf)
	desc, err := env.Service.Temporal().DescribeWorkflowExecution(ctx, wf, "")
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())
	attrs := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	for _, k := range []string{"ProjectId", "SessionId", "UserId", "ToolName"} {
		require.Contains(t, attrs, k)
	}

	// A configuration call waits for the owner's approval, which the per-project list shows
	// and the per-project route decides; then it applies and reports the change.
	type outcome struct {
		res *sdk.CallToolResult
		out deviceOutput
	}
	applied := make(chan outcome, 1)
	go func() {
		res, out := callTool(t, c, "execute_vpcs_commands", map[string]any{"project_id": env.ProjectID, "device_configs": []any{
			map[string]any{"device_name": "PC1", "commands": []string{"ip 10.0.0.1/24"}}}}, "cfg-1")
		applied <- outcome{res, out}
	}()
	var pending []models.ApprovalView
	for len(pending) == 0 {
		code, body := env.Do(http.MethodGet, env.ChatPath("/approvals?status=pending"), nil)
		require.Equal(t, http.StatusOK, code, string(body))
		require.NoError(t, json.Unmarshal(body, &pending))
		if len(pending) == 0 {
			select {
			case <-ctx.Done():
				t.Fatal("no pending approval for the MCP configuration call")
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	require.Equal(t, "execute_vpcs_commands", pending[0].ToolName)
	code, body := env.Do(http.MethodPost, env.ChatPath("/approvals/"+pending[0].ApprovalID), map[string]any{"decision": "approve"})
	require.Equal(t, http.StatusOK, code, string(body))
	select {
	case o := <-applied:
		require.True(t, o.out.Success, "%+v", o.out)
		_, result, _ := itemByName(t, o.out, "PC1")
		require.Contains(t, result, "10.0.0.1")
		require.Contains(t, strings.Join(c.progressSeen(), "\n"), "waiting for approval "+pending[0].ApprovalID)
	case <-ctx.Done():
		t.Fatal("the approved MCP configuration call did not return")
	}
	code, body = env.Do(http.MethodGet, env.ChatPath("/config-jobs"), nil)
	require.Equal(t, http.StatusOK, code)
	var jobs []struct {
		ToolName string `json:"tool_name"`
		Records  []struct {
			Origin string `json:"origin"`
		} `json:"records"`
	}
	require.NoError(t, json.Unmarshal(body, &jobs))
	require.Len(t, jobs, 1)
	require.NotEmpty(t, jobs[0].Records)
	for _, r := range jobs[0].Records {
		require.Equal(t, "mcp:e2e-agent", r.Origin, "the job's audit names the MCP client")
	}

	// Fetched again by call id, the same result.
	_, again := callTool(t, c, "get_mcp_call_result", map[string]any{"call_id": topoCall}, nil)
	require.Equal(t, topo, again)

	// The topology resource, and a change notification to a subscriber.
	uri := mcp.TopologyURI(env.ProjectID)
	read, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	require.NoError(t, err)
	require.Contains(t, read.Contents[0].Text, `"PC2"`)
	require.NoError(t, c.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}))
	callTool(t, c, "create_gns3_node", map[string]any{"project_id": env.ProjectID, "nodes": []any{
		map[string]any{"template_id": "VPCS", "x": 600, "y": 0}}}, nil)
	select {
	case got := <-c.updated:
		require.Equal(t, uri, got)
	case <-ctx.Done():
		t.Fatal("no resource update notification after a node was created")
	}
}

// A teaching-mode user gets the teaching catalogue and is refused delete_gns3_node, may not
// ask for a higher mode on initialize, cannot reach another user's project, and is held to the
// per-user limit on running calls.
func TestMCPModesProjectsAndLimits(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "teaching_assistant", Configure: func(c *app.Config) { c.MCPMaxCallsPerUser = 2 }})
	env.GNS3.AddUser("bob", "bob-token", false)
	bobs := env.GNS3.AddProject("bob-lab", fakegns3.Members("bob"))
	node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})

	_, err := connectMCP(t, env, e2eenv.UserToken, "?mode=lab_automation_assistant")
	require.ErrorContains(t, err, "Forbidden")
	code, body := env.Do(http.MethodPost, "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"},
			"_meta": map[string]any{"mode": "lab_automation_assistant"}}})
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, string(body), "above what you may use")
	code, body = env.Do(http.MethodPost, "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"},
			"_meta": map[string]any{"mode": "troubleshooting_injection"}}})
	require.Equal(t, http.StatusUnprocessableEntity, code, string(body))
	require.Contains(t, string(body), "chat/inject only")
	_, err = connectMCP(t, env, "not-a-token", "")
	require.Error(t, err)

	c, err := connectMCP(t, env, e2eenv.UserToken, "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	listed, err := c.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
	}
	require.NotContains(t, names, "delete_gns3_node")
	require.Contains(t, names, "get_gns3_topology")

	_, del := callTool(t, c, "delete_gns3_node", map[string]any{"project_id": env.ProjectID, "node_ids": []string{node.ID}}, nil)
	require.False(t, del.Success)
	require.Contains(t, del.Error, "not available in teaching_assistant mode")
	_, still := env.GNS3.Node(node.ID)
	require.True(t, still, "nothing was deleted")

	_, foreign := callTool(t, c, "get_gns3_topology", map[string]any{"project_id": bobs}, nil)
	require.False(t, foreign.Success)
	require.Regexp(t, "do not have access|not found", foreign.Error)
	_, err = c.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.TopologyURI(bobs)})
	require.Error(t, err, "another user's topology is not readable")

	_, bad := callTool(t, c, "get_gns3_topology", map[string]any{}, nil)
	require.Contains(t, bad.Error, "project_id is required")

	code, me := env.Do(http.MethodGet, "/v3/access/users/me", nil)
	require.Equal(t, http.StatusOK, code)
	var who struct {
		UserID string `json:"user_id"`
	}
	require.NoError(t, json.Unmarshal(me, &who))
	// Two calls already running for this user (their workflow waits on a queue no worker
	// polls) and one whose workflow is gone: the gone one stops counting, the third call is
	// refused, clearly.
	db, err := models.Open("", env.Config.DataDir)
	require.NoError(t, err)
	waiting, err := env.Service.Temporal().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "mcp-limit-holder", TaskQueue: "nobody-polls-this"}, "Nothing")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = env.Service.Temporal().TerminateWorkflow(context.Background(), waiting.GetID(), "", "test over")
	})
	require.NoError(t, models.MCPCallRepository{DB: db}.Start(ctx, &models.MCPCall{ID: "stale", WorkflowID: "mcp-call-gone",
		SessionID: "s", UserID: who.UserID, ProjectID: env.ProjectID, ToolName: "get_gns3_topology", Client: "x", Mode: "teaching_assistant"}, 0))
	for i := range 2 {
		require.NoError(t, models.MCPCallRepository{DB: db}.Start(ctx, &models.MCPCall{ID: fmt.Sprintf("held-%d", i), WorkflowID: waiting.GetID(),
			SessionID: "s", UserID: who.UserID, ProjectID: env.ProjectID, ToolName: "get_gns3_topology", Client: "x", Mode: "teaching_assistant"}, 0))
	}
	_, limited := callTool(t, c, "get_gns3_topology", map[string]any{"project_id": env.ProjectID}, nil)
	require.Contains(t, limited.Error, "You already have 2 MCP calls running (at most 2 at once per user)")
	stale, err := models.MCPCallRepository{DB: db}.Get(ctx, "stale")
	require.NoError(t, err)
	require.Equal(t, domain.MCPCallFailed, stale.Status)
}

// A worker killed with SIGKILL while an MCP call waits for a node to start: a new worker
// finishes the call, and the client that waited gets its result.
func TestMCPCallSurvivesKilledWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{})
	bin := buildBinary(t)
	node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "stopped"})
	// The node takes a dozen seconds of polls to report started.
	env.GNS3.SetStartPolls(node.ID, 10)
	logPath := workerLog(t, env.Config.DataDir)
	w1 := startWorker(t, bin, env, temporalAddr, logPath)

	c, err := connectMCP(t, env, e2eenv.UserToken, "")
	require.NoError(t, err)
	type outcome struct {
		res *sdk.CallToolResult
		out deviceOutput
	}
	done := make(chan outcome, 1)
	go func() {
		res, out := callTool(t, c, "start_gns3_node", map[string]any{"project_id": env.ProjectID, "node_ids": []string{node.ID}}, "start-1")
		done <- outcome{res, out}
	}()
	// Killed once the tool is waiting for the node, in the middle of its activity.
	for !strings.Contains(strings.Join(c.progressSeen(), "\n"), "PC1: ") {
		select {
		case <-ctx.Done():
			t.Fatal("no node-start progress before the deadline")
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NoError(t, w1.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-w1.done:
	case <-ctx.Done():
		t.Fatal("the worker did not die")
	}
	startWorker(t, bin, env, temporalAddr, logPath)

	select {
	case o := <-done:
		require.True(t, o.out.Success, "%+v", o.out)
		status, _, _ := itemByName(t, o.out, "PC1")
		require.Equal(t, "success", status)
		// The tool's activity really was cut short and run again by the new worker.
		attempts := int32(0)
		for _, ev := range closedHistory(t, env, o.res.Meta["workflow_id"].(string)).Events {
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				attempts = max(attempts, a.GetAttempt())
			}
		}
		require.GreaterOrEqual(t, attempts, int32(2), "the activity was retried after the kill")
	case <-ctx.Done():
		t.Fatal("the MCP call did not return after the worker was replaced")
	}
}
