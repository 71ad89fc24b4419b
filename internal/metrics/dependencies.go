package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of what the copilot depends on and what fails in practice: GNS3's API, the
// model providers, the device consoles and the live topology's notification streams.

// maxModelLabels bounds the model label: users name models in their own configurations, so
// beyond the configured ones (the server default) only this many more get a series of their
// own and the rest are counted as "other".
const maxModelLabels = 24

type dependencyMetrics struct {
	gns3Requests  *prometheus.CounterVec
	gns3Duration  *prometheus.HistogramVec
	llmDuration   *prometheus.HistogramVec
	llmFirstToken *prometheus.HistogramVec
	llmErrors     *prometheus.CounterVec
	consoles      prometheus.Gauge
	lockWait      *prometheus.HistogramVec

	labelsMu  sync.Mutex
	providers map[string]bool // nil: any provider is its own label
	models    map[string]bool
	extra     int // models admitted beyond the configured ones
}

func newDependencyMetrics(f factory) *dependencyMetrics {
	return &dependencyMetrics{models: map[string]bool{},
		gns3Requests: f.counter("gns3_requests_total", "Requests to the GNS3 API, by method, route template and outcome (2xx, 3xx, 4xx, 5xx, timeout, unreachable, cancelled).",
			"method", "route", "outcome"),
		gns3Duration: f.histogramVec("gns3_request_duration_seconds", "Duration of GNS3 API requests until their answer was read (for notification streams, until the answer began), by method and route template.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "method", "route"),
		llmDuration: f.histogramVec("llm_call_duration_seconds", "Duration of model calls from request to the end of the answer, by provider and model.",
			[]float64{.25, .5, 1, 2, 5, 10, 20, 30, 60, 120, 300}, "provider", "model"),
		llmFirstToken: f.histogramVec("llm_time_to_first_token_seconds", "From a streamed model call's request to its first text or tool-call delta, by provider and model.",
			[]float64{.1, .25, .5, 1, 2, 5, 10, 20, 30, 60}, "provider", "model"),
		llmErrors: f.counter("llm_call_errors_total", "Failed model calls, by provider, model and class (auth, rate_limit, server, timeout, network, bad_request, cancelled, other).",
			"provider", "model", "class"),
		consoles: f.gauge("console_sessions_open", "Device console sessions open now."),
		lockWait: f.histogramVec("console_lock_wait_seconds", "Time spent waiting for a device console's lock, by outcome (acquired, busy: gave up after the wait bound, cancelled).",
			[]float64{.001, .01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60}, "outcome"),
	}
}

// GNS3Request records one request to GNS3; it is a gns3.RequestObserver.
func (m *Metrics) GNS3Request(method, route, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.deps.gns3Requests.WithLabelValues(method, route, outcome).Inc()
	m.deps.gns3Duration.WithLabelValues(method, route).Observe(took.Seconds())
}

// ConfigureLLMLabels names the providers and models that always get series of their own: the
// provider presets and the configured models (the server default). A provider outside the
// list is reported as "other".
func (m *Metrics) ConfigureLLMLabels(providers, models []string) {
	if m == nil {
		return
	}
	m.deps.labelsMu.Lock()
	defer m.deps.labelsMu.Unlock()
	m.deps.providers = map[string]bool{}
	for _, p := range providers {
		m.deps.providers[p] = true
	}
	for _, name := range models {
		if name != "" {
			m.deps.models[name] = true
		}
	}
}

// llmLabels bounds a call's provider and model to label values.
func (m *Metrics) llmLabels(provider, model string) (string, string) {
	d := m.deps
	d.labelsMu.Lock()
	defer d.labelsMu.Unlock()
	if d.providers != nil && !d.providers[provider] {
		provider = "other"
	}
	if provider == "" {
		provider = "unknown"
	}
	if !d.models[model] {
		if d.extra >= maxModelLabels || model == "" {
			return provider, "other"
		}
		d.models[model] = true
		d.extra++
	}
	return provider, model
}

// LLMCallStats is what one model call did.
type LLMCallStats struct {
	Provider, Model string
	// Took is the whole call; FirstToken the wait for the first delta of a streamed call (0:
	// none arrived, or the call was not streamed).
	Took, FirstToken          time.Duration
	InputTokens, OutputTokens int64
	// ReasoningTokens is the part of OutputTokens spent thinking, where the provider reports it.
	ReasoningTokens int64
	// CachedTokens is the part of InputTokens the provider's prompt cache served.
	CachedTokens int64
	// ErrorClass is "" for a call that succeeded, else one of llmconfig's error classes.
	ErrorClass string
}

// LLMCall counts one call to a provider, its duration, time to first token, tokens and error.
func (m *Metrics) LLMCall(c LLMCallStats) {
	if m == nil {
		return
	}
	provider, model := m.llmLabels(c.Provider, c.Model)
	outcome := "ok"
	if c.ErrorClass != "" {
		outcome = "error"
		m.deps.llmErrors.WithLabelValues(provider, model, c.ErrorClass).Inc()
	}
	m.llmCalls.WithLabelValues(provider, model, outcome).Inc()
	m.deps.llmDuration.WithLabelValues(provider, model).Observe(c.Took.Seconds())
	if c.FirstToken > 0 {
		m.deps.llmFirstToken.WithLabelValues(provider, model).Observe(c.FirstToken.Seconds())
	}
	if c.InputTokens > 0 {
		m.llmTokens.WithLabelValues(provider, model, "input").Add(float64(c.InputTokens))
	}
	if c.OutputTokens > 0 {
		m.llmTokens.WithLabelValues(provider, model, "output").Add(float64(c.OutputTokens))
	}
	if c.ReasoningTokens > 0 {
		// A part of "output", counted beside it: a sum over every direction counts it twice.
		m.llmTokens.WithLabelValues(provider, model, "reasoning").Add(float64(c.ReasoningTokens))
	}
	if c.CachedTokens > 0 {
		m.llmCachedTokens.WithLabelValues(provider, model).Add(float64(c.CachedTokens))
	}
}

// ConsoleSessionOpened counts an open console session until the returned function is called.
func (m *Metrics) ConsoleSessionOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.deps.consoles.Inc()
	return m.deps.consoles.Dec
}

// ConsoleLockWaited observes a wait for a console's lock; outcome is acquired, busy or
// cancelled.
func (m *Metrics) ConsoleLockWaited(outcome string, waited time.Duration) {
	if m == nil {
		return
	}
	m.deps.lockWait.WithLabelValues(outcome).Observe(waited.Seconds())
}

// LiveTopologyStats is the state of a process's live topology at one moment.
type LiveTopologyStats struct {
	// Projects followed, and how many of them have their notification stream connected.
	Projects, Connected int
	// Resyncs counts full re-reads of a project since the process started (first read,
	// reconnection, a resync asked for).
	Resyncs uint64
	// LongestSilence is the longest time since a followed project's last notification (GNS3
	// pings every 5 s, so more than a few seconds is a stream in trouble).
	LongestSilence time.Duration
}

type liveTopologyCollector struct {
	projects, connected, resyncs, silence *prometheus.Desc
	read                                  func() LiveTopologyStats
}

func (c liveTopologyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.projects
	ch <- c.connected
	ch <- c.resyncs
	ch <- c.silence
}

func (c liveTopologyCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	ch <- prometheus.MustNewConstMetric(c.projects, prometheus.GaugeValue, float64(s.Projects))
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, float64(s.Connected))
	ch <- prometheus.MustNewConstMetric(c.resyncs, prometheus.CounterValue, float64(s.Resyncs))
	ch <- prometheus.MustNewConstMetric(c.silence, prometheus.GaugeValue, s.LongestSilence.Seconds())
}

// WatchLiveTopology adds the live topology's gauges, which read reads at every scrape.
func (m *Metrics) WatchLiveTopology(read func() LiveTopologyStats) {
	if m == nil {
		return
	}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "livetopo", n) }
	m.registry.MustRegister(liveTopologyCollector{read: read,
		projects:  prometheus.NewDesc(name("projects_followed"), "Projects whose topology this process keeps from GNS3's notification stream.", nil, nil),
		connected: prometheus.NewDesc(name("projects_connected"), "Followed projects whose notification stream is connected now.", nil, nil),
		resyncs:   prometheus.NewDesc(name("resyncs_total"), "Full re-reads of a followed project (first read, after a reconnection, or asked for).", nil, nil),
		silence: prometheus.NewDesc(name("notification_silence_seconds"),
			"Longest time since a followed project's last notification (GNS3 pings every 5 s); 0 when none is followed.", nil, nil),
	})
}
