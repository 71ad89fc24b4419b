package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// A worker killed between the stop and the start of a save point does not leave the lab
// stopped: the nodes that ran are in the turn's history, the pause is retried by the next
// worker, which takes the snapshot and starts them again, and the turn ends with the result.
// The fake GNS3 answers the snapshot slowly, so the worker dies with both PCs stopped.
func TestSavePointSurvivesAWorkerKilledWhileTheLabIsStopped(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{Mode: "lab_automation_assistant"})
	env.LLM.SetHandler(titleReplies("Crash save point"))
	g := env.GNS3
	lab := vpcslab.Start(t, 2)
	for i, node := range lab.Nodes {
		nd := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: pcName(i), X: i * 100, Status: "started"})
		g.SetConsole(nd.ID, "127.0.0.1", node.ConsolePort)
	}
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_snap", Name: "create_gns3_snapshot", Arguments: `{"name": "before-crash"}`}),
		fakeopenai.Text("Saved."),
	)
	logPath := workerLog(t, env.Config.DataDir)
	w := startWorker(t, bin, env, temporalAddr, logPath)
	g.SetLatency(fakegns3.OpCreateSnapshot, time.Minute)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "save the lab"}, "")
	go func() { <-ctx.Done(); s.Close() }()
	require.Eventually(t, func() bool { return g.Count(fakegns3.OpCreateSnapshot) == 1 }, 60*time.Second, 20*time.Millisecond,
		"the pause never reached the snapshot")
	kill(t, w)
	for _, n := range g.Nodes(env.ProjectID) {
		require.Equal(t, "stopped", n.Status, "%s is stopped while no worker runs", n.Name)
	}
	g.SetLatency(fakegns3.OpCreateSnapshot, 0)
	startWorker(t, bin, env, temporalAddr, logPath)

	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	var out deviceOutput
	for _, f := range rest {
		if f.Event == "tool_end" && f.Data["tool_call_id"] == "c_snap" {
			require.NoError(t, json.Unmarshal([]byte(f.Data["tool_output"].(string)), &out), f.Raw)
		}
	}
	require.True(t, out.Success, "%+v", out)
	require.Contains(t, out.Data[0].Result, `Snapshot "before-crash" taken.`)
	require.Len(t, g.Snapshots(env.ProjectID), 1)
	for _, n := range g.Nodes(env.ProjectID) {
		require.Equal(t, "started", n.Status, "%s runs again", n.Name)
	}
	require.Contains(t, showIP(t, lab.Nodes[0]), "IP/MASK", "PC1's console answers")
}
