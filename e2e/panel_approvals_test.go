package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// GNS3's AI panel knows no approval cards: it reads content, tool_call, tool_start, tool_end,
// error and done, and lets its user type only once a stream has ended. Played exactly as the
// panel does it, through --proxy-gns3 in lab automation mode with the default --approval
// changes, against real VPCS: a configuration is asked in the conversation, the stream ends,
// and the user's next message is the decision.
func TestPanelDecidesApprovalsInTheConversation(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes", ProxyGNS3: true})
	p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: "/v3/projects/" + env.ProjectID + "/chat"}

	t.Run("approve", func(t *testing.T) {
		sid := uuid.NewString()
		env.LLM.Enqueue(
			fakeopenai.Calls(vpcsCall("c_set", map[string][]string{"PC1": {"ip 10.9.0.1/24"}})),
			fakeopenai.Text("PC1 now has 10.9.0.1/24."),
		)
		asked := p.send("Set PC1's address to 10.9.0.1/24", sid)
		received := time.Now()
		require.True(t, asked.Done, "the question ends the stream: %v", asked.Types)
		require.Empty(t, asked.Error)
		a := pendingApproval(t, env, sid)
		created, err := time.Parse(time.RFC3339Nano, a.CreatedAt)
		require.NoError(t, err)
		require.Less(t, received.Sub(created), 5*time.Second, "the question and done come within 5 s of the approval being stored")

		card := asked.Calls["c_set"]
		require.NotNil(t, card, "the call's card")
		out, ok := card.Output.(map[string]any)
		require.True(t, ok, "the waiting card is closed with a tool_end in the standard format: %v", card.Output)
		require.Equal(t, "waiting_approval", out["data"].([]any)[0].(map[string]any)["status"])
		require.Contains(t, asked.Text, "Approval needed")
		require.Contains(t, asked.Text, "**PC1** (vpcs)")
		require.Contains(t, asked.Text, "ip 10.9.0.1/24", "the lines that would be sent")
		require.Contains(t, asked.Text, "`show ip`", "the current configuration, read before asking")
		require.Contains(t, asked.Text, "approve all")
		last := asked.Events[len(asked.Events)-1]
		require.Equal(t, "waiting_approval", last["status"])
		require.Equal(t, a.ApprovalID, last["approval_pending"].(map[string]any)["approval_id"])
		require.NotContains(t, showIP(t, lab.Nodes[0]), "10.9.0.1", "nothing is sent before the decision")

		answer := p.send("Approve", sid)
		require.Equal(t, http.StatusOK, answer.Status, answer.HTTPError)
		require.True(t, answer.Done, "the answer streams the rest of the turn: %v", answer.Types)
		require.Empty(t, answer.Error)
		require.Contains(t, answer.Text, "Approved")
		require.Contains(t, answer.Text, "PC1 now has 10.9.0.1/24.")
		res, ok := answer.Calls["c_set"].Output.(map[string]any)
		require.True(t, ok, "the job's result arrives on the call's card: %v", answer.Calls)
		require.Equal(t, true, res["success"], res)
		require.Contains(t, showIP(t, lab.Nodes[0]), "10.9.0.1", "PC1 was configured")

		// A reload shows the question, the answer and the outcome, in that order.
		h := p.history(sid)
		order := historyText(h)
		q := strings.Index(order, "Approval needed")
		ans := strings.Index(order, "user: Approve")
		done := strings.Index(order, "PC1 now has 10.9.0.1/24.")
		require.True(t, q > 0 && ans > q && done > ans, "history in order:\n%s", order)
		for _, m := range h {
			if strings.Contains(m.Content, "Approval needed") {
				require.Len(t, m.Tools, 1, "the job's result folds into the question, before the answer")
				require.Equal(t, "c_set", m.Tools[0].ToolCallID)
			}
		}
		require.Equal(t, "approved", approvalList(t, env, sid)[0].Status)

		// A client without cards that replays the finished turn is not stopped at its question,
		// which was answered since: the replay ends with the turn's own done.
		replay := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sid+"/stream"), nil, "").UntilDone(t, true)
		require.Equal(t, "completed", replay[len(replay)-1].Data["status"])
		require.Contains(t, e2eenv.Types(replay), "approval_resolved")
	})

	t.Run("reject with a comment, then a corrected plan", func(t *testing.T) {
		sid := uuid.NewString()
		env.LLM.Enqueue(
			fakeopenai.Calls(vpcsCall("c_first", map[string][]string{"PC2": {"ip 10.9.0.2/24"}})),
			fakeopenai.Calls(vpcsCall("c_fixed", map[string][]string{"PC2": {"ip 10.9.0.22/24"}})),
			fakeopenai.Text("PC2 has 10.9.0.22/24 now."),
		)
		asked := p.send("Address PC2", sid)
		require.True(t, asked.Done)
		require.Contains(t, asked.Text, "ip 10.9.0.2/24")

		second := p.send("No, use 10.9.0.22/24 instead", sid)
		require.Equal(t, http.StatusOK, second.Status, second.HTTPError)
		require.True(t, second.Done, "the corrected plan asks again: %v", second.Types)
		require.Contains(t, second.Text, "Rejected")
		require.Contains(t, second.Text, "ip 10.9.0.22/24", "the corrected plan")
		reqs := streamedRequests(env.LLM)
		b, _ := json.Marshal(reqs[len(reqs)-1].Messages)
		require.Contains(t, string(b), "use 10.9.0.22/24 instead", "the model reads the comment")
		require.NotContains(t, showIP(t, lab.Nodes[1]), "10.9.0.2/", "the rejected plan sent nothing")

		third := p.send("yes please", sid)
		require.True(t, third.Done)
		require.Contains(t, third.Text, "PC2 has 10.9.0.22/24 now.")
		require.Contains(t, showIP(t, lab.Nodes[1]), "10.9.0.22")
		list := approvalList(t, env, sid)
		require.Len(t, list, 2)
		require.Equal(t, "rejected", list[0].Status)
		require.Equal(t, "No, use 10.9.0.22/24 instead", list[0].Comment)
		require.Equal(t, "approved", list[1].Status)
	})

	t.Run("approve all", func(t *testing.T) {
		sid := uuid.NewString()
		env.LLM.Enqueue(
			fakeopenai.Calls(vpcsCall("c_a", map[string][]string{"PC1": {"ip 10.9.1.1/24"}})),
			fakeopenai.Calls(vpcsCall("c_b", map[string][]string{"PC2": {"ip 10.9.1.2/24"}})),
			fakeopenai.Text("Both PCs are on 10.9.1.0/24."),
		)
		asked := p.send("Put both PCs on 10.9.1.0/24, one at a time", sid)
		require.True(t, asked.Done)
		all := p.send("approve all", sid)
		require.True(t, all.Done, "one answer approves the whole series: %v", all.Types)
		require.NotContains(t, all.Text, "Approval needed", "nobody is asked again")
		require.Contains(t, all.Text, "Both PCs are on 10.9.1.0/24.")
		require.Contains(t, showIP(t, lab.Nodes[0]), "10.9.1.1")
		require.Contains(t, showIP(t, lab.Nodes[1]), "10.9.1.2")
		list := approvalList(t, env, sid)
		require.Len(t, list, 2, "both approvals are in the audit")
		require.True(t, list[0].Standing)
		require.Equal(t, "approved", list[1].Status)
		require.Equal(t, list[0].ApprovalID, list[1].StandingOf, "the second came from the standing decision")
		require.Equal(t, e2eenv.Username, list[1].DecidedBy)
		code, md := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sid+"/export?format=markdown"), nil)
		require.Equal(t, http.StatusOK, code, string(md))
		require.Contains(t, string(md), "approved (approve all)", "the export shows the standing decision")
		require.Contains(t, string(md), "approved by the standing decision (approve all) given on approval "+list[0].ApprovalID)
	})

	t.Run("abort while waiting", func(t *testing.T) {
		sid := uuid.NewString()
		env.LLM.Enqueue(fakeopenai.Calls(vpcsCall("c_x", map[string][]string{"PC1": {"ip 10.9.2.1/24"}})))
		asked := p.send("Address PC1 again", sid)
		require.True(t, asked.Done)
		resp := p.request(http.MethodPost, p.prefix+"/sessions/"+sid+"/abort", nil)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		require.Eventually(t, func() bool {
			l := approvalList(t, env, sid)
			return len(l) == 1 && l[0].Status == "rejected"
		}, 30*time.Second, 50*time.Millisecond, "abort rejects the waiting approval")
		require.Eventually(t, func() bool {
			h := p.history(sid)
			return len(h) > 0 && h[len(h)-1].Error != ""
		}, 30*time.Second, 50*time.Millisecond, "the turn ends as aborted")
		require.NotContains(t, showIP(t, lab.Nodes[0]), "10.9.2.1")
		// The next message is a new question again, not a decision.
		env.LLM.Enqueue(fakeopenai.Text("Nothing was changed."))
		next := p.send("what happened?", sid)
		require.True(t, next.Done)
		require.Equal(t, "Nothing was changed.", next.Text)
	})
}

func approvalList(t *testing.T, env *e2eenv.Env, sessionID string) []approvalJSON {
	t.Helper()
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/approvals"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list []approvalJSON
	require.NoError(t, json.Unmarshal(body, &list))
	return list
}

func pendingApproval(t *testing.T, env *e2eenv.Env, sessionID string) approvalJSON {
	t.Helper()
	for _, a := range approvalList(t, env, sessionID) {
		if a.Status == "pending" {
			return a
		}
	}
	t.Fatalf("no pending approval in session %s", sessionID)
	return approvalJSON{}
}

// historyText is the history as the panel shows it, one "role: content" line a bubble.
func historyText(h []panelMessage) string {
	var b strings.Builder
	for _, m := range h {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}
