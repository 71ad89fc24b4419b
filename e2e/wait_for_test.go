package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ospfJob is a configuration call that brings OSPF up on R1 and R2's eth0 with fast timers, and
// waits until each has a Full neighbour; a router without lines (nil) is left out of it.
func ospfJob(id string, r1, r2 []string, timeout int) fakeopenai.ToolCall {
	wait := []map[string]any{{"command": "show ip ospf neighbor", "expect": "Full", "count": 1, "timeout_seconds": timeout}}
	var configs []map[string]any
	for _, d := range []struct {
		name  string
		lines []string
	}{{"R1", r1}, {"R2", r2}} {
		if d.lines != nil {
			configs = append(configs, map[string]any{"device_name": d.name, "commands": d.lines})
		}
	}
	b, _ := json.Marshal(map[string]any{"wait_for": wait, "device_configs": configs})
	return fakeopenai.ToolCall{ID: id, Name: "execute_multiple_device_config_commands", Arguments: string(b)}
}

// frrProject puts a lab's routers in the fake GNS3 project, named R1, R2, … by the FRR
// template, their consoles the real routers' and the first two linked.
func frrProject(env *e2eenv.Env, lab *frrlab.Lab) {
	tpl := env.GNS3.AddFRRTemplate()
	var ids []string
	for i, r := range lab.Routers {
		n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: tpl, X: i * 300, Status: "started"})
		env.GNS3.SetConsole(n.ID, "127.0.0.1", r.ConsolePort)
		ids = append(ids, n.ID)
	}
	env.GNS3.AddLink(env.ProjectID, ids[0], 0, 0, ids[1], 0, 0)
}

func ospfLines(addr, rid, area string) []string {
	return []string{"interface eth0", "ip address " + addr, "ip ospf hello-interval 1", "ip ospf dead-interval 4", "exit",
		"router ospf", "ospf router-id " + rid, "network 10.1.0.0/24 area " + area}
}

// The check against real FRR: a job whose routers are in different areas waits its
// 10 s and reports, per router, that the neighbour never became Full, with the last output;
// the next job puts R2 in R1's area and holds as soon as the adjacency forms, in the same call.
// Progress streams while it waits, and the job's history (the holding one) replays.
func TestConfigJobWaitsForOSPFOnRealFRR(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "never"})
	env.LLM.SetHandler(titleReplies("OSPF"))
	frrProject(env, lab)

	env.LLM.Enqueue(
		fakeopenai.Calls(ospfJob("c_areas", ospfLines("10.1.0.1/24", "1.1.1.1", "0"), ospfLines("10.1.0.2/24", "2.2.2.2", "1"), 10)),
		fakeopenai.Calls(ospfJob("c_fix", []string{"router ospf", "ospf router-id 1.1.1.1"},
			[]string{"router ospf", "no network 10.1.0.0/24 area 1", "network 10.1.0.0/24 area 0"}, 60)),
		fakeopenai.Text("OSPF is up: R1 and R2 are Full."),
	)
	start := time.Now()
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "bring OSPF up between R1 and R2"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	_, turnID := startedIDs(t, frames)

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 2)
	mismatch, fixed := ends[0], ends[1]
	for _, r := range lab.Routers {
		status, res, errText := itemByName(t, mismatch, r.Name)
		require.Equal(t, "partial_success", status, "%s: configured, but the check never held: %s", r.Name, res)
		require.Contains(t, errText, `wait_for did not hold: "show ip ospf neighbor" showed 0 of 1 "Full" within 10 s`)
		require.Contains(t, res, "did NOT hold after")
		require.Contains(t, res, "last output:")
	}
	require.False(t, mismatch.Success)

	require.True(t, fixed.Success, "%+v", fixed)
	for _, r := range lab.Routers {
		status, res, _ := itemByName(t, fixed, r.Name)
		require.Equal(t, "success", status, res)
		require.Contains(t, res, `show ip ospf neighbor: 1 of 1 "Full", held after`)
		require.Contains(t, res, "Full/", "the last output is the neighbour table")
	}
	// The wrong area costs its 10 s; the fixed one holds well within its 60.
	require.Less(t, time.Since(start), 70*time.Second)

	var waiting []string
	for _, f := range frames {
		if w := waitingProgress(f); w != "" {
			waiting = append(waiting, w)
		}
	}
	require.NotEmpty(t, waiting)
	joined := strings.Join(waiting, "\n")
	require.Contains(t, joined, "R2: 0 of 1 Full, ")
	require.Contains(t, joined, "R1: 1 of 1 Full, ")

	out, err := lab.Routers[1].Vtysh("show ip ospf neighbor")
	require.NoError(t, err)
	require.Contains(t, out, "Full", "the real routers are adjacent")

	replayAndSave(t, env, workflows.ConfigJobID(turnID, "c_fix"), "config_job_wait_for_history.json")
}

// The "a crash during the wait resumes waiting, not re-applying", on real FRR: a job
// brings OSPF up on R1 alone and waits for a Full neighbour, which cannot come while R2 has no
// OSPF. The worker is killed while the job waits; a new one starts; only then is R2 configured
// (by the test, through vtysh). The job keeps waiting where it was, its check holds, and each
// of R1's lines was sent once, by the first worker, before the crash.
func TestWaitForResumesAfterAKilledWorkerOnRealFRR(t *testing.T) {
	bin := buildBinary(t)
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "never"})
	env.LLM.SetHandler(titleReplies("OSPF after a crash"))
	frrProject(env, lab)
	r1 := ospfLines("10.1.0.1/24", "1.1.1.1", "0")
	env.LLM.Enqueue(
		fakeopenai.Calls(ospfJob("c_r1", r1, nil, 120)),
		fakeopenai.Text("R1 has its Full neighbour."),
	)
	logPath := workerLog(t, env.Config.DataDir)
	w := startWorker(t, bin, env, temporalAddr, logPath)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "bring OSPF up on R1 and wait for R2"}, "")
	go func() { <-ctx.Done(); s.Close() }()
	seen := s.Until(t, func(f e2eenv.Frame) bool { return waitingProgress(f) != "" })
	_, turnID := startedIDs(t, seen)
	require.Contains(t, waitingProgress(seen[len(seen)-1]), "R1: 0 of 1 Full, ")

	db, err := models.Open("", env.Config.DataDir)
	require.NoError(t, err)
	repo := models.DeviceRepository{DB: db}
	lines := func() map[string]models.DeviceCommand {
		t.Helper()
		recs, err := repo.Commands(ctx, turnID, "c_r1", "")
		require.NoError(t, err)
		out := map[string]models.DeviceCommand{}
		for _, r := range recs {
			require.NotEqual(t, models.SeqReadRecovery, r.Seq, "nothing was left on its way to be read back")
			if r.Seq >= 0 {
				require.NotContains(t, out, r.Command)
				out[r.Command] = r
			}
		}
		return out
	}
	before := lines()
	require.Len(t, before, len(r1), "every line was applied before the wait")

	kill(t, w)
	killed := time.Now()
	startWorker(t, bin, env, temporalAddr, logPath)
	_, err = lab.Routers[1].Vtysh(append([]string{"configure terminal"}, ospfLines("10.1.0.2/24", "2.2.2.2", "0")...)...)
	require.NoError(t, err)

	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	ends := deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	require.True(t, ends[0].Success, "%+v", ends[0])
	status, res, _ := itemByName(t, ends[0], "R1")
	require.Equal(t, "success", status, res)
	require.Contains(t, res, `show ip ospf neighbor: 1 of 1 "Full", held after`)
	require.Contains(t, res, "Full/", "the last output is the neighbour table")
	t.Logf("R1 after the crash: %s", strings.TrimSpace(res[strings.Index(res, "Waited for:"):strings.Index(res, "last output:")]))

	// Each line has its one record, untouched since the first worker sent it.
	after := lines()
	require.Len(t, after, len(r1))
	for cmd, r := range after {
		require.Equal(t, models.CommandOK, r.Status, cmd)
		require.Equal(t, before[cmd].Claims, r.Claims, "%q was not taken on again after the crash", cmd)
		require.Equal(t, before[cmd].SentAt, r.SentAt, "%q was not sent again after the crash", cmd)
	}
	// In the job's history: R1's lines went in one activity, on its first attempt, and the
	// wait's attempts went on after the crash, counting on from where they were.
	var appliedOn []int32
	var waitsAfter int
	scheduled := map[int64]string{}
	for _, ev := range closedHistory(t, env, workflows.ConfigJobID(turnID, "c_r1")).Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			switch scheduled[a.GetScheduledEventId()] {
			case workflows.DeviceRunActivity:
				appliedOn = append(appliedOn, a.GetAttempt())
			case workflows.WaitCheckActivity:
				if ev.GetEventTime().AsTime().After(killed) {
					waitsAfter++
				}
			}
		}
	}
	require.Equal(t, []int32{1}, appliedOn, "one activity applied R1's lines, on its first attempt")
	require.Positive(t, waitsAfter, "the wait went on on the new worker")
	attempts := activitySummaries(t, env, workflows.ConfigJobID(turnID, "c_r1"))[workflows.WaitCheckActivity]
	require.GreaterOrEqual(t, len(attempts), 2)
	for i, a := range attempts {
		require.Equal(t, fmt.Sprintf("R1: wait_for, attempt %d", i+1), a, "the attempts count on across the crash")
	}

	out, err := lab.Routers[0].Vtysh("show ip ospf neighbor")
	require.NoError(t, err)
	require.Contains(t, out, "Full", "the real routers are adjacent")
}

// waitingProgress is a wait_for progress frame's "<device>: <message>", "" for any other frame.
func waitingProgress(f e2eenv.Frame) string {
	if f.Event != "tool_progress" {
		return ""
	}
	p, _ := f.Data["progress"].(map[string]any)
	if p["status"] != "waiting" {
		return ""
	}
	name, _ := p["item_name"].(string)
	msg, _ := p["message"].(string)
	return name + ": " + msg
}
