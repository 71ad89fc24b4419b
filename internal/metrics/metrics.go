// Package metrics is the copilot's Prometheus instrumentation: one registry per process with the
// product's own counters and histograms (turns, LLM calls, tools, device commands, streams,
// HTTP requests), those of its dependencies (GNS3 requests, model calls, device consoles, the
// live topology's streams), the Temporal SDK's client and worker metrics fed into the same registry, and
// the /metrics handler. Every recording method is safe on a nil *Metrics, so code and tests
// that run without metrics need no checks.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
)

const namespace = "gns3_copilot"

// Metrics holds a process's registry and the product's metrics in it.
type Metrics struct {
	registry *prometheus.Registry
	temporal *temporalCollector
	deps     *dependencyMetrics

	turnsStarted    *prometheus.CounterVec
	turnsFinished   *prometheus.CounterVec
	firstToken      prometheus.Histogram
	turnDuration    *prometheus.HistogramVec
	llmCalls        *prometheus.CounterVec
	llmTokens       *prometheus.CounterVec
	llmCachedTokens *prometheus.CounterVec
	toolCalls       *prometheus.CounterVec
	toolDuration    *prometheus.HistogramVec
	deviceCommands  *prometheus.CounterVec
	openStreams     prometheus.Gauge
	deliveryLag     prometheus.Histogram
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
}

// New builds a registry with the product's metrics, the Go runtime's and the process's.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	f := factory{reg}
	m := &Metrics{
		registry: reg,
		temporal: newTemporalCollector(),
		turnsStarted: f.counter("turns_started_total", "Chat turns started, by copilot mode.",
			"mode"),
		turnsFinished: f.counter("turns_finished_total", "Chat turns finished, by final status (completed, failed, cancelled) and copilot mode.",
			"status", "mode"),
		firstToken: f.histogram("time_to_first_token_seconds", "From the chat request to the first answer text written to the client's stream.",
			[]float64{.025, .05, .1, .25, .5, 1, 2, 5, 10, 30}),
		turnDuration: f.histogramVec("turn_duration_seconds", "From a turn's start to its end, by final status.",
			[]float64{.25, .5, 1, 2, 5, 10, 30, 60, 120, 300, 600}, "status"),
		llmCalls: f.counter("llm_calls_total", "Calls to LLM providers, by provider, model and outcome (ok, error).",
			"provider", "model", "outcome"),
		llmTokens: f.counter("llm_tokens_total", "Tokens reported by LLM providers, by provider, model and direction (input, output, and reasoning: the part of output spent thinking).",
			"provider", "model", "direction"),
		llmCachedTokens: f.counter("llm_cached_tokens_total", "Input tokens a provider's prompt cache served, as the provider reported them, by provider and model; part of llm_tokens_total's input.",
			"provider", "model"),
		toolCalls: f.counter("tool_calls_total", "Tool calls the model made, by tool and outcome (success, failure) as the tool reported it.",
			"tool", "outcome"),
		toolDuration: f.histogramVec("tool_call_duration_seconds", "Duration of a tool call, by tool.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}, "tool"),
		deviceCommands: f.counter("device_commands_total", "Commands meant for device consoles, by platform and outcome (ok, failed, blocked, unknown, skipped).",
			"platform", "outcome"),
		openStreams: f.gauge("sse_streams_open", "SSE streams of chat turns currently open."),
		deliveryLag: f.histogram("event_delivery_lag_seconds", "From a turn event's append to the event log to its delivery on a client's stream.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}),
		httpRequests: f.counter("http_requests_total", "HTTP requests, by method, route template and status code.",
			"method", "route", "status"),
		httpDuration: f.histogramVec("http_request_duration_seconds", "HTTP request duration until the handler returns (a stream's whole life), by method and route template.",
			prometheus.DefBuckets, "method", "route"),
	}
	m.deps = newDependencyMetrics(f)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), m.temporal)
	return m
}

type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(v)
	return v
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is the process's registry, for tests and for parts that add collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Temporal is the handler to give the Temporal client (client.Options.MetricsHandler): the
// SDK's client and worker metrics then appear in this registry.
func (m *Metrics) Temporal() client.MetricsHandler {
	if m == nil {
		return client.MetricsNopHandler
	}
	return temporalHandler{c: m.temporal}
}

// TurnStarted counts a turn the API started.
func (m *Metrics) TurnStarted(mode string) {
	if m == nil {
		return
	}
	m.turnsStarted.WithLabelValues(mode).Inc()
}

// TurnFinished counts a finished turn and observes how long it ran.
func (m *Metrics) TurnFinished(status, mode string, d time.Duration) {
	if m == nil {
		return
	}
	m.turnsFinished.WithLabelValues(status, mode).Inc()
	m.turnDuration.WithLabelValues(status).Observe(d.Seconds())
}

// FirstToken observes the time from a chat request to its first answer text on the stream.
func (m *Metrics) FirstToken(d time.Duration) {
	if m == nil {
		return
	}
	m.firstToken.Observe(d.Seconds())
}

// ToolCall counts a finished tool call by what it reported to the model, and observes its
// duration from the result's metadata (execution_time, in seconds, as every tool reports it).
func (m *Metrics) ToolCall(tool string, success bool, metadata map[string]any) {
	if m == nil {
		return
	}
	outcome := "failure"
	if success {
		outcome = "success"
	}
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	if secs, ok := metadata["execution_time"].(float64); ok {
		m.toolDuration.WithLabelValues(tool).Observe(secs)
	}
}

// deviceOutcomes are the statuses a device command ends in; "queued" and "sent" are the steps on
// the way and are not counted.
var deviceOutcomes = map[string]bool{"ok": true, "failed": true, "blocked": true, "unknown": true, "skipped": true}

// DeviceCommand counts a device command once it has reached its final status; records written
// on the way (queued, sent) are ignored, so the caller can report every write.
func (m *Metrics) DeviceCommand(platform, status string) {
	if m == nil || !deviceOutcomes[status] {
		return
	}
	if platform == "" {
		platform = "unknown"
	}
	m.deviceCommands.WithLabelValues(platform, status).Inc()
}

// StreamOpened counts an open SSE stream until the returned function is called.
func (m *Metrics) StreamOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.openStreams.Inc()
	return m.openStreams.Dec
}

// EventDelivered observes how long an event waited between its append and its delivery. Event
// ids are `<unix-ms>-<seq>` in both event logs, so the id says when it was appended.
func (m *Metrics) EventDelivered(id string, now time.Time) {
	if m == nil {
		return
	}
	msPart, _, ok := strings.Cut(id, "-")
	if !ok {
		return
	}
	ms, err := strconv.ParseInt(msPart, 10, 64)
	if err != nil {
		return
	}
	lag := now.Sub(time.UnixMilli(ms))
	if lag < 0 {
		lag = 0 // another host's clock may be a little ahead
	}
	m.deliveryLag.Observe(lag.Seconds())
}

// HTTPRequest counts a served request. route is the route template ("" for an unknown route).
func (m *Metrics) HTTPRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
}
