package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The "an unknown snapshot or link gets a clear error naming what exists", under
// --approval changes, through the chat and over MCP: a restore of a snapshot that does not
// exist and a delete of a link that does not exist fail at once, naming the snapshots and the
// links there are, with no approval asked or stored and nothing changed in GNS3; a restore of
// the snapshot that exists still asks first. The turn's history replays.
func TestDestructiveCallThatCannotRunIsRefusedAtOnce(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
	env.LLM.SetHandler(titleReplies("Refused"))
	g := env.GNS3
	pc1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1"})
	pc2 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC2", X: 300})
	link := g.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	// Taken while the lab was stopped, as GNS3 requires; the lab runs since.
	snap := g.TakeSnapshot(env.ProjectID, "before-lab")
	g.SetStatus(pc1.ID, "started")
	g.SetStatus(pc2.ID, "started")
	unchanged := func() {
		t.Helper()
		for _, op := range []fakegns3.Op{fakegns3.OpRestoreSnapshot, fakegns3.OpDeleteLink, fakegns3.OpDeleteNode} {
			require.Zero(t, g.Count(op), "%s was reached", op)
		}
		require.Len(t, g.Links(env.ProjectID), 1)
		require.Len(t, g.Nodes(env.ProjectID), 2)
	}

	env.LLM.Enqueue(
		fakeopenai.Calls(
			fakeopenai.ToolCall{ID: "c_nope", Name: "restore_gns3_snapshot", Arguments: `{"snapshot": "before-break"}`},
			fakeopenai.ToolCall{ID: "c_link", Name: "delete_gns3_link", Arguments: `{"links": [{"link_id": "not-a-link"}]}`}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_known", Name: "restore_gns3_snapshot", Arguments: `{"snapshot": "before-lab"}`}),
		fakeopenai.Text("The lab was left as it is."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "put the lab back as before the break", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	sessionID, turnID := startedIDs(t, seen)
	asked := approvalOf(t, seen[len(seen)-1])
	require.Equal(t, "c_known", asked.ToolCallID, "the snapshot that exists is asked about")

	// Before anything was asked, both impossible calls had their results, as tool failures.
	refused := map[string]deviceOutput{}
	for _, f := range seen[:len(seen)-1] {
		require.NotEqual(t, "approval_required", f.Event)
		if f.Event == "tool_end" {
			var o deviceOutput
			require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &o), f.Raw)
			refused[f.Data["tool_call_id"].(string)] = o
		}
	}
	require.Len(t, refused, 2, "both refused calls ended before the question")
	for id, want := range map[string]string{
		"c_nope": `restore_gns3_snapshot was not run, so nothing changed: no snapshot "before-break" in this project; its snapshots are: "before-lab" (snapshot_id ` + snap.ID,
		"c_link": "delete_gns3_link was not run, so nothing changed: no link not-a-link in this project (links: PC1 Ethernet0 <-> PC2 Ethernet0 (link_id " + link.ID + "))",
	} {
		require.False(t, refused[id].Success, id)
		require.Contains(t, refused[id].Error, want, id)
	}
	unchanged()

	// Only the question the possible call needed is stored; rejected, nothing changes.
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/approvals"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list []approvalJSON
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list, 1)
	require.Equal(t, "c_known", list[0].ToolCallID)
	code, body = env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+asked.ApprovalID), map[string]any{"decision": "reject"})
	require.Equal(t, http.StatusOK, code, string(body))
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	unchanged()

	// The model read the refusals as the calls' results.
	reqs := streamedRequests(env.LLM)
	require.Len(t, reqs, 3)
	var toolResults []string
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			toolResults = append(toolResults, m.Content)
		}
	}
	require.Len(t, toolResults, 2)
	require.Contains(t, toolResults[0]+toolResults[1], `its snapshots are: \"before-lab\"`)

	replayAndSave(t, env, workflows.WorkflowID(sessionID, turnID), "chat_turn_destructive_check_history.json")

	// Over MCP the same: refused at once, no approval stored; the known snapshot waits.
	projectApprovals := func() []approvalJSON {
		t.Helper()
		code, body := env.Do(http.MethodGet, env.ChatPath("/approvals"), nil)
		require.Equal(t, http.StatusOK, code, string(body))
		var list []approvalJSON
		require.NoError(t, json.Unmarshal(body, &list))
		return list
	}
	require.Len(t, projectApprovals(), 1, "the chat's one question")
	c, err := connectMCP(t, env, e2eenv.UserToken, "")
	require.NoError(t, err)
	res, out := callTool(t, c, "restore_gns3_snapshot", map[string]any{"project_id": env.ProjectID, "snapshot": "before-break"}, nil)
	require.False(t, out.Success)
	require.Contains(t, out.Error, `no snapshot "before-break" in this project; its snapshots are: "before-lab"`)
	require.Equal(t, "completed", res.Meta["status"], "the call ended with its failure")
	require.Len(t, projectApprovals(), 1, "the refused MCP call stored no approval")
	res, _ = callTool(t, c, "restore_gns3_snapshot", map[string]any{"project_id": env.ProjectID, "snapshot": "before-lab"}, nil)
	require.Equal(t, "waiting_approval", res.Meta["status"], "the snapshot that exists is asked about")
	require.Len(t, projectApprovals(), 2)
	_, rejected := callTool(t, c, "decide_approval", map[string]any{"approval_id": res.Meta["approval_id"], "decision": "reject"}, nil)
	require.False(t, rejected.Success, "a rejected restore reports that nothing was done: %+v", rejected)
	unchanged()
}
