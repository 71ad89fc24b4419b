package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Save, break, restore and keep working by name, through the chat as GNS3's panel sees it, on
// real VPCS behind the fake GNS3: the snapshot of the running lab asks first, saying it pauses
// PC1 and PC2, and then saves both, pauses them and answers how long; the restore waits for a
// decision that says what will be lost, a rejected restore changes nothing, and after an approved
// one every node and link has a new id, the model is told the new ones, the PCs that ran run
// again and are read back, and the same names reach PC1's console.
//
// The fake GNS3 refuses a snapshot of a running lab and restores as GNS3 does (new ids, nodes
// stopped, link conditions as at the snapshot), but the VPCS processes are the test's own: they
// keep running and keep their addresses, where a real GNS3 would start VPCS again from the
// snapshot's files (the real GNS3's test, snapshots_realgns3_test.go, shows that).
func TestSnapshotRestoreWithApprovalOnRealVPCS(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes"})
	g := env.GNS3
	pc1, _ := g.NodeByName(env.ProjectID, "PC1")
	pc2, _ := g.NodeByName(env.ProjectID, "PC2")
	link := g.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: "/v3/projects/" + env.ProjectID + "/chat"}
	sid := uuid.NewString()

	// Save, then break: a slow link and a node added after the snapshot.
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_snap", Name: "create_gns3_snapshot", Arguments: `{"name": "before-break"}`}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_slow", Name: "set_gns3_link_conditions",
			Arguments: `{"links": [{"node_a": "PC1", "node_b": "PC2", "delay_ms": 200, "loss_percent": 20}]}`}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_pc3", Name: "create_gns3_node", Arguments: `{"nodes": [{"template_id": "VPCS", "x": 0, "y": 400}]}`}),
		fakeopenai.Text("Saved as before-break, then slowed PC1–PC2 and added PC3."),
	)
	question := p.send("Save the lab, then add 200 ms delay and 20 % loss on PC1-PC2 and add a PC", sid)
	require.True(t, question.Done, "the question ends the stream: %v", question.Types)
	require.Contains(t, question.Text, "Approval needed")
	require.Contains(t, question.Text, `Take snapshot "before-break" of the lab (2 node(s), 1 link(s))`)
	require.Contains(t, question.Text, "the 2 running node(s) are paused")
	require.Contains(t, question.Text, "PC1 (save), PC2 (save)")
	require.Zero(t, g.Count(fakegns3.OpStopNode), "nothing is paused before the decision")
	saved := p.send("approve", sid)
	require.True(t, saved.Done, saved.Types)
	for _, id := range []string{"c_snap", "c_slow", "c_pc3"} {
		out, ok := saved.Calls[id].Output.(map[string]any)
		require.True(t, ok, "%s has a result in the standard format: %v", id, saved.Calls[id])
		require.Equal(t, true, out["success"], "%s: %v", id, out)
	}
	snaps := g.Snapshots(env.ProjectID)
	require.Len(t, snaps, 1)
	require.Equal(t, "before-break", snaps[0].Name)
	snapOut := saved.Calls["c_snap"].Output.(map[string]any)
	require.Contains(t, snapOut["data"].([]any)[0].(map[string]any)["result"], "The lab was paused for ")
	require.Equal(t, float64(2), snapOut["metadata"].(map[string]any)["nodes_paused"])
	require.Equal(t, 2, g.Count(fakegns3.OpStopNode))
	pc1, _ = g.NodeByName(env.ProjectID, "PC1")
	pc2, _ = g.NodeByName(env.ProjectID, "PC2")
	require.Equal(t, "started", pc1.Status, "PC1 runs again after the pause")
	require.Equal(t, "started", pc2.Status, "PC2 runs again after the pause")
	slow, _ := g.Link(link.ID)
	require.Equal(t, []any{200}, slow.Filters["delay"])
	_, hasPC3 := g.NodeByName(env.ProjectID, "PC3")
	require.True(t, hasPC3)

	// A restore asks first, saying what it loses; "no" changes nothing.
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_restore1", Name: "restore_gns3_snapshot", Arguments: `{"snapshot": "before-break"}`}),
		fakeopenai.Text("The lab was left as it is."),
	)
	asked := p.send("Put the lab back as it was", sid)
	require.True(t, asked.Done, "the question ends the stream: %v", asked.Types)
	require.Contains(t, asked.Text, "Approval needed")
	require.Contains(t, asked.Text, `Restore snapshot "before-break", taken on `)
	require.Contains(t, asked.Text, "2 running node(s) (PC1, PC2) are stopped")
	require.Contains(t, asked.Text, "the copilot starts again those that ran when it took the snapshot")
	require.Contains(t, asked.Text, "every node and link has a new id")
	refused := p.send("no, keep it", sid)
	require.True(t, refused.Done, refused.Types)
	require.Contains(t, refused.Text, "The lab was left as it is.")
	require.Equal(t, 0, g.Count(fakegns3.OpRestoreSnapshot), "a rejected restore never reaches GNS3")
	still, _ := g.NodeByName(env.ProjectID, "PC1")
	require.Equal(t, pc1.ID, still.ID)

	// Approved: restored, and the work goes on by name.
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_restore2", Name: "restore_gns3_snapshot", Arguments: `{"snapshot": "before-break"}`}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_start", Name: "start_gns3_node", Arguments: `{"node_ids": ["PC1"]}`}),
		fakeopenai.Calls(vpcsCall("c_show", map[string][]string{"PC1": {"show ip"}})),
		fakeopenai.Text("Restored before-break; PC1 is started again and answers."),
	)
	asked = p.send("Restore before-break now", sid)
	require.True(t, asked.Done)
	require.Contains(t, asked.Text, "Approval needed")
	answer := p.send("approve", sid)
	require.Equal(t, http.StatusOK, answer.Status, answer.HTTPError)
	require.True(t, answer.Done, answer.Types)
	require.Empty(t, answer.Error)
	require.Contains(t, answer.Text, "Restored before-break; PC1 is started again and answers.")

	restored, ok := answer.Calls["c_restore2"].Output.(map[string]any)
	require.True(t, ok, "the restore's result: %v", answer.Calls["c_restore2"])
	require.Equal(t, true, restored["success"], restored)
	require.Equal(t, true, restored["metadata"].(map[string]any)["ids_changed"])
	require.Equal(t, float64(2), restored["metadata"].(map[string]any)["started_again"])
	require.Contains(t, restored["data"].([]any)[0].(map[string]any)["result"],
		"every one runs, its console answers and its saved configuration is back")
	nodes := g.Nodes(env.ProjectID)
	require.Len(t, nodes, 2, "PC3 came after the snapshot")
	newPC1, _ := g.NodeByName(env.ProjectID, "PC1")
	newPC2, _ := g.NodeByName(env.ProjectID, "PC2")
	require.NotEqual(t, pc1.ID, newPC1.ID)
	require.NotEqual(t, pc2.ID, newPC2.ID)
	require.Equal(t, "started", newPC1.Status, "started again: it ran at the save point")
	require.Equal(t, "started", newPC2.Status, "started again: it ran at the save point")
	links := g.Links(env.ProjectID)
	require.Len(t, links, 1)
	require.NotEqual(t, link.ID, links[0].ID)
	require.Empty(t, links[0].Filters, "the conditions came after the snapshot")

	show, ok := answer.Calls["c_show"].Output.(map[string]any)
	require.True(t, ok, "the console command's result: %v", answer.Calls["c_show"])
	require.Equal(t, true, show["success"], show)
	item := show["data"].([]any)[0].(map[string]any)
	require.Equal(t, newPC1.ID, item["id"], "the device is the restored PC1")
	require.Contains(t, item["result"], "IP/MASK", "the real VPCS answered")
	require.Contains(t, showIP(t, lab.Nodes[0]), "IP/MASK")

	// The model learnt the new ids: from the restore's result and from the lab note after it.
	restoredJSON := answer.Calls["c_restore2"].Output.(map[string]any)
	found := false
	for _, it := range restoredJSON["data"].([]any) {
		m := it.(map[string]any)
		if m["name"] == "PC1" {
			found = true
			require.Equal(t, newPC1.ID, m["id"])
			require.Contains(t, m["result"], "was "+pc1.ID)
		}
	}
	require.True(t, found, "PC1 is an item of the restore's result")
	reqs := streamedRequests(env.LLM)
	var restoreNote string
	for _, n := range labBlocks(reqs[len(reqs)-1]) {
		if strings.Contains(n, "node_id "+newPC1.ID) {
			restoreNote = n
		}
	}
	require.Contains(t, restoreNote, "PC1 added: ", "the note after the restore gives the new node")
	require.Contains(t, restoreNote, "PC1 deleted (node_id "+pc1.ID+")", "and says the old id is gone")
	require.NotContains(t, reqs[len(reqs)-1].Messages[0].Content, pc1.ID, "the system prompt holds no id")
}

// A snapshot of a running lab through a page that shows approval cards: the card says it pauses
// the PCs; approved, each PC saves its address (startup.vpc on the real VPCS), both are paused
// while the fake GNS3 takes the snapshot, and the result says for how long, part by part. The
// turn's history replays, and with GNS3COPILOT_WRITE_REPLAY=1 it is the fixture of "save-point".
func TestSavePointAsksThenPausesTheRunningLab(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes"})
	g := env.GNS3
	vpcsRun(t, lab.Nodes[0], "ip 10.61.0.1/24")
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_snap", Name: "create_gns3_snapshot", Arguments: `{"name": "class-start"}`}),
		fakeopenai.Text("Saved as class-start."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "save the lab as class-start", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	sessionID, turnID := startedIDs(t, seen)
	a := approvalOf(t, seen[len(seen)-1])
	require.Equal(t, "c_snap", a.ToolCallID)
	require.Equal(t, "destructive", a.Kind)
	require.Contains(t, seen[len(seen)-1].Data["content"], "the 2 running node(s) are paused")
	require.Zero(t, g.Count(fakegns3.OpStopNode))
	decide(t, env, sessionID, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])

	var out deviceOutput
	for _, f := range rest {
		if f.Event == "tool_end" && f.Data["tool_call_id"] == "c_snap" {
			require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &out), f.Raw)
		}
	}
	require.True(t, out.Success, "%+v", out)
	require.Contains(t, out.Data[0].Result, `Snapshot "class-start" taken. The lab was paused for `)
	require.Contains(t, out.Data[0].Result, "saved first: PC1 (save), PC2 (save)")
	require.Contains(t, out.Data[0].Result, "every one runs again, its console answers and what it saved is back")
	require.Equal(t, 2, g.Count(fakegns3.OpStopNode))
	require.Len(t, g.Snapshots(env.ProjectID), 1)
	for _, n := range g.Nodes(env.ProjectID) {
		require.Equal(t, "started", n.Status, n.Name)
	}
	saved, err := os.ReadFile(filepath.Join(lab.Nodes[0].Dir, "startup.vpc"))
	require.NoError(t, err)
	require.Contains(t, string(saved), "ip 10.61.0.1 24", "PC1 saved its address on the device")

	replayAndSave(t, env, workflows.WorkflowID(sessionID, turnID), "chat_turn_save_point_history.json")
}
