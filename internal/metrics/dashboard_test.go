package metrics

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// metricName finds the series names an expression uses: ours and the Go client's.
var metricName = regexp.MustCompile(`\b(?:gns3_copilot|process|go|temporal)_[a-z0-9_]+\b`)

// everyMetric is a registry in which every recording method was called once, so every family
// the product can expose is on its /metrics.
func everyMetric(t *testing.T) string {
	m := New()
	m.TurnStarted("teaching_assistant")
	m.TurnFinished("completed", "teaching_assistant", time.Second)
	m.FirstToken(time.Second)
	m.LLMCall(LLMCallStats{Provider: "openai", Model: "gpt-4o-mini", Took: time.Second, FirstToken: time.Second, InputTokens: 1, OutputTokens: 1, CachedTokens: 1, ErrorClass: "auth"})
	m.ToolCall("get_gns3_topology", true, map[string]any{"execution_time": 0.1})
	m.DeviceCommand("vpcs", "ok")
	m.StreamOpened()
	m.EventDelivered("1700000000000-0", time.UnixMilli(1700000000100))
	m.HTTPRequest("GET", "/healthz", 200, time.Millisecond)
	m.GNS3Request("GET", "/v3/version", "2xx", time.Millisecond)
	m.ConsoleSessionOpened()
	m.ConsoleLockWaited("busy", time.Second)
	m.WatchLiveTopology(func() LiveTopologyStats { return LiveTopologyStats{Projects: 1} })
	m.WatchApprovals(func(context.Context) ([]ApprovalCount, error) {
		return []ApprovalCount{{Kind: "config", Status: "pending", N: 1}, {Kind: "config", Status: "expired", N: 1}}, nil
	})
	return scrape(t, m)
}

// usedMetrics lists the metric names a file's expressions use.
func usedMetrics(t *testing.T, path string, exprs []string) []string {
	var names []string
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	require.NotEmpty(t, names, "%s uses no metric at all", path)
	return names
}

func requireExposed(t *testing.T, exposed, path string, names []string) {
	t.Helper()
	for _, n := range names {
		if !strings.Contains(exposed, "\n"+n+"{") && !strings.Contains(exposed, "\n"+n+" ") {
			t.Errorf("%s queries %s, which /metrics does not expose", path, n)
		}
	}
}

// Issue 26: the Grafana dashboard shipped in deploy/ queries only metrics that exist.
func TestDashboardQueriesOnlyMetricsThatExist(t *testing.T) {
	const path = "../../deploy/grafana/gns3-copilot.json"
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	require.Equal(t, "gns3-copilot", dash.UID)
	var exprs []string
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		require.False(t, ids[p.ID], "panel id %d is used twice", p.ID)
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, "panel %q has an empty query", p.Title)
			exprs = append(exprs, tg.Expr)
		}
	}
	names := usedMetrics(t, path, exprs)
	// The dashboard covers each dependency the issue names.
	for _, must := range []string{"gns3_copilot_gns3_requests_total", "gns3_copilot_llm_call_errors_total",
		"gns3_copilot_llm_time_to_first_token_seconds_bucket", "gns3_copilot_console_sessions_open",
		"gns3_copilot_console_lock_wait_seconds_bucket", "gns3_copilot_livetopo_projects_followed",
		"gns3_copilot_livetopo_resyncs_total", "gns3_copilot_livetopo_notification_silence_seconds",
		// Issue 49: the hit rate of the class's model's prompt cache.
		"gns3_copilot_llm_cached_tokens_total"} {
		require.Contains(t, names, must)
	}
	requireExposed(t, everyMetric(t), path, names)
}

// The alert rules shipped beside it query only metrics that exist, and cover what the issue
// asks for: GNS3 unreachable, model errors, approvals waiting too long.
func TestAlertRulesQueryOnlyMetricsThatExist(t *testing.T) {
	const path = "../../deploy/prometheus/gns3-copilot-alerts.yml"
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(b)
	for _, alert := range []string{"GNS3CopilotGNS3Unreachable", "GNS3CopilotModelErrors", "GNS3CopilotApprovalsWaiting"} {
		require.Contains(t, text, "- alert: "+alert+"\n")
	}
	var exprs []string
	for _, line := range strings.Split(text, "\n") {
		if trimmed := strings.TrimSpace(line); !strings.HasPrefix(trimmed, "#") {
			exprs = append(exprs, line)
		}
	}
	requireExposed(t, everyMetric(t), path, usedMetrics(t, path, exprs))
}
