package e2e

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// toolOutput is the seed's standard tool response format as a client reads it from tool_end.
type toolOutput struct {
	Success    bool   `json:"success"`
	Total      int    `json:"total"`
	Successful int    `json:"successful"`
	Failed     int    `json:"failed"`
	Error      string `json:"error"`
	Data       []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Result string `json:"result"`
		Error  string `json:"error"`
	} `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

// toolEnds returns the decoded tool_end output of each tool call, by tool_call_id.
func toolEnds(t *testing.T, frames []e2eenv.Frame) map[string]toolOutput {
	t.Helper()
	out := map[string]toolOutput{}
	for _, f := range frames {
		if f.Event != "tool_end" {
			continue
		}
		id, _ := f.Data["tool_call_id"].(string)
		raw, _ := f.Data["tool_output"].(string)
		var o toolOutput
		require.NoError(t, json.Unmarshal([]byte(raw), &o), "tool_output of %s is the standard JSON: %s", id, raw)
		require.NotContains(t, out, id, "one tool_end per tool call")
		out[id] = o
	}
	return out
}

// requireStandard checks the parts of the standard format every result carries.
func requireStandard(t *testing.T, o toolOutput, tool string) {
	t.Helper()
	require.Equal(t, o.Total, len(o.Data), "one data item per node, link or template")
	require.Equal(t, o.Total, o.Successful+o.Failed)
	require.Equal(t, tool, o.Metadata["tool_name"])
	require.Equal(t, "v1.0", o.Metadata["version"], "the seed names the standard format's version metadata.version")
	require.IsType(t, float64(0), o.Metadata["execution_time"])
}

// A lab-automation turn in which the model builds a two-PC lab: it creates two VPCS nodes
// (asking for the second one too close to the first), cables them by port name and short name,
// and starts them while GNS3 takes a few polls to report them started. The fake controller ends
// up holding exactly that lab, and the stream shows each step in the standard format.
func TestLabAutomationTurnBuildsLinksAndStartsTwoVPCS(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant"})
	const startPolls = 3
	title := titleReplies("Two PC lab")
	var listsBeforeStart atomic.Int64
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if last := req.LastMessage(); req.Stream && last.Role == "tool" && last.ToolCallID == "call_link" {
			// The nodes exist now: make GNS3 slow to report them started, as real emulators are.
			for _, n := range env.GNS3.Nodes(env.ProjectID) {
				env.GNS3.SetStartPolls(n.ID, startPolls)
			}
			listsBeforeStart.Store(int64(env.GNS3.Count(fakegns3.OpListNodes)))
		}
		return title(req)
	})
	createArgs := `{"nodes": [` +
		`{"template_id": "` + fakegns3.VPCSTemplateID + `", "x": 0, "y": 0, "name": "Host-A"},` +
		`{"template_id": "VPCS", "x": 100, "y": 50, "name": "Host-B"}]}`
	linkArgs := `{"links": [{"node_a": "Host-A", "port_a": "Ethernet0", "node_b": "Host-B", "port_b": "e0"}]}`
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_create", Name: "create_gns3_node", Arguments: createArgs}),
		// Models also send the arguments double-encoded as a JSON string.
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_link", Name: "create_gns3_link", Arguments: strconv.Quote(linkArgs)}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_start", Name: "start_gns3_node", Arguments: `{"node_ids": ["Host-A", "Host-B"]}`}),
		fakeopenai.Text("Host-A and Host-B are cabled and running."),
	)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "Build me two PCs, link them and start them"}, "")
	require.Equal(t, http.StatusOK, s.Status)
	frames := s.UntilDone(t, true)
	done := frames[len(frames)-1]
	require.Equal(t, "completed", done.Data["status"], "turn: %v", e2eenv.Types(frames))
	require.Zero(t, env.LLM.Pending(), "every scripted reply was used")

	// The lab in GNS3: exactly two VPCS nodes, far enough apart, one link, both started.
	nodes := env.GNS3.Nodes(env.ProjectID)
	require.Len(t, nodes, 2)
	a, ok := env.GNS3.NodeByName(env.ProjectID, "Host-A")
	require.True(t, ok, "Host-A exists (GNS3 3.0 ignores the name at creation, so the tool renamed it)")
	b, ok := env.GNS3.NodeByName(env.ProjectID, "Host-B")
	require.True(t, ok)
	for _, n := range []fakegns3.Node{a, b} {
		require.Equal(t, "vpcs", n.NodeType)
		require.Equal(t, fakegns3.VPCSTemplateID, n.TemplateID)
		require.Equal(t, "started", n.Status)
	}
	require.Equal(t, [2]int{0, 0}, [2]int{a.X, a.Y}, "Host-A is where the model asked")
	dist := math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y))
	require.GreaterOrEqual(t, dist, 250.0, "Host-B at (%d, %d) is kept 250 px from Host-A", b.X, b.Y)

	links := env.GNS3.Links(env.ProjectID)
	require.Len(t, links, 1)
	ends := map[string]fakegns3.LinkEnd{}
	for _, e := range links[0].Ends {
		ends[e.NodeID] = e
	}
	require.Len(t, ends, 2, "the link joins the two nodes")
	for _, n := range []fakegns3.Node{a, b} {
		e, found := ends[n.ID]
		require.True(t, found, "%s is an end of the link", n.Name)
		require.Equal(t, [2]int{0, 0}, [2]int{e.Adapter, e.Port}, "%s's Ethernet0 is adapter 0 port 0", n.Name)
		require.Equal(t, "e0", e.Label, "the port's short name labels the link end")
	}

	// The start waited by polling until GNS3 reported the nodes started.
	require.GreaterOrEqual(t, int64(env.GNS3.Count(fakegns3.OpListNodes))-listsBeforeStart.Load(), int64(startPolls+1),
		"the start tool polled until each node reported started")

	// The stream: three tool calls in order, each with its tool_start and tool_end.
	var started []string
	for _, f := range frames {
		if f.Event == "tool_start" {
			started = append(started, f.Data["tool_call_id"].(string))
		}
	}
	require.Equal(t, []string{"call_create", "call_link", "call_start"}, started)
	outs := toolEnds(t, frames)
	require.Len(t, outs, 3)

	created := outs["call_create"]
	requireStandard(t, created, "create_gns3_node")
	require.True(t, created.Success, "create: %+v", created)
	require.Equal(t, 2, created.Total)
	require.Equal(t, 2, created.Successful)
	require.Equal(t, a.ID, created.Data[0].ID)
	require.Equal(t, "Host-A", created.Data[0].Name)
	require.Equal(t, b.ID, created.Data[1].ID)
	require.Equal(t, "Host-B", created.Data[1].Name)
	for _, d := range created.Data {
		require.Equal(t, "success", d.Status)
		require.Contains(t, d.Result, "vpcs")
	}
	require.Contains(t, created.Data[1].Result, "instead of (100, 50)", "the result tells the model the node was moved")

	linked := outs["call_link"]
	requireStandard(t, linked, "create_gns3_link")
	require.True(t, linked.Success, "link: %+v", linked)
	require.Equal(t, 1, linked.Total)
	require.Equal(t, links[0].ID, linked.Data[0].ID)
	require.Equal(t, "success", linked.Data[0].Status)
	require.Equal(t, "Host-A Ethernet0 <-> Host-B Ethernet0", linked.Data[0].Name)

	startedOut := outs["call_start"]
	requireStandard(t, startedOut, "start_gns3_node")
	require.True(t, startedOut.Success, "start: %+v", startedOut)
	require.Equal(t, 2, startedOut.Total)
	require.ElementsMatch(t, []string{a.ID, b.ID}, []string{startedOut.Data[0].ID, startedOut.Data[1].ID})
	for _, d := range startedOut.Data {
		require.Equal(t, "success", d.Status)
		require.Contains(t, d.Result, "started")
	}

	// tool_progress frames: per node, "starting" then "started", between the start tool's
	// tool_start and tool_end.
	type step struct{ node, status string }
	var progress []step
	inStart := false
	for _, f := range frames {
		switch {
		case f.Event == "tool_start" && f.Data["tool_call_id"] == "call_start":
			inStart = true
		case f.Event == "tool_end" && f.Data["tool_call_id"] == "call_start":
			inStart = false
		case f.Event == "tool_progress" && f.Data["tool_call_id"] == "call_start":
			require.True(t, inStart, "progress arrives while the tool runs")
			require.Equal(t, "start_gns3_node", f.Data["tool_name"])
			p := f.Data["progress"].(map[string]any)
			progress = append(progress, step{p["item_id"].(string), p["status"].(string)})
		}
	}
	for _, n := range []fakegns3.Node{a, b} {
		var statuses []string
		for _, p := range progress {
			if p.node == n.ID {
				statuses = append(statuses, p.status)
			}
		}
		require.NotEmpty(t, statuses, "progress for %s", n.Name)
		require.Equal(t, "starting", statuses[0], "%s: %v", n.Name, statuses)
		require.Equal(t, "started", statuses[len(statuses)-1], "%s: %v", n.Name, statuses)
	}

	// The model was offered the lab-automation tools and its last call saw the start result.
	streamed := streamedRequests(env.LLM)
	require.Len(t, streamed, 4)
	require.Contains(t, streamed[0].ToolNames(), "delete_gns3_node", "lab automation offers destructive tools")
	last := streamed[3]
	require.Equal(t, "call_start", last.LastMessage().ToolCallID)
	require.Contains(t, strings.Join(labBlocks(last), ""), "Host-A", "the model was told of the new node")
}

// In teaching mode a destructive tool is refused when it runs, not only left out of the offer:
// a model that calls delete_gns3_node anyway gets a tool result saying so, and the node stays.
func TestTeachingModeRefusesDeleteNodeAndKeepsTheNode(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "teaching_assistant"})
	pc := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", X: -200, Y: 0})
	env.LLM.SetHandler(titleReplies("Delete attempt"))
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_delete", Name: "delete_gns3_node", Arguments: `{"node_ids": ["PC1"]}`}),
		fakeopenai.Text("I cannot delete nodes in teaching mode."),
	)

	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "delete PC1"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "a refused tool does not fail the turn")
	require.Equal(t, []string{"turn_started", "tool_call", "tool_start", "tool_end", "content", "done"}, e2eenv.Types(frames))

	out := toolEnds(t, frames)["call_delete"]
	requireStandard(t, out, "delete_gns3_node")
	require.False(t, out.Success)
	require.Zero(t, out.Total)
	require.Contains(t, out.Error, "not available in teaching_assistant mode")
	require.Contains(t, out.Error, "lab_automation_assistant")

	got, ok := env.GNS3.Node(pc.ID)
	require.True(t, ok, "the node still exists")
	require.Equal(t, "PC1", got.Name)
	require.Len(t, env.GNS3.Nodes(env.ProjectID), 1)
	require.Zero(t, env.GNS3.Count(fakegns3.OpDeleteNode), "GNS3 was never asked to delete")

	// The tool was not offered either, and the model read the refusal as its tool result.
	streamed := streamedRequests(env.LLM)
	require.Len(t, streamed, 2)
	require.NotContains(t, streamed[0].ToolNames(), "delete_gns3_node")
	require.Contains(t, streamed[0].ToolNames(), "create_gns3_node")
	result := streamed[1].LastMessage()
	require.Equal(t, "tool", result.Role)
	require.Equal(t, "call_delete", result.ToolCallID)
	require.Contains(t, result.Content, "not available in teaching_assistant mode")
}
