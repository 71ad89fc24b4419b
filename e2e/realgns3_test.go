package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/realgns3"
)

// The flows on a real GNS3 v3.0.6 with real VPCS (../shared/gns3-lab; CI starts it),
// through the whole copilot with a scripted model, on a lab a class would have: two PCs linked,
// running, addressed on their consoles and never saved.
//
//  1. An exercise is started on it: the injection turn's save point saves both PCs and pauses
//     them for GNS3's snapshot, without asking, and says so; the model breaks PC1's address.
//  2. Reset, approved: GNS3 restores the snapshot (every node stopped, new ids), the copilot
//     starts the PCs again, reads each one back, and PC1 pings PC2 again. The time from the
//     decision to the first ping that answers is logged.
//  3. PC2 is readdressed by hand (not saved), then create_gns3_snapshot asks, saying it pauses
//     both PCs; approved, it saves, pauses and answers with the pause's length, part by part.
//     PC2 keeps its new address across the pause.
func TestExerciseResetAndSavePointOnRealGNS3(t *testing.T) {
	srv := realgns3.Require(t)
	p := srv.NewProject(t)
	pcs := p.AddVPCS(t, 2)
	p.Link(t, pcs[0], pcs[1])
	p.StartAll(t)
	console(t, p, srv, "PC1", "ip 10.88.0.1/24")
	console(t, p, srv, "PC2", "ip 10.88.0.2/24")
	require.True(t, pings(t, p, srv, "PC1", "10.88.0.2"), "the lab pings before the exercise")

	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes", RealGNS3: srv, RealProject: p.ID})
	env.LLM.SetHandler(titleReplies("Real GNS3"))

	// 1. The exercise, on the running, never-saved lab.
	const wrong = "ip 10.89.0.1/24"
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_break", map[string][]string{"PC1": {wrong}})),
		fakeopenai.Calls(recordCall("c_rec", map[string]any{"device_name": "PC1", "lines": []string{wrong}, "description": "PC1 is in the wrong subnet",
			"verify_command": "show ip", "verify_expect": "10.88.0.1/24", "hints": []string{"PC1 cannot reach PC2."}})),
		fakeopenai.Text("Fault injected."),
	)
	sid := uuid.NewString()
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{"session_id": sid}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "%v: %v", e2eenv.Types(frames), frames[len(frames)-1].Raw)
	injected := contentOf(frames)
	require.Contains(t, injected, "Before anything was broken, the lab was saved so that **reset** can give it back as it is now: "+
		"PC1, PC2 saved their configuration and were paused for ")
	t.Logf("the exercise's save point: %s", between(injected, "were paused for ", " while"))
	ex := getExercise(t, env, sid)
	require.True(t, ex.ResetAvailable)
	require.False(t, pings(t, p, srv, "PC1", "10.88.0.2"), "the fault breaks the ping")

	// 2. Reset: back to the lab as it was, running and pinging.
	s := env.OpenStream(http.MethodPost, env.ChatPath("/sessions/"+sid+"/exercise/reset"), map[string]any{"approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	before := nodeIDs(t, srv, p.ID)
	decided := time.Now()
	decide(t, env, sid, a.ApprovalID, "approve", "")
	answer := contentOf(s.UntilDone(t, true))
	answered := time.Since(decided)
	require.Contains(t, answer, "The lab was reset to its snapshot")
	require.Contains(t, answer, "The 2 node(s) that ran when the snapshot was taken were started again")
	require.Contains(t, answer, "**PC1**: runs again with the addresses it saved: 10.88.0.1/24", answer)
	require.Contains(t, answer, "**PC2**: runs again with the addresses it saved: 10.88.0.2/24", answer)
	for name, id := range nodeIDs(t, srv, p.ID) {
		require.NotEqual(t, before[name], id, "%s has a new id after the restore", name)
	}
	for !pings(t, p, srv, "PC1", "10.88.0.2") {
		require.Less(t, time.Since(decided), 2*time.Minute, "PC1 does not ping PC2 after the reset")
	}
	t.Logf("reset: answered %.1f s after the decision, PC1 pinged PC2 %.1f s after it", answered.Seconds(), time.Since(decided).Seconds())
	require.Equal(t, "reset", getExercise(t, env, sid).Status)

	// 3. A save point of the running lab, with an address that was never saved.
	console(t, p, srv, "PC2", "ip 10.88.0.3/24")
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_snap", Name: "create_gns3_snapshot", Arguments: `{"name": "class-saved"}`}),
		fakeopenai.Text("Saved."),
	)
	s = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "save the lab", "approval_cards": true}, "")
	seen = until(t, s, "approval_required")
	sessionID, _ := startedIDs(t, seen)
	a = approvalOf(t, seen[len(seen)-1])
	require.Contains(t, seen[len(seen)-1].Data["content"], "the 2 running node(s) are paused")
	decide(t, env, sessionID, a.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	var out struct {
		Success bool `json:"success"`
		Data    []struct {
			Result, Error string
		} `json:"data"`
		Metadata map[string]any `json:"metadata"`
	}
	for _, f := range rest {
		if f.Event == "tool_end" && f.Data["tool_call_id"] == "c_snap" {
			require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &out), f.Raw)
		}
	}
	require.True(t, out.Success, "%+v", out)
	require.Contains(t, out.Data[0].Result, "every one runs again, its console answers and what it saved is back")
	t.Logf("save point of 2 VPCS: paused %v s, parts %v", out.Metadata["paused_seconds"], out.Metadata["pause"])
	snaps, err := srv.Client.ListSnapshots(context.Background(), p.ID)
	require.NoError(t, err)
	names := make([]string, len(snaps))
	for i, sn := range snaps {
		names[i] = sn.Name
	}
	require.Contains(t, names, "class-saved")
	require.Contains(t, console(t, p, srv, "PC2", "show ip"), "10.88.0.3/24", "PC2 saved its new address before the stop")
	require.True(t, pings(t, p, srv, "PC1", "10.88.0.3"), "the lab pings after the pause")
}

// console runs one command on a VPCS of the real project, opening the console again while the
// copilot's own connection to it may still be closing (GNS3's proxy serves one client at a
// time).
func console(t *testing.T, p *realgns3.Project, srv *realgns3.Server, node, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	profile, _ := devices.ProfileByName("vpcs")
	for {
		n := p.Node(t, node)
		s, err := devices.Open(ctx, n.ConsoleAddr(srv.Host()), profile, devices.Options{})
		if err == nil {
			r, rerr := s.Run(ctx, cmd)
			s.Close()
			require.NoError(t, rerr, "%s> %s", node, cmd)
			return r.Output
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s's console: %v", node, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

var replyLine = regexp.MustCompile(`icmp_seq=\d+ ttl=\d+ time=`)

// pings reports whether a ping from node to address gets a reply.
func pings(t *testing.T, p *realgns3.Project, srv *realgns3.Server, node, address string) bool {
	t.Helper()
	return replyLine.MatchString(console(t, p, srv, node, fmt.Sprintf("ping %s -c 2", address)))
}

func contentOf(frames []e2eenv.Frame) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Event == "content" {
			c, _ := f.Data["content"].(string)
			b.WriteString(c)
		}
	}
	return b.String()
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(rest, to)
	return out
}

func nodeIDs(t *testing.T, srv *realgns3.Server, projectID string) map[string]string {
	t.Helper()
	nodes, err := srv.Client.ListNodes(context.Background(), projectID)
	require.NoError(t, err)
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Name] = n.NodeID
	}
	return out
}
