package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func gathered(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no metric family %s", name)
	return nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestTemporalHandlerFeedsTheRegistryWithConsistentLabels(t *testing.T) {
	m := New()
	h := m.Temporal().WithTags(map[string]string{"namespace": "default"})
	h.Counter("temporal_request").Inc(2)
	h.WithTags(map[string]string{"operation": "StartWorkflowExecution"}).Counter("temporal_request").Inc(3)
	h.Counter("temporal_request").Inc(1)
	h.Gauge("temporal_worker_task_slots_available").Update(7)
	timer := h.WithTags(map[string]string{"workflow_type": "ChatTurn"}).Timer("temporal_workflow_endtoend_latency")
	timer.Record(30 * time.Millisecond)
	timer.Record(2 * time.Hour) // beyond the last bucket: counted, in +Inf only

	req := gathered(t, m, "temporal_request_total")
	require.Equal(t, dto.MetricType_COUNTER, req.GetType())
	got := map[string]float64{}
	for _, s := range req.GetMetric() {
		l := labels(s)
		require.Equal(t, "default", l["namespace"])
		got[l["operation"]] = s.GetCounter().GetValue()
	}
	require.Equal(t, map[string]float64{"": 3, "StartWorkflowExecution": 3}, got)

	g := gathered(t, m, "temporal_worker_task_slots_available")
	require.Equal(t, 7.0, g.GetMetric()[0].GetGauge().GetValue())

	lat := gathered(t, m, "temporal_workflow_endtoend_latency_seconds").GetMetric()[0].GetHistogram()
	require.EqualValues(t, 2, lat.GetSampleCount())
	require.InDelta(t, 7200.03, lat.GetSampleSum(), 1e-6)
	for _, b := range lat.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.03 {
			want = 1
		}
		require.Equal(t, want, b.GetCumulativeCount(), "bucket le=%v", b.GetUpperBound())
	}
}

func TestProductMetricsAndTheTextHandler(t *testing.T) {
	m := New()
	m.TurnStarted("teaching_assistant")
	m.TurnFinished("completed", "teaching_assistant", 1500*time.Millisecond)
	m.LLMCall(LLMCallStats{Provider: "openai", Model: "gpt-4o-mini", InputTokens: 120, OutputTokens: 30})
	m.LLMCall(LLMCallStats{Provider: "openai", Model: "gpt-4o-mini", ErrorClass: "server"})
	m.ToolCall("get_gns3_topology", true, map[string]any{"execution_time": 0.02})
	m.ToolCall("get_gns3_topology", false, nil)
	m.DeviceCommand("vpcs", "sent") // a step on the way: not counted
	m.DeviceCommand("vpcs", "ok")
	m.DeviceCommand("", "blocked")
	closed := m.StreamOpened()
	m.EventDelivered("1700000000000-0", time.UnixMilli(1700000000250))
	m.EventDelivered("not-an-id", time.Now()) // ignored
	m.HTTPRequest("GET", "/healthz", 200, time.Millisecond)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, line := range []string{
		`gns3_copilot_turns_started_total{mode="teaching_assistant"} 1`,
		`gns3_copilot_turns_finished_total{mode="teaching_assistant",status="completed"} 1`,
		`gns3_copilot_turn_duration_seconds_sum{status="completed"} 1.5`,
		`gns3_copilot_llm_calls_total{model="gpt-4o-mini",outcome="ok",provider="openai"} 1`,
		`gns3_copilot_llm_calls_total{model="gpt-4o-mini",outcome="error",provider="openai"} 1`,
		`gns3_copilot_llm_tokens_total{direction="input",model="gpt-4o-mini",provider="openai"} 120`,
		`gns3_copilot_llm_tokens_total{direction="output",model="gpt-4o-mini",provider="openai"} 30`,
		`gns3_copilot_tool_calls_total{outcome="success",tool="get_gns3_topology"} 1`,
		`gns3_copilot_tool_calls_total{outcome="failure",tool="get_gns3_topology"} 1`,
		`gns3_copilot_tool_call_duration_seconds_sum{tool="get_gns3_topology"} 0.02`,
		`gns3_copilot_device_commands_total{outcome="ok",platform="vpcs"} 1`,
		`gns3_copilot_device_commands_total{outcome="blocked",platform="unknown"} 1`,
		`gns3_copilot_sse_streams_open 1`,
		`gns3_copilot_event_delivery_lag_seconds_sum 0.25`,
		`gns3_copilot_event_delivery_lag_seconds_count 1`,
		`gns3_copilot_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`go_goroutines `,
	} {
		require.Contains(t, text, line)
	}
	require.NotContains(t, text, `outcome="sent"`)
	closed()
	require.Equal(t, 0.0, gathered(t, m, "gns3_copilot_sse_streams_open").GetMetric()[0].GetGauge().GetValue())
	require.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"))
}

// A process without metrics holds a nil *Metrics: every call is a no-op that neither panics nor
// falls back to Prometheus's global registry, where a library's counters would otherwise appear.
func TestNilMetricsRecordNothingAndDoNotPanic(t *testing.T) {
	families := func() []string {
		fams, err := prometheus.DefaultGatherer.Gather()
		require.NoError(t, err)
		var names []string
		for _, f := range fams {
			names = append(names, f.GetName())
		}
		return names
	}
	before := families()
	var m *Metrics
	m.TurnStarted("x")
	m.TurnFinished("completed", "x", time.Second)
	m.FirstToken(time.Second)
	m.LLMCall(LLMCallStats{Provider: "p", Model: "m"})
	m.GNS3Request("GET", "/v3/version", "2xx", time.Second)
	m.ConfigureLLMLabels(nil, nil)
	m.ConsoleSessionOpened()()
	m.ConsoleLockWaited("acquired", time.Second)
	m.WatchLiveTopology(func() LiveTopologyStats { return LiveTopologyStats{} })
	m.WatchApprovals(func(context.Context) ([]ApprovalCount, error) { return nil, nil })
	m.ToolCall("t", true, nil)
	m.DeviceCommand("vpcs", "ok")
	m.StreamOpened()()
	m.EventDelivered("1-0", time.Now())
	m.HTTPRequest("GET", "/", 200, time.Second)
	require.Equal(t, client.MetricsNopHandler, m.Temporal(), "the Temporal client gets the SDK's no-op handler")
	m.Temporal().Counter("c").Inc(1)
	require.Equal(t, before, families(), "nothing was registered globally")
}
