package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

type exerciseViewJSON struct {
	ExerciseID      string `json:"exercise_id"`
	Status          string `json:"status"`
	FaultsRequested int    `json:"faults_requested"`
	FaultsInjected  int    `json:"faults_injected"`
	Note            string `json:"note"`
	ResetAvailable  bool   `json:"reset_available"`
	Snapshot        struct {
		SnapshotID string `json:"snapshot_id"`
		Name       string `json:"name"`
	} `json:"snapshot"`
}

func getExercise(t *testing.T, env *e2eenv.Env, sessionID string) exerciseViewJSON {
	t.Helper()
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/exercise"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var ex exerciseViewJSON
	require.NoError(t, json.Unmarshal(body, &ex))
	return ex
}

func recordCall(id string, fault map[string]any) fakeopenai.ToolCall {
	b, _ := json.Marshal(fault)
	return fakeopenai.ToolCall{ID: id, Name: "record_injected_fault", Arguments: string(b)}
}

func linkLoss(id string) fakeopenai.ToolCall {
	return fakeopenai.ToolCall{ID: id, Name: "set_gns3_link_conditions",
		Arguments: `{"links": [{"node_a": "PC1", "node_b": "PC2", "loss_percent": 60}]}`}
}

// gns31 is a GNS3 on which exercises put faults on links: from 3.1 on a student can clear them
// from GNS3's own link dialog (on 3.0.x the injection refuses them).
var gns31 = []fakegns3.Option{fakegns3.WithVersion("3.1.0a2")}

var linkFault = map[string]any{"link": map[string]any{"node_a": "PC1", "node_b": "PC2"},
	"description": "60 % loss on PC1–PC2", "hints": []string{"Pings between the PCs lose packets.", "Look at the link, not the PCs."}}

// GNS3 3.1's fault dialog asks for 3 faults. The injection turn saves the running lab (a save
// point: the PCs save their addresses and are paused for GNS3's snapshot, without asking, and
// the stream says so) before it changes anything, is told to inject exactly 3, records a wrong address on a real VPCS and a
// lossy link, and stops there: the stream and the exercise say plainly that only 2 of the 3 were
// injected. The check fails until both are repaired (the link's conditions cleared), and the
// last hint points at the PC and at the link.
func TestInjectWithCountRecordsItAndSaysWhenFewer(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes", GNS3: gns31})
	pc1, _ := env.GNS3.NodeByName(env.ProjectID, "PC1")
	pc2, _ := env.GNS3.NodeByName(env.ProjectID, "PC2")
	link := env.GNS3.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	vpcsRun(t, lab.Nodes[0], "ip 10.0.0.1/24")

	code, body := env.Do(http.MethodPost, env.ChatPath("/inject"), map[string]any{"count": 9})
	requireError(t, code, body, http.StatusUnprocessableEntity, "count must be a number from 1 to 5")
	code, body = env.Do(http.MethodPost, env.ChatPath("/inject"), map[string]any{"count": 2, "message": "Inject 3 network fault(s) for troubleshooting practice"})
	requireError(t, code, body, http.StatusUnprocessableEntity, "count is 2 but the message asks for 3")
	code, body = env.Do(http.MethodPost, env.ChatPath("/stream"), map[string]any{"count": 2, "message": "hello"})
	requireError(t, code, body, http.StatusUnprocessableEntity, "count is for fault injections")
	require.Empty(t, env.GNS3.Snapshots(env.ProjectID), "refused requests change nothing")

	const wrong = "ip 10.0.0.77/24"
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_break", map[string][]string{"PC1": {wrong}})),
		fakeopenai.Calls(recordCall("c_rec1", map[string]any{"device_name": "PC1", "lines": []string{wrong}, "description": "PC1 has a wrong address",
			"verify_command": "show ip", "verify_expect": "10.0.0.1/24", "hints": []string{"One PC is not where it should be."}})),
		fakeopenai.Calls(linkLoss("c_loss")),
		fakeopenai.Calls(recordCall("c_rec2", linkFault)),
		fakeopenai.Text("Faults injected."),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/inject"),
		map[string]any{"message": "Inject 3 network fault(s) for troubleshooting practice"}, "").UntilDone(t, true)
	sessionID, turnID := startedIDs(t, frames)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], e2eenv.Types(frames))
	var text strings.Builder
	for _, f := range frames {
		if f.Event == "content" {
			text.WriteString(f.Data["content"].(string))
		}
	}
	require.Contains(t, text.String(), "Only 2 of the 3 faults asked for were injected: the exercise has 2 faults.", "said plainly, in content")
	require.Contains(t, text.String(), "Before anything was broken, the lab was saved so that **reset** can give it back as it is now: "+
		"PC1, PC2 saved their configuration and were paused for ", "the pause is said, in content")
	require.Equal(t, 2, env.GNS3.Count(fakegns3.OpStopNode), "the running PCs were paused for the snapshot, nobody asked")
	require.NotContains(t, text.String(), "10.0.0.77")

	reqs := streamedRequests(env.LLM)
	require.Contains(t, conversationText(reqs[0]), "Inject exactly 3 faults", "the model is told the count")

	// The snapshot came first: it is the exercise's, and taken before the link had conditions.
	snaps := env.GNS3.Snapshots(env.ProjectID)
	require.Len(t, snaps, 1)
	ex := getExercise(t, env, sessionID)
	require.Equal(t, 3, ex.FaultsRequested)
	require.Equal(t, 2, ex.FaultsInjected)
	require.Contains(t, ex.Note, "Only 2 of the 3")
	require.True(t, ex.ResetAvailable)
	require.Equal(t, snaps[0].ID, ex.Snapshot.SnapshotID)
	require.Equal(t, snaps[0].Name, ex.Snapshot.Name)
	lossy, _ := env.GNS3.Link(link.ID)
	require.Equal(t, []any{60}, lossy.Filters["packet_loss"], "the link fault is really on the link")

	check := func() exerciseAnswerJSON {
		code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/exercise/check"), nil)
		require.Equal(t, http.StatusOK, code, string(body))
		var ans exerciseAnswerJSON
		require.NoError(t, json.Unmarshal(body, &ans))
		return ans
	}
	ans := check()
	require.False(t, ans.Fixed)
	require.Contains(t, ans.Message, "0 of 2 check(s) pass")
	vpcsRun(t, lab.Nodes[0], "ip 10.0.0.1/24")
	ans = check()
	require.Contains(t, ans.Message, "1 of 2 check(s) pass", "the link still loses packets")
	var hint string
	for range 4 {
		code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/exercise/hint"), nil)
		require.Equal(t, http.StatusOK, code, string(body))
		require.NoError(t, json.Unmarshal(body, &ans))
		hint = ans.Hint
	}
	require.Equal(t, "Look closely at PC1 and the link PC1–PC2.", hint, "the hint can point at the link")
	env.GNS3.SetLinkConditions(link.ID, nil, false) // the student clears the link
	ans = check()
	require.True(t, ans.Fixed, ans.Message)

	// The injection turn took the newest path (its save point first): its history replays, and
	// with GNS3COPILOT_WRITE_REPLAY=1 it is the fixture workflows/replay_test.go replays
	// (chat_turn_injection_history.json keeps the path before save points).
	replayAndSave(t, env, workflows.WorkflowID(sessionID, turnID), "chat_turn_injection_save_point_history.json")
}

// The same student, the same project, a new exercise: the fault they already had is listed to
// the model and refused when the model records it again; a different one is taken.
func TestARepeatedFaultIsRefused(t *testing.T) {
	env, _ := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes", GNS3: gns31})
	pc1, _ := env.GNS3.NodeByName(env.ProjectID, "PC1")
	pc2, _ := env.GNS3.NodeByName(env.ProjectID, "PC2")
	link := env.GNS3.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)

	env.LLM.Enqueue(
		fakeopenai.Calls(linkLoss("c_loss")),
		fakeopenai.Calls(recordCall("c_rec", linkFault)),
		fakeopenai.Text("Fault injected."),
	)
	first := env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{}, "").UntilDone(t, true)
	firstSession, _ := startedIDs(t, first)
	require.Equal(t, 1, getExercise(t, env, firstSession).FaultsInjected)
	env.GNS3.SetLinkConditions(link.ID, nil, false)

	const wrong = "ip 10.0.0.66/24"
	env.LLM.Enqueue(
		fakeopenai.Calls(linkLoss("c_loss2")),
		fakeopenai.Calls(recordCall("c_again", linkFault)),
		fakeopenai.Calls(vpcsCall("c_break", map[string][]string{"PC2": {wrong}})),
		fakeopenai.Calls(recordCall("c_other", map[string]any{"device_name": "PC2", "lines": []string{wrong}, "description": "PC2 has a wrong address",
			"verify_command": "show ip", "verify_expect": "10.0.0.2/24", "hints": []string{"One PC is not where it should be."}})),
		fakeopenai.Text("Fault injected."),
	)
	before := len(streamedRequests(env.LLM))
	second := env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{}, "").UntilDone(t, true)
	secondSession, _ := startedIDs(t, second)
	reqs := streamedRequests(env.LLM)[before:]
	require.Contains(t, conversationText(reqs[0]), "Faults this student already had in this project")
	require.Contains(t, conversationText(reqs[0]), "the link PC1–PC2: 60 % packet loss", "the past fault is listed to the model")
	// The model of the injection turn reads its own results: the repeat was refused.
	var refusal string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" && strings.Contains(m.Content, "already had this fault") {
			refusal = m.Content
		}
	}
	require.NotEmpty(t, refusal, "the repeated record was refused")
	ex := getExercise(t, env, secondSession)
	require.Equal(t, 1, ex.FaultsInjected, "only the new fault counts")

	env.GNS3.AddUser("teacher", "teacher-token", true)
	code, body := env.DoAs("teacher-token", http.MethodGet, "/v3/copilot/exercises/"+ex.ExerciseID, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var rec exerciseJSON
	require.NoError(t, json.Unmarshal(body, &rec))
	require.Len(t, rec.Faults, 1)
	require.Equal(t, "PC2", rec.Faults[0].Device)
}

// "reset" typed in GNS3's panel: the exercise's snapshot is restored only after a decision, asked
// as content; a rejected reset changes nothing and the exercise goes on; the reset asked again
// (through the route this time) and approved restores the lab as it was before the injection
// (the link has no conditions, every id is new), starts again the PCs that ran and says per PC
// what came back, and ends the exercise, saying so in content. The PCs are real VPCS: the
// injection's save point saves them on their consoles.
func TestResetAfterApprovalRestoresTheExercisesSnapshot(t *testing.T) {
	env, _ := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes", GNS3: gns31})
	env.LLM.SetHandler(titleReplies("Reset"))
	pc1, _ := env.GNS3.NodeByName(env.ProjectID, "PC1")
	pc2, _ := env.GNS3.NodeByName(env.ProjectID, "PC2")
	link := env.GNS3.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	env.LLM.Enqueue(
		fakeopenai.Calls(linkLoss("c_loss")),
		fakeopenai.Calls(recordCall("c_rec", linkFault)),
		fakeopenai.Text("Fault injected."),
	)
	sid := uuid.NewString()
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{"session_id": sid}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	ex := getExercise(t, env, sid)
	require.True(t, ex.ResetAvailable)

	p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: env.ChatPath("")}
	asked := p.send("reset", sid)
	require.True(t, asked.Done, "the question ends the panel's stream: %v", asked.Types)
	require.Contains(t, asked.Text, "Approval needed")
	require.Contains(t, asked.Text, "Restore snapshot \""+ex.Snapshot.Name+"\"", "the plan says what is restored and lost")
	require.Equal(t, 0, env.GNS3.Count(fakegns3.OpRestoreSnapshot), "nothing is restored before the decision")

	refused := p.send("no", sid)
	require.True(t, refused.Done, refused.Types)
	require.Contains(t, refused.Text, "The lab was not reset; the exercise goes on.")
	require.Equal(t, 0, env.GNS3.Count(fakegns3.OpRestoreSnapshot), "a rejected reset changes nothing")
	require.Equal(t, "open", getExercise(t, env, sid).Status)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/sessions/"+sid+"/exercise/reset"), map[string]any{"approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	require.Equal(t, "destructive", a.Kind)
	decide(t, env, sid, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, 1, env.GNS3.Count(fakegns3.OpRestoreSnapshot))
	var text strings.Builder
	for _, f := range rest {
		if f.Event == "content" {
			text.WriteString(f.Data["content"].(string))
		}
	}
	require.Contains(t, text.String(), "The lab was reset to its snapshot \""+ex.Snapshot.Name+"\"", "said in content")
	require.Contains(t, text.String(), "The 2 node(s) that ran when the snapshot was taken were started again")
	require.Contains(t, text.String(), "**PC1**: runs again with the addresses it saved")
	require.Contains(t, e2eenv.Types(rest), "exercise_checked")
	links := env.GNS3.Links(env.ProjectID)
	require.Len(t, links, 1)
	require.NotEqual(t, link.ID, links[0].ID, "a restore gives every link a new id")
	require.Empty(t, links[0].Filters, "the snapshot was taken before the fault")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var final workflows.ExerciseAnswer
	require.NoError(t, env.Service.Temporal().GetWorkflow(ctx, ex.ExerciseID, "").Get(ctx, &final))
	require.Equal(t, "reset", final.Status)
	require.Equal(t, "reset", getExercise(t, env, sid).Status)
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sid+"/exercise/reset"), nil)
	requireError(t, code, body, http.StatusConflict, "over")
	// The transcript keeps both resets: the requests, the question, the answers.
	h := p.history(sid)
	var said []string
	for _, m := range h {
		said = append(said, m.Content)
	}
	require.Contains(t, strings.Join(said, "\n"), "The lab was not reset")
	require.Contains(t, strings.Join(said, "\n"), "The lab was reset to its snapshot")
	require.Equal(t, models.ExerciseID(sid, 1), ex.ExerciseID)
	replayAndSave(t, env, ex.ExerciseID, "exercise_reset_history.json")
}
