package e2e

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
)

func kill(t *testing.T, w *workerProc) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not die")
	}
}

// The scenario, twice over. A worker killed while a configuration job waits for its
// approval loses nothing: the wait is a timer in Temporal, and the approval given while no
// worker runs is applied by the next one. A worker killed one second into `ip 10.7.0.1/24`
// (VPCS takes about three) leaves a line on its way; the retry reads the PC back, records the
// address as applied ("verified after restart") without sending it again, and sends the rest.
func TestConfigJobSurvivesKilledWorkersAndSaysTheTruth(t *testing.T) {
	bin := buildBinary(t)
	lab := vpcslab.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes"})
	dataDir := env.Config.DataDir
	env.LLM.SetHandler(titleReplies("Crash truth"))
	nd := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1", Status: "started"})
	env.GNS3.SetConsole(nd.ID, "127.0.0.1", lab.Nodes[0].ConsolePort)
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.7.0.1/24", "set pcname web1"}})),
		fakeopenai.Text("PC1 is addressed."),
	)
	logPath := workerLog(t, dataDir)
	w := startWorker(t, bin, env, temporalAddr, logPath)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1", "approval_cards": true}, "")
	go func() { <-ctx.Done(); s.Close() }()
	seen := until(t, s, "approval_required")
	a := approvalOf(t, seen[len(seen)-1])
	sessionID, _ := startedIDs(t, seen)

	// The worker dies while the job waits; a new one starts; the owner approves.
	kill(t, w)
	w = startWorker(t, bin, env, temporalAddr, logPath)
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/approvals/"+a.ApprovalID), map[string]any{"decision": "approve"})
	require.Equal(t, http.StatusOK, code, string(body))

	// Kill it again while `ip` is on its way to the PC.
	db, err := models.Open("", dataDir)
	require.NoError(t, err)
	repo := models.DeviceRepository{DB: db}
	require.Eventually(t, func() bool {
		recs, err := repo.Audit(ctx, env.ProjectID, 100)
		if err != nil {
			return false
		}
		for _, r := range recs {
			if r.Seq == 0 && r.Status == models.CommandSent {
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond, "the first line was never seen on its way")
	kill(t, w)
	startWorker(t, bin, env, temporalAddr, logPath)

	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	ends := deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	status, res, errText := itemByName(t, ends[0], "PC1")
	require.Equal(t, "success", status, "%s / %s", res, errText)
	require.Contains(t, res, "verified after restart")
	require.Contains(t, res, "+ IP/MASK : 10.7.0.1/24")
	require.Contains(t, res, "+ NAME : web1", "the line after the interrupted one was sent")

	recs, err := repo.Audit(ctx, env.ProjectID, 100)
	require.NoError(t, err)
	byCmd := map[string]string{}
	kinds := map[int]int{}
	for _, r := range recs {
		kinds[r.Seq]++
		if r.Seq >= 0 {
			byCmd[r.Command] = r.Status
		}
	}
	require.Equal(t, map[string]string{"ip 10.7.0.1/24": models.CommandApplied, "set pcname web1": models.CommandOK}, byCmd,
		"the address is recorded as applied, not sent again")
	require.Equal(t, 1, kinds[models.SeqReadRecovery], "the retry read the PC back once")
	out := showIP(t, lab.Nodes[0])
	require.Contains(t, out, "10.7.0.1/24")
	require.True(t, strings.Contains(out, "web1"), out)
}
