package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Bounds of one fuzz input: a session of a few requests against the in-process front door
// takes milliseconds; the memory is the HTTP and SDK plumbing of those requests.
const (
	fuzzDeadline     = 30 * time.Second
	fuzzMemory       = 128 << 20
	fuzzMaxMessages  = 8
	fuzzProjectID    = "0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11"
	fuzzRequestLimit = 10 * time.Second
)

// mcpMessage is a JSON-RPC message as a client sends it, for the seeds.
func mcpMessage(id int, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id > 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func initializeBody(name string, mode string) []byte {
	params := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": name, "version": "1"}}
	if mode != "" {
		params["_meta"] = map[string]any{"mode": mode}
	}
	return []byte(mcpMessage(1, "initialize", params))
}

// mcpExchange is what one fuzz input did to the front door.
type mcpExchange struct {
	statuses []int
	err      error
}

// post sends one message of a session (none before initialize answered) as Streamable HTTP
// asks, and reads the whole answer, an SSE stream included.
func post(c *http.Client, url, session string, body []byte) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, "", err
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), nil
}

// FuzzMCP sends any initialize request and then any messages of the session it opens (one a
// line) to the real front door, authenticated as a user, over HTTP as a client would; calls
// of lab tools run as MCPCall workflows that answer at once. The front door must not panic (the
// harness records a handler's panic, which net/http would only log), answer with a server
// error, or hang. Where a message calls a tool with arguments, taking project_id out of them
// is a round trip: putting it back and taking it out again gives the same arguments, and the
// topology resource's URI of that project names it again.
func FuzzMCP(f *testing.F) {
	h := newHarness(f)
	// The calls' workflow answers without the harness's require, which would call the F's
	// methods inside the fuzz function.
	answer := tools.Collect([]tools.Item{{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "ok"}})
	h.workflow = func(h *harness, in workflows.MCPCallInput) {
		answer.Metadata = map[string]any{"tool_name": in.Tool.Name, "version": tools.FormatVersion}
		ctx := context.Background()
		_ = h.calls.SaveResult(ctx, in.Call.TurnID, answer.JSON())
		_ = h.calls.Finish(ctx, in.Call.TurnID, domain.MCPCallCompleted, "", time.Now())
		done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, Status: domain.MCPCallCompleted})
		_, _ = h.events.Append(ctx, in.Call.TurnID, relay.TypeDone, done)
	}
	h.gns3.AddProject("fuzz-lab", fakegns3.ProjectID(fuzzProjectID), fakegns3.Members("alice"))
	pid := map[string]any{"project_id": fuzzProjectID}
	call := func(id int, name string, args map[string]any) string {
		return mcpMessage(id, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	withPID := func(m map[string]any) map[string]any {
		out := map[string]any{"project_id": fuzzProjectID}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	initialized := mcpMessage(0, "notifications/initialized", nil)
	lines := func(msgs ...string) []byte {
		var b bytes.Buffer
		for _, m := range msgs {
			b.WriteString(m + "\n")
		}
		return b.Bytes()
	}
	f.Add(initializeBody("claude-code", ""), lines(initialized, mcpMessage(2, "tools/list", nil), mcpMessage(3, "prompts/list", nil),
		mcpMessage(4, "resources/templates/list", nil), mcpMessage(5, "ping", nil)))
	f.Add(initializeBody("ide", string(tools.LabAutomation)), lines(initialized, call(2, "get_gns3_topology", pid),
		call(3, "start_gns3_node", withPID(map[string]any{"node_ids": []string{"PC1"}})), call(4, "list_gns3_projects", nil),
		call(5, "get_mcp_call_result", map[string]any{"call_id": "nope"})))
	f.Add(initializeBody("agent", string(tools.TeachingAssistant)), lines(initialized,
		mcpMessage(2, "resources/read", map[string]any{"uri": TopologyURI(fuzzProjectID)}),
		mcpMessage(3, "resources/subscribe", map[string]any{"uri": TopologyURI(fuzzProjectID)}),
		mcpMessage(4, "resources/unsubscribe", map[string]any{"uri": TopologyURI(fuzzProjectID)}),
		mcpMessage(5, "prompts/get", map[string]any{"name": "troubleshoot", "arguments": map[string]any{"project_id": fuzzProjectID}})))
	f.Add(initializeBody("agent", string(tools.LabAutomation)), lines(initialized,
		call(2, tools.ConfigCommandsTool, withPID(map[string]any{"device_configs": []any{map[string]any{"device_name": "R1", "commands": []string{"router ospf 1"}}}})),
		call(3, "decide_approval", map[string]any{"approval_id": "x", "decision": "approve"}),
		call(4, "open_gns3_project", pid), mcpMessage(5, "no/such/method", nil)))
	f.Add(initializeBody("agent", "injection"), lines(call(2, "get_gns3_topology", map[string]any{"project_id": 3})))
	f.Add([]byte(mcpMessage(1, "tools/list", nil)), lines(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_gns3_topology","arguments":[1]}}`, `[`, `{}`))

	client := &http.Client{Timeout: fuzzRequestLimit}
	f.Fuzz(func(t *testing.T, init, msgs []byte) {
		var x mcpExchange
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(init)+len(msgs)), func() {
			status, session, err := post(client, h.url, "", init)
			x.statuses = append(x.statuses, status)
			if err != nil {
				x.err = err
				return
			}
			for i, m := range bytes.Split(msgs, []byte("\n")) {
				if i == fuzzMaxMessages {
					break
				}
				status, _, err := post(client, h.url, session, m)
				x.statuses = append(x.statuses, status)
				if err != nil {
					x.err = err
					return
				}
			}
			if session != "" {
				req, _ := http.NewRequest(http.MethodDelete, h.url, nil)
				req.Header.Set("Authorization", "Bearer "+aliceToken)
				req.Header.Set("Mcp-Session-Id", session)
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
		if p := h.panicked.Swap(nil); p != nil {
			t.Fatalf("a request panicked: %s", *p)
		}
		if x.err != nil {
			t.Fatalf("after answers %v: %v", x.statuses, x.err)
		}
		for _, s := range x.statuses {
			if s >= 500 {
				t.Fatalf("a server error among the answers %v", x.statuses)
			}
		}
		for _, m := range bytes.Split(msgs, []byte("\n")) {
			checkArgumentsRoundTrip(t, m)
		}
	})
}

// checkArgumentsRoundTrip takes project_id out of a tools/call's arguments, as the front door
// does, and checks that doing it again on the arguments with the project put back gives the
// same, and that the project's topology URI names it.
func checkArgumentsRoundTrip(t *testing.T, msg []byte) {
	var m struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	args, projectID, err := splitArguments(m.Params.Arguments)
	if err != nil {
		return
	}
	if _, err := uuid.Parse(projectID); err != nil {
		t.Fatalf("split a project_id that is no UUID: %q", projectID)
	}
	var rest map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &rest); err != nil {
		t.Fatalf("arguments without project_id are not an object: %s", args)
	}
	if _, ok := rest["project_id"]; ok {
		t.Fatalf("project_id left in %s", args)
	}
	quoted, _ := json.Marshal(projectID)
	rest["project_id"] = quoted
	again, _ := json.Marshal(rest)
	args2, projectID2, err := splitArguments(again)
	var a, b any
	_ = json.Unmarshal([]byte(args), &a)
	_ = json.Unmarshal([]byte(args2), &b)
	if err != nil || projectID2 != projectID || !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip: %s %q became %s %q (%v)", args, projectID, args2, projectID2, err)
	}
	if got, ok := topologyProject(TopologyURI(projectID)); !ok || got != projectID {
		t.Fatalf("topology URI of %q names %q (%v)", projectID, got, ok)
	}
}
