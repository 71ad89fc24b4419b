package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
)

func TestEveryRequestHasAnIDAndOneLogLine(t *testing.T) {
	var buf bytes.Buffer
	m := metrics.New()
	// Port 1 on loopback refuses at once: a GNS3 that is down.
	down := gns3.NewServer("http://127.0.0.1:1", time.Second)
	s := newTestServer(Deps{GNS3: down, Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Metrics: m, MetricsHandler: m.Handler()})
	serve := func(path, id string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if id != "" {
			r.Header.Set(RequestIDHeader, id)
		}
		r.Header.Set("Authorization", "Bearer token-that-must-not-be-logged")
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w
	}

	w := serve("/v3/projects?secret=1", "")
	require.Equal(t, http.StatusBadGateway, w.Code, "GNS3 is down: the answer is an error, still logged")
	made := w.Header().Get(RequestIDHeader)
	require.Len(t, made, 36)
	require.Equal(t, "proxy-id_1.2", serve("/nowhere", "proxy-id_1.2").Header().Get(RequestIDHeader))
	bad := serve("/nowhere", "has spaces\tand tabs").Header().Get(RequestIDHeader)
	require.NotEqual(t, "has spaces\tand tabs", bad, "an unusable client id is replaced")
	require.Len(t, bad, 36)

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		if v["msg"] == "request" {
			lines = append(lines, v)
		}
	}
	require.Len(t, lines, 3)
	require.Equal(t, "/v3/projects", lines[0]["route"])
	require.EqualValues(t, 502, lines[0]["status"])
	require.Equal(t, made, lines[0]["request_id"])
	require.Equal(t, "ERROR", lines[0]["level"])
	require.Equal(t, "", lines[1]["route"], "an unknown route has no template")
	require.Equal(t, "/nowhere", lines[1]["path"])
	require.NotContains(t, buf.String(), "token-that-must-not-be-logged")
	require.NotContains(t, buf.String(), "secret=1")

	body := serve("/metrics", "").Body.String()
	require.Contains(t, body, `gns3_copilot_http_requests_total{method="GET",route="/v3/projects",status="502"} 1`)
	require.Contains(t, body, `gns3_copilot_http_requests_total{method="GET",route="unmatched",status="404"} 2`)
}
