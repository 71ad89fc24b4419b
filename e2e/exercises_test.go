package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// vpcsRun sends one command to a real VPCS over its console, as a student at the console would.
func vpcsRun(t *testing.T, node *vpcslab.Node, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := devices.ProfileByName("vpcs")
	require.NoError(t, err)
	// A console serves one client: the copilot's own connection may still be closing.
	var s *devices.Session
	for {
		if s, err = devices.Open(ctx, node.Addr(), p, devices.Options{}); err == nil || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	require.NoError(t, err, "the console of %s", node.Addr())
	defer s.Close()
	r, err := s.Run(ctx, cmd)
	require.NoError(t, err)
	return r.Output
}

type exerciseJSON struct {
	ExerciseID string `json:"exercise_id"`
	Status     string `json:"status"`
	Checks     int    `json:"checks"`
	HintsUsed  int    `json:"hints_used"`
	Faults     []struct {
		Device        string   `json:"device"`
		Lines         []string `json:"lines"`
		VerifyCommand string   `json:"verify_command"`
	} `json:"faults"`
}

type exerciseAnswerJSON struct {
	Status   string       `json:"status"`
	Fixed    bool         `json:"fixed"`
	Message  string       `json:"message"`
	Hint     string       `json:"hint"`
	Exercise exerciseJSON `json:"exercise"`
}

// restartService stops the copilot (its API, its worker and the Temporal dev server it runs)
// and starts it again on the same data directory, as an operator's restart does.
func restartService(t *testing.T, env *e2eenv.Env) *e2eenv.Env {
	t.Helper()
	require.NoError(t, env.Service.Stop())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, err := app.Start(ctx, app.RoleServe, env.Config)
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Stop() })
	next := *env
	next.Service, next.URL = run, "http://"+run.Addr()
	return &next
}

// The inject route breaks a real VPCS on purpose (a wrong address, no approval asked although
// approvals are on); the student sees only that a fault was injected, in the stream, the
// history, the export and what a later turn's model reads; a check fails; the student fixes the
// PC at its console; the copilot restarts; "check" typed in the chat passes. Another user cannot
// reach the exercise, and only a superadmin reads the fault.
func TestInjectedFaultExerciseOnRealVPCS(t *testing.T) {
	env, lab := vpcsEnv(t, 2, e2eenv.Options{Approval: "changes"})
	pc1 := lab.Nodes[0]
	vpcsRun(t, pc1, "ip 10.0.0.1/24 10.0.0.254")
	require.Contains(t, vpcsRun(t, pc1, "show ip"), "10.0.0.1/24")

	// Bad input changes nothing and is told why.
	code, body := env.Do(http.MethodPost, env.ChatPath("/inject"), map[string]any{"temperature": 5})
	requireError(t, code, body, http.StatusUnprocessableEntity, "temperature")
	code, body = env.Do(http.MethodPost, env.ChatPath("/inject"), map[string]any{"session_id": "not-a-uuid"})
	requireError(t, code, body, http.StatusUnprocessableEntity, "session_id")
	require.Empty(t, streamedRequests(env.LLM), "nothing reached the model")

	const secretLine = "ip 10.0.0.99/24 10.0.0.254"
	record, _ := json.Marshal(map[string]any{"device_name": "PC1", "lines": []string{secretLine},
		"description": "PC1 got a wrong address (10.0.0.99) - ZEBRA-SECRET", "verify_command": "show ip", "verify_expect": "10.0.0.1/24",
		"hints": []string{"One PC cannot reach the others.", "Compare the PCs' addresses."}})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_break", map[string][]string{"PC1": {secretLine}})),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_record", Name: "record_injected_fault", Arguments: string(record)}),
		fakeopenai.Text("I set PC1 to 10.0.0.99, ZEBRA-SECRET. Find it!"),
	)
	began := time.Now()
	s := env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{}, "")
	frames := s.UntilDone(t, true)
	t.Logf("injection turn (4 model calls, a VPCS address change of about 3 s, the record): %v", time.Since(began).Round(time.Millisecond))
	sessionID, _ := startedIDs(t, frames)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], e2eenv.Types(frames))
	require.Contains(t, e2eenv.Types(frames), "exercise_started")
	require.NotContains(t, e2eenv.Types(frames), "approval_required", "the approval gate does not apply to the injection")
	var raw strings.Builder
	for _, f := range frames {
		raw.WriteString(f.Raw)
	}
	for _, secret := range []string{"10.0.0.99", "ZEBRA-SECRET", "verify_expect"} {
		require.NotContains(t, raw.String(), secret, "the stream tells the student nothing of the fault")
	}
	require.Contains(t, raw.String(), "A network fault was injected into this lab")
	require.Contains(t, vpcsRun(t, pc1, "show ip"), "10.0.0.99/24", "the fault is really in the lab")

	// The model of the injection turn was asked in its own mode, with its own tools.
	reqs := streamedRequests(env.LLM)
	require.NotEmpty(t, reqs)
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	require.Contains(t, offered, "record_injected_fault")
	require.NotContains(t, offered, "delete_gns3_node")
	require.Contains(t, reqs[0].Messages[0].Content, "troubleshooting instructor")
	require.Contains(t, conversationText(reqs[0]), "## This exercise", "its brief, after the lab")
	require.Contains(t, conversationText(reqs[len(reqs)-1]), "## This exercise", "and on its later calls")

	sessPath := env.ChatPath("/sessions/" + sessionID)
	for _, path := range []string{sessPath + "/history", sessPath + "/export?format=json", sessPath + "/export?format=markdown"} {
		code, body := env.Do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, code, string(body))
		for _, secret := range []string{"10.0.0.99", "ZEBRA-SECRET", "verify_expect"} {
			require.NotContains(t, string(body), secret, "%s tells the student nothing of the fault", path)
		}
		require.Contains(t, string(body), "record_injected_fault", "%s shows which tools ran", path)
	}

	code, body = env.Do(http.MethodGet, sessPath+"/exercise", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var ex exerciseJSON
	require.NoError(t, json.Unmarshal(body, &ex))
	require.Equal(t, "open", ex.Status)
	require.Equal(t, models.ExerciseID(sessionID, 1), ex.ExerciseID)
	require.NotContains(t, string(body), "10.0.0.99")

	// Not fixed yet.
	began = time.Now()
	code, body = env.Do(http.MethodPost, sessPath+"/exercise/check", nil)
	t.Logf("a check (an Update, a show ip on the real PC, the answer): %v", time.Since(began).Round(time.Millisecond))
	require.Equal(t, http.StatusOK, code, string(body))
	var ans exerciseAnswerJSON
	require.NoError(t, json.Unmarshal(body, &ans))
	require.False(t, ans.Fixed)
	require.Equal(t, "open", ans.Status)
	require.Contains(t, ans.Message, "Not yet")
	code, body = env.Do(http.MethodPost, sessPath+"/exercise/hint", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	require.NoError(t, json.Unmarshal(body, &ans))
	require.Equal(t, "One PC cannot reach the others.", ans.Hint)

	// Someone else with access to the project reaches neither the exercise nor its record.
	env.GNS3.AddUser("bob", "bob-token", false)
	env.GNS3.Grant(env.ProjectID, "bob")
	code, body = env.DoAs("bob-token", http.MethodGet, sessPath+"/exercise", nil)
	requireError(t, code, body, http.StatusNotFound, "not found")
	code, body = env.DoAs("bob-token", http.MethodPost, sessPath+"/exercise/check", nil)
	requireError(t, code, body, http.StatusNotFound, "not found")
	code, body = env.Do(http.MethodGet, "/v3/copilot/exercises/"+ex.ExerciseID, nil)
	requireError(t, code, body, http.StatusForbidden, "superadmin")
	env.GNS3.AddUser("teacher", "teacher-token", true)
	code, body = env.DoAs("teacher-token", http.MethodGet, "/v3/copilot/exercises/"+ex.ExerciseID, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var rec exerciseJSON
	require.NoError(t, json.Unmarshal(body, &rec))
	require.Len(t, rec.Faults, 1)
	require.Equal(t, "PC1", rec.Faults[0].Device)
	require.Equal(t, []string{secretLine}, rec.Faults[0].Lines)
	code, body = env.DoAs("teacher-token", http.MethodGet, "/v3/copilot/exercises?project_id="+env.ProjectID, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	require.Contains(t, string(body), secretLine)

	// The Temporal history of the exercise holds ids, counts and the student's answers only.
	requireSecretsNotInHistory(t, workflowHistory(t, env, ex.ExerciseID, false), 5, "10.0.0.99", "ZEBRA-SECRET")

	// The student repairs PC1 at its console; the copilot restarts before they check.
	vpcsRun(t, pc1, "ip 10.0.0.1/24 10.0.0.254")
	began = time.Now()
	env = restartService(t, env)
	t.Logf("restart of the copilot and its Temporal dev server: %v", time.Since(began).Round(time.Millisecond))

	// Then they type "check" in the chat.
	began = time.Now()
	s = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "check", "session_id": sessionID}, "")
	frames = s.UntilDone(t, true)
	t.Logf("\"check\" typed in the chat after the restart: %v", time.Since(began).Round(time.Millisecond))
	// The answer comes as content, all a client that knows only the seed's events shows.
	require.Equal(t, []string{"content", "exercise_checked", "done"}, e2eenv.Types(frames))
	require.Contains(t, frames[0].Data["content"], "Fixed")
	require.Equal(t, frames[0].Data["content"], frames[1].Data["content"])
	exv := frames[1].Data["exercise"].(map[string]any)
	require.Equal(t, "fixed", exv["status"])
	require.EqualValues(t, 2, exv["checks"])
	require.EqualValues(t, 1, exv["hints_used"])

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		code, body = env.Do(http.MethodGet, sessPath+"/exercise", nil)
		require.Equal(t, http.StatusOK, code, string(body))
		require.NoError(t, json.Unmarshal(body, &ex))
		if ex.Status == "fixed" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the exercise never read as fixed: %s", body)
		case <-time.After(50 * time.Millisecond):
		}
	}
	code, body = env.Do(http.MethodPost, sessPath+"/exercise/check", nil)
	requireError(t, code, body, http.StatusConflict, "over")
	// A reload shows the typed request and its answer, last.
	p := &panel{t: t, base: env.URL, token: e2eenv.UserToken, prefix: env.ChatPath("")}
	h := p.history(sessionID)
	require.GreaterOrEqual(t, len(h), 2)
	require.Equal(t, "user", h[len(h)-2].Role)
	require.Equal(t, "check", h[len(h)-2].Content)
	require.Equal(t, "assistant", h[len(h)-1].Role)
	require.Equal(t, frames[0].Data["content"], h[len(h)-1].Content)
	// The exercise's history, with a check, a hint, a restart and the fixing check, replays on
	// the current code (and is the fixture of workflows.TestRecordedExerciseReplaysOnTheCurrentCode).
	var final workflows.ExerciseAnswer
	require.NoError(t, env.Service.Temporal().GetWorkflow(ctx, ex.ExerciseID, "").Get(ctx, &final), "the exercise's workflow ended")
	require.Equal(t, domain.ExerciseFixed, final.Status)
	replayAndSave(t, env, ex.ExerciseID, "exercise_history.json")

	// A later turn's model does not learn the fault from the transcript either.
	env.LLM.Enqueue(fakeopenai.Text("I cannot tell you that."))
	s = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "what did you break?", "session_id": sessionID}, "")
	s.UntilDone(t, true)
	last, ok := env.LLM.LastRequest()
	require.True(t, ok)
	require.NotContains(t, string(last.Raw), "10.0.0.99")
	require.NotContains(t, string(last.Raw), "ZEBRA-SECRET")
	require.NotContains(t, string(last.Raw), "This exercise", "nor from the injection turn's brief")
	// What the injection turn's model was told of the lab went with it: the lab is shown whole
	// again, as it is now, never as a note of what changed.
	blocks := labBlocks(last)
	require.Len(t, blocks, 1)
	require.True(t, strings.HasPrefix(blocks[0], "<lab>\n"), blocks[0])

	// An open exercise of a session that is deleted stops waiting; the teacher keeps its record.
	// (Another fault: the same one again would be refused, this student had it already.)
	const otherLine = "ip 10.0.0.98/24 10.0.0.254"
	other, _ := json.Marshal(map[string]any{"device_name": "PC1", "lines": []string{otherLine},
		"description": "PC1 got a wrong address (10.0.0.98)", "verify_command": "show ip", "verify_expect": "10.0.0.1/24",
		"hints": []string{"One PC cannot reach the others."}})
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_break2", map[string][]string{"PC1": {otherLine}})),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_record2", Name: "record_injected_fault", Arguments: string(other)}),
		fakeopenai.Text("Done."),
	)
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/inject"), map[string]any{}, "").UntilDone(t, true)
	second, _ := startedIDs(t, frames)
	code, body = env.Do(http.MethodDelete, env.ChatPath("/sessions/"+second), nil)
	require.Equal(t, http.StatusNoContent, code, string(body))
	var ended workflows.ExerciseAnswer
	require.NoError(t, env.Service.Temporal().GetWorkflow(ctx, models.ExerciseID(second, 1), "").Get(ctx, &ended))
	require.Equal(t, domain.ExerciseGivenUp, ended.Status)
	code, body = env.DoAs("teacher-token", http.MethodGet, "/v3/copilot/exercises/"+models.ExerciseID(second, 1), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	require.NoError(t, json.Unmarshal(body, &rec))
	require.Equal(t, "given_up", rec.Status)
	require.Len(t, rec.Faults, 1)
}
