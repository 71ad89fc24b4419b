package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// scrape reads /metrics the way Prometheus does.
func scrape(t *testing.T, env *e2eenv.Env) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := env.DoAs("", http.MethodGet, "/metrics", nil)
	require.Equal(t, http.StatusOK, code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	return fams
}

// value is the sum of a family's samples whose labels include want (a histogram's count).
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	total := 0.0
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// After one turn with a tool call, /metrics counts exactly that turn: started and finished,
// its LLM calls and tokens, the tool, the time to first token, and the Temporal SDK's own
// client and worker metrics are in the same registry.
func TestMetricsCountATurn(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Metrics"))
	env.LLM.Enqueue(
		fakeopenai.Reply{Content: []string{"Looking."}, ToolCalls: []fakeopenai.ToolCall{{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`}},
			Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 20}},
		fakeopenai.Reply{Content: fakeopenai.Words("An empty lab."), Usage: &fakeopenai.Usage{PromptTokens: 150, CompletionTokens: 8}},
	)
	before := scrape(t, env)
	require.Equal(t, 0.0, value(before, "gns3_copilot_sse_streams_open", nil))

	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "what is here?"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	titleCalls := float64(len(env.LLM.Requests()) - 2)

	fams := scrape(t, env)
	mode := map[string]string{"mode": "teaching_assistant"}
	require.Equal(t, 1.0, value(fams, "gns3_copilot_turns_started_total", mode))
	require.Equal(t, 1.0, value(fams, "gns3_copilot_turns_finished_total", map[string]string{"mode": "teaching_assistant", "status": "completed"}))
	require.Equal(t, 1.0, value(fams, "gns3_copilot_turn_duration_seconds", map[string]string{"status": "completed"}))
	require.Equal(t, 1.0, value(fams, "gns3_copilot_time_to_first_token_seconds", nil))
	llm := map[string]string{"provider": "openai", "model": "gpt-4o-mini"}
	require.Equal(t, 2+titleCalls, value(fams, "gns3_copilot_llm_calls_total", map[string]string{"provider": "openai", "model": "gpt-4o-mini", "outcome": "ok"}))
	require.GreaterOrEqual(t, value(fams, "gns3_copilot_llm_tokens_total", map[string]string{"provider": "openai", "model": "gpt-4o-mini", "direction": "input"}), 250.0)
	require.GreaterOrEqual(t, value(fams, "gns3_copilot_llm_tokens_total", llm), 278.0)
	require.Equal(t, 1.0, value(fams, "gns3_copilot_tool_calls_total", map[string]string{"tool": "get_gns3_topology", "outcome": "success"}))
	require.Equal(t, 1.0, value(fams, "gns3_copilot_tool_call_duration_seconds", map[string]string{"tool": "get_gns3_topology"}))
	require.GreaterOrEqual(t, value(fams, "gns3_copilot_event_delivery_lag_seconds", nil), float64(len(frames)-1),
		"every frame of the live stream was observed (heartbeats are not events)")

	// Issue 26: what the turn asked of its dependencies. GNS3 was asked (the project check, the
	// topology tool), by route template; every model call was timed, the two streamed ones also
	// to their first token; the live topology reports the project it now follows.
	require.Greater(t, value(fams, "gns3_copilot_gns3_requests_total", map[string]string{"outcome": "2xx"}), 0.0)
	require.Equal(t, 0.0, value(fams, "gns3_copilot_gns3_requests_total", map[string]string{"route": "/v3/projects/" + env.ProjectID}),
		"project ids never become label values")
	require.Equal(t, 2+titleCalls, value(fams, "gns3_copilot_llm_call_duration_seconds", llm))
	require.Equal(t, 2.0, value(fams, "gns3_copilot_llm_time_to_first_token_seconds", llm))
	require.LessOrEqual(t, value(fams, "gns3_copilot_llm_call_errors_total", nil), 0.0, "no model call failed (-1: no family yet)")
	require.GreaterOrEqual(t, value(fams, "gns3_copilot_livetopo_projects_followed", nil), 0.0)

	// The Temporal SDK's metrics: the API's client started the workflow, the worker ran it.
	require.Greater(t, value(fams, "temporal_request_total", map[string]string{"operation": "StartWorkflowExecution"}), 0.0)
	require.Greater(t, value(fams, "temporal_workflow_task_execution_latency_seconds", map[string]string{"workflow_type": "ChatTurn"}), 0.0)
	// The model call is a local activity (in the workflow's own task); the tool is an activity.
	require.Greater(t, value(fams, "temporal_local_activity_execution_latency_seconds", map[string]string{"activity_type": "LLMCall"}), 0.0)
	require.Greater(t, value(fams, "temporal_activity_execution_latency_seconds", map[string]string{"activity_type": "RunTool"}), 0.0)

	// The stream's handler returns, and its request is counted, just after the client read done.
	require.Eventually(t, func() bool {
		now := scrape(t, env)
		return value(now, "gns3_copilot_sse_streams_open", nil) == 0 &&
			value(now, "gns3_copilot_http_requests_total",
				map[string]string{"method": "POST", "route": "/v3/projects/:project_id/chat/stream", "status": "200"}) == 1
	}, 5*time.Second, 10*time.Millisecond)
}

// jsonLines parses a JSON log.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "every log line is one JSON object: %s", sc.Text())
		out = append(out, m)
	}
	return out
}

// Every request gets one log line with its route template and an id that is also returned as
// X-Request-ID (the client's own when it sends one); a turn has a start and an end line, and
// the workflow's and activities' lines carry the turn id.
func TestRequestAndTurnLogLines(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{LogLevel: "debug", LogFormat: "json"})
	env.LLM.SetHandler(titleReplies("Logs"))
	// A tool, so that the turn runs an activity besides its local ones (model call, finalizer),
	// whose task the SDK logs with the workflow's id.
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`}),
		fakeopenai.Text("Hello."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "")
	requestID := s.Header.Get("X-Request-ID")
	require.NotEmpty(t, requestID)
	frames := s.UntilDone(t, true)
	sessionID, turnID := startedIDs(t, frames)
	s.Close()

	req, err := http.NewRequest(http.MethodGet, env.URL+env.ChatPath("/sessions"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e2eenv.UserToken)
	req.Header.Set("X-Request-ID", "from-the-proxy.42")
	resp, err := env.HTTP.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "from-the-proxy.42", resp.Header.Get("X-Request-ID"))

	var streamLine, listLine, start, end map[string]any
	var workflowLines, workflowWithTurn int
	require.Eventually(t, func() bool {
		streamLine, listLine, start, end = nil, nil, nil, nil
		workflowLines, workflowWithTurn = 0, 0
		for _, l := range jsonLines(t, env.Logs()) {
			switch {
			case l["msg"] == "request" && l["request_id"] == requestID:
				streamLine = l
			case l["msg"] == "request" && l["request_id"] == "from-the-proxy.42":
				listLine = l
			case l["msg"] == "turn" && l["event"] == "start" && l["turn_id"] == turnID:
				start = l
			case l["msg"] == "turn" && l["event"] == "end" && l["turn_id"] == turnID:
				end = l
			}
			if wf, _ := l["WorkflowID"].(string); strings.HasSuffix(wf, turnID) {
				workflowLines++
				if l["turn_id"] == turnID {
					workflowWithTurn++
				}
			}
		}
		return streamLine != nil && listLine != nil && end != nil
	}, 5*time.Second, 10*time.Millisecond, "the stream's request line is written when its handler returns")

	require.Equal(t, "POST", streamLine["method"])
	require.Equal(t, "/v3/projects/:project_id/chat/stream", streamLine["route"])
	require.EqualValues(t, 200, streamLine["status"])
	require.NotEmpty(t, streamLine["user_id"])
	require.Contains(t, streamLine, "duration")
	require.Equal(t, "/v3/projects/:project_id/chat/sessions", listLine["route"])

	require.NotNil(t, start)
	require.Equal(t, sessionID, start["session_id"])
	require.Equal(t, requestID, start["request_id"])
	require.Equal(t, "completed", end["status"])
	for _, k := range []string{"steps", "input_tokens", "output_tokens", "duration", "user_id", "project_id"} {
		require.Contains(t, end, k)
	}
	require.Greater(t, workflowLines, 0, "the Temporal SDK logged the turn's workflow at debug level")
	require.Equal(t, workflowLines, workflowWithTurn, "every line of the turn's workflow carries its turn id")
}

// In the Temporal UI a turn reads as a sentence: which turn, project and user, with the ids in
// its details, and never the conversation's text.
func TestTemporalUISummaryOfATurn(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Summary"))
	env.LLM.Enqueue(fakeopenai.Text("Fine."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello rack-5512"}, "").UntilDone(t, true)
	sessionID, turnID := startedIDs(t, frames)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := env.Service.Temporal().DescribeWorkflowExecution(ctx, workflows.WorkflowID(sessionID, turnID), "")
	require.NoError(t, err)
	meta := desc.GetExecutionConfig().GetUserMetadata()
	var summary, details string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(meta.GetSummary(), &summary))
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(meta.GetDetails(), &details))
	require.Equal(t, "turn 1 of session "+sessionID[:8]+"…, project lab1, user alice", summary)
	for _, id := range []string{env.ProjectID, sessionID, turnID, "teaching_assistant", "gpt-4o-mini"} {
		require.Contains(t, details, id)
	}
	for _, text := range []string{summary, details} {
		require.NotContains(t, text, "rack-5512")
		require.NotContains(t, text, e2eenv.UserToken)
		require.NotContains(t, text, e2eenv.LLMKey)
	}
}

// activitySummaries reads a finished workflow's history: the summary the Temporal UI shows for
// every activity it scheduled and every local activity it recorded, by activity type, in order.
func activitySummaries(t *testing.T, env *e2eenv.Env, workflowID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, ev := range closedHistory(t, env, workflowID).Events {
		var name string
		if attrs := ev.GetActivityTaskScheduledEventAttributes(); attrs != nil {
			name = attrs.GetActivityType().GetName()
		} else if m := ev.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
			// The SDK's local activity marker names the activity in its "data" detail.
			var data struct{ ActivityType string }
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["data"], &data))
			name = data.ActivityType
		} else {
			continue
		}
		var summary string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &summary))
		out[name] = append(out[name], summary)
	}
	return out
}

// In the Temporal UI every activity of a turn says what it does, with names and counts: the
// model call and its step, the tool and the nodes it acts on, each device and how many
// commands it gets. Never the conversation's text, a command line, a token or a key.
func TestTemporalUISummariesOfActivities(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant"})
	env.LLM.SetHandler(titleReplies("Summaries"))
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1"})
	env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC2", X: 300})
	// A console nobody answers: the device's failure is its result, the summaries are the same.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedPort := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	env.GNS3.SetConsole(pc1.ID, "127.0.0.1", closedPort)

	const message, answer, command = "start the rack-6620 PCs", "Started rack-8813.", "show ip rack-4471"
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "start_gns3_node", Arguments: `{"node_ids": ["PC1", "PC2"]}`}),
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c2", Name: "execute_multiple_device_commands",
			Arguments: `{"device_configs": [{"device_name": "PC1", "commands": ["` + command + `", "show arp"]}]}`}),
		fakeopenai.Text(answer),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": message}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "turn: %v", e2eenv.Types(frames))
	sessionID, turnID := startedIDs(t, frames)

	got := activitySummaries(t, env, workflows.WorkflowID(sessionID, turnID))
	require.Equal(t, []string{"step 1: model gpt-4o-mini", "step 2: model gpt-4o-mini", "step 3: model gpt-4o-mini"}, got[workflows.LLMActivity])
	require.Equal(t, []string{"start_gns3_node: PC1, PC2"}, got[workflows.ToolActivity])
	require.Equal(t, []string{"plan execute_multiple_device_commands: PC1"}, got[workflows.DevicePlanActivity])
	require.Equal(t, []string{"PC1: 2 commands"}, got[workflows.DeviceRunActivity])
	require.Equal(t, []string{"execute_multiple_device_commands result: 1 device (PC1)"}, got[workflows.DeviceFinishActivity])
	// A turn names its session in the finalize step (no title activity of its own since
	// "lean-turn"), and the summary says so.
	require.Empty(t, got[workflows.TitleActivity])
	require.Len(t, got[workflows.FinalizeActivity], 1)
	require.Regexp(t, `^finish the turn and name a new session: completed, 3 steps, \d+ tokens$`, got[workflows.FinalizeActivity][0])

	for _, list := range got {
		for _, s := range list {
			for _, secret := range []string{e2eenv.UserToken, e2eenv.LLMKey, "rack-6620", "rack-8813", "rack-4471"} {
				require.NotContains(t, s, secret)
			}
		}
	}
}
