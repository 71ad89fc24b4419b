package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
)

// session is one MCP session's server side: its settings, and its topology subscriptions.
type session struct {
	f      *frontDoor
	st     sessionSettings
	server *sdk.Server

	mu      sync.Mutex
	watches map[string]context.CancelFunc // by resource URI
	closing sync.Once
}

const instructions = `Tools of GNS3 Copilot for a GNS3 lab. Every lab tool takes project_id: find it with ` +
	`list_gns3_projects, and open a closed project with open_gns3_project. Tool results use one format: ` +
	`{success,total,successful,failed,data[{id,name,status,result|error}],error?,metadata}. Configuration ` +
	`and destructive calls may need the user's approval: such a call answers at once with status ` +
	`waiting_approval, the plan per device and metadata.approval (approval_id, expires_at, question), and ` +
	`nothing is applied. Show the user the plan, ask them, then call decide_approval with their decision ` +
	`(approve, reject with a comment, or approve_all); its result is the call's own. Never decide for the ` +
	`user. If a call's connection drops, the call goes on: get_mcp_call_result returns its result by call id ` +
	`(the first progress notification and the result's _meta carry it). Resource ` +
	`gns3://projects/{project_id}/topology is the lab's live topology; the prompts guide whole tasks.`

func (f *frontDoor) newSessionServer(st sessionSettings) *sdk.Server {
	s := &session{f: f, st: st, watches: map[string]context.CancelFunc{}}
	s.server = sdk.NewServer(f.implementation(), &sdk.ServerOptions{
		Instructions:              instructions,
		SupportedProtocolVersions: protocolVersions,
		SubscribeHandler:          s.subscribe,
		UnsubscribeHandler:        s.unsubscribe,
		// No logging capability: nothing is logged to clients.
		Capabilities: &sdk.ServerCapabilities{},
	})
	asks := false
	for _, t := range f.d.Tools.For(st.mode) {
		s.server.AddTool(catalogueTool(t), s.callTool(t.Name()))
		asks = asks || (t.Mutating() && domain.IsDeviceTool(t.Name())) || domain.IsDestructiveTool(t.Name())
	}
	s.server.AddTool(listProjectsTool, s.listProjects)
	s.server.AddTool(openProjectTool, s.openProject)
	s.server.AddTool(callResultTool, s.callResult)
	if asks && f.d.Work.Approval != "" {
		// Only a session whose tools may wait for an approval has approvals to decide.
		s.server.AddTool(decideTool, s.decideApproval)
	}
	s.server.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: topologyTemplate, Name: "topology", Title: "GNS3 project topology", MIMEType: "application/json",
		Description: "The project's nodes and links as GNS3 reports them, from the copilot's live copy of the lab. " +
			"Subscribe to be told when it changes.",
	}, s.readTopology)
	s.addPrompts()
	s.server.AddReceivingMiddleware(s.modeGuard)
	return s.server
}

// catalogueTool is a chat tool as MCP offers it: the same name, description and schema, plus
// project_id, since an MCP session is bound to no project.
func catalogueTool(t tools.Tool) *sdk.Tool {
	readOnly := !t.Mutating() && (!domain.IsDeviceTool(t.Name()) || t.Name() == tools.ShowCommandsTool)
	destructive := domain.IsDestructiveTool(t.Name())
	return &sdk.Tool{Name: t.Name(), Description: t.Description(), InputSchema: WithProjectID(t.Parameters()),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: t.Idempotent()}}
}

const projectIDDescription = "The GNS3 project to work on (its UUID); list_gns3_projects lists yours."

// WithProjectID adds a required project_id to a tool's argument schema.
func WithProjectID(schema json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		m = map[string]any{"type": "object"}
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props["project_id"] = map[string]any{"type": "string", "format": "uuid", "description": projectIDDescription}
	m["properties"] = props
	req, _ := m["required"].([]any)
	if !slices.Contains(req, any("project_id")) {
		req = append([]any{"project_id"}, req...)
	}
	m["required"] = req
	b, _ := json.Marshal(m)
	return b
}

// modeGuard answers a call of a catalogue tool outside the session's mode with the chat's own
// refusal, instead of the SDK's "unknown tool": the agent learns which mode it would need.
func (s *session) modeGuard(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
			if t, found := s.f.d.Tools.Lookup(r.Params.Name); found && !slices.Contains(t.Modes(), s.st.mode) {
				// The registry refuses before it touches anything.
				res := s.f.d.Tools.Execute(ctx, tools.Env{}, s.st.mode, r.Params.Name, "{}")
				return standardResult(res.JSON(), nil), nil
			}
		}
		return next(ctx, method, req)
	}
}

// callTool runs a catalogue tool as an MCPCall workflow.
func (s *session) callTool(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		caller, ok := callerOf(req.Extra)
		if !ok || caller.ID != s.st.userID {
			return nil, errors.New("this session belongs to another user")
		}
		args, projectID, err := splitArguments(req.Params.Arguments)
		if err != nil {
			return failure(name, err.Error()), nil
		}
		if res := s.f.checkProject(ctx, caller, projectID, name); res != nil {
			return res, nil
		}
		return s.f.run(ctx, req, caller, s.st, name, projectID, args)
	}
}

// splitArguments takes project_id out of a call's arguments; the rest are the tool's own, as
// the model would send them.
func splitArguments(raw json.RawMessage) (args string, projectID string, err error) {
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", "", fmt.Errorf("arguments must be a JSON object: %v", err)
		}
	}
	pid, ok := m["project_id"]
	if !ok {
		return "", "", errors.New("project_id is required: the GNS3 project (UUID) to work on; list_gns3_projects lists yours")
	}
	if err := json.Unmarshal(pid, &projectID); err != nil {
		return "", "", errors.New("project_id must be a string (the project's UUID)")
	}
	if _, err := uuid.Parse(projectID); err != nil {
		return "", "", fmt.Errorf("project_id must be a UUID, got %q", respond.Truncate(projectID, 80))
	}
	delete(m, "project_id")
	b, err := json.Marshal(m)
	if m == nil {
		b = []byte(`{}`)
	}
	return string(b), projectID, err
}

// checkProject refuses a project the caller may not see, or one that is not opened, with a
// result the agent can act on; nil means go ahead.
func (f *frontDoor) checkProject(ctx context.Context, caller auth.Caller, projectID, tool string) *sdk.CallToolResult {
	var p *gns3.Project
	var err error
	if f.d.Live != nil {
		p, err = f.d.Live.Project(ctx, caller.GNS3, projectID)
	} else {
		p, err = caller.GNS3.GetProject(ctx, projectID)
	}
	switch {
	case errors.Is(err, gns3.ErrNotFound):
		return failure(tool, fmt.Sprintf("Project '%s' not found.", projectID))
	case errors.Is(err, gns3.ErrForbidden):
		return failure(tool, fmt.Sprintf("You do not have access to project '%s'.", projectID))
	case err != nil:
		return failure(tool, "Looking up the project failed: "+err.Error())
	case p.Status != gns3.ProjectOpened:
		return failure(tool, fmt.Sprintf("Project '%s' must be opened first (it is %s); open_gns3_project opens it.", p.Name, p.Status))
	}
	return nil
}

// failure is a whole-call failure in the standard format, as an MCP tool error.
func failure(tool, msg string) *sdk.CallToolResult {
	return standardResult(failureJSON(tool, msg), nil)
}

func failureJSON(tool, msg string) string {
	r := tools.Failure("%s", msg)
	r.Metadata = map[string]any{"tool_name": tool, "version": tools.FormatVersion}
	return r.JSON()
}

// standardResult is a standard-format result as MCP carries it: the JSON as text content and
// the same object as structuredContent; a result that is not a success is a tool error.
func standardResult(text string, meta sdk.Meta) *sdk.CallToolResult {
	var head struct {
		Success bool `json:"success"`
	}
	_ = json.Unmarshal([]byte(text), &head)
	return &sdk.CallToolResult{Meta: meta, Content: []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: json.RawMessage(text), IsError: !head.Success}
}
