package metrics

import (
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(body)
}

func TestDependencyMetrics(t *testing.T) {
	m := New()
	m.GNS3Request("POST", "/v3/projects/{id}/nodes/{id}/start", "2xx", 20*time.Millisecond)
	m.GNS3Request("GET", "/v3/version", "unreachable", time.Second)
	m.LLMCall(LLMCallStats{Provider: "ollama", Model: "qwen2.5:7b", Took: 3 * time.Second, FirstToken: 500 * time.Millisecond,
		InputTokens: 900, OutputTokens: 40, ReasoningTokens: 25, CachedTokens: 768})
	m.LLMCall(LLMCallStats{Provider: "ollama", Model: "qwen2.5:7b", Took: time.Second, ErrorClass: "rate_limit"})
	closed := m.ConsoleSessionOpened()
	m.ConsoleSessionOpened()()
	m.ConsoleLockWaited("busy", 30*time.Second)
	m.WatchLiveTopology(func() LiveTopologyStats {
		return LiveTopologyStats{Projects: 3, Connected: 2, Resyncs: 7, LongestSilence: 12 * time.Second}
	})

	text := scrape(t, m)
	for _, line := range []string{
		`gns3_copilot_gns3_requests_total{method="POST",outcome="2xx",route="/v3/projects/{id}/nodes/{id}/start"} 1`,
		`gns3_copilot_gns3_requests_total{method="GET",outcome="unreachable",route="/v3/version"} 1`,
		`gns3_copilot_gns3_request_duration_seconds_sum{method="POST",route="/v3/projects/{id}/nodes/{id}/start"} 0.02`,
		`gns3_copilot_llm_call_duration_seconds_sum{model="qwen2.5:7b",provider="ollama"} 4`,
		`gns3_copilot_llm_time_to_first_token_seconds_count{model="qwen2.5:7b",provider="ollama"} 1`,
		`gns3_copilot_llm_call_errors_total{class="rate_limit",model="qwen2.5:7b",provider="ollama"} 1`,
		`gns3_copilot_llm_calls_total{model="qwen2.5:7b",outcome="error",provider="ollama"} 1`,
		`gns3_copilot_llm_tokens_total{direction="input",model="qwen2.5:7b",provider="ollama"} 900`,
		`gns3_copilot_llm_tokens_total{direction="output",model="qwen2.5:7b",provider="ollama"} 40`,
		`gns3_copilot_llm_tokens_total{direction="reasoning",model="qwen2.5:7b",provider="ollama"} 25`,
		`gns3_copilot_llm_cached_tokens_total{model="qwen2.5:7b",provider="ollama"} 768`,
		`gns3_copilot_console_sessions_open 1`,
		`gns3_copilot_console_lock_wait_seconds_count{outcome="busy"} 1`,
		`gns3_copilot_livetopo_projects_followed 3`,
		`gns3_copilot_livetopo_projects_connected 2`,
		`gns3_copilot_livetopo_resyncs_total 7`,
		`gns3_copilot_livetopo_notification_silence_seconds 12`,
	} {
		require.Contains(t, text, line)
	}
	closed()
	require.Contains(t, scrape(t, m), "gns3_copilot_console_sessions_open 0")
}

// Users name models freely in their own configurations: the label stays bounded.
func TestModelAndProviderLabelsAreBounded(t *testing.T) {
	m := New()
	m.ConfigureLLMLabels([]string{"openai", "ollama"}, []string{"server-default"})
	for i := range maxModelLabels + 10 {
		m.LLMCall(LLMCallStats{Provider: "ollama", Model: fmt.Sprintf("user-model-%d", i)})
	}
	m.LLMCall(LLMCallStats{Provider: "ollama", Model: "server-default"})
	m.LLMCall(LLMCallStats{Provider: "made-up", Model: "user-model-0"})

	models := map[string]bool{}
	for _, s := range gathered(t, m, "gns3_copilot_llm_calls_total").GetMetric() {
		l := labels(s)
		models[l["model"]] = true
		require.Contains(t, []string{"ollama", "other"}, l["provider"])
	}
	require.True(t, models["server-default"], "the configured model keeps its name")
	require.True(t, models["other"])
	require.True(t, models["user-model-0"])
	require.False(t, models[fmt.Sprintf("user-model-%d", maxModelLabels)])
	require.Len(t, models, maxModelLabels+2)
	require.Contains(t, scrape(t, m), `gns3_copilot_llm_calls_total{model="user-model-0",outcome="ok",provider="other"} 1`)
}
