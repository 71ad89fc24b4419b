package metrics

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// The Temporal SDK names a metric and attaches whatever tags the call site has, so one name may
// come with different tag sets (a poller's counter with and without poller_type, say). A
// Prometheus metric family needs one set of label names, so this collector keeps every series
// it was given and, when scraped, labels each family with the union of its tag names, leaving
// a tag a series lacks empty (which Prometheus treats as absent).

type metricKind int

const (
	kindCounter metricKind = iota
	kindGauge
	kindTimer
)

// timerBuckets suit the SDK's latencies: RPCs and task schedule-to-start (milliseconds) up to
// long polls and workflow end-to-end times (tens of seconds).
var timerBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

type temporalCollector struct {
	mu       sync.Mutex
	families map[string]*family
	// byName finds the family of an SDK name without making its Prometheus name again: the SDK
	// asks for a counter or timer by name at every task, a few dozen times a turn.
	byName map[sdkName]*family
}

type sdkName struct {
	kind metricKind
	name string
}

type family struct {
	kind   metricKind
	series map[string]*series // by the sorted tag set
}

type series struct {
	tags map[string]string
	// value is a counter's total or a gauge's value, as float64 bits.
	value atomic.Uint64
	// a timer's histogram
	counts []atomic.Uint64
	count  atomic.Uint64
	sum    atomic.Uint64
}

func newTemporalCollector() *temporalCollector {
	return &temporalCollector{families: map[string]*family{}, byName: map[sdkName]*family{}}
}

// promName turns an SDK metric name into a Prometheus one, with the unit or _total suffix the
// Prometheus conventions ask for.
func promName(name string, kind metricKind) string {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, name)
	switch {
	case kind == kindCounter && !strings.HasSuffix(n, "_total"):
		n += "_total"
	case kind == kindTimer && !strings.HasSuffix(n, "_seconds"):
		n += "_seconds"
	}
	return n
}

// tagsKey is a tag set's identity within a family: its pairs in the order of their names.
func tagsKey(tags map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(tags[k])
		b.WriteByte(0)
	}
	return b.String()
}

// series returns the series of name with tags, whose tagsKey is key.
func (c *temporalCollector) series(kind metricKind, name string, tags map[string]string, key string) *series {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.byName[sdkName{kind, name}]
	if f == nil {
		prom := promName(name, kind)
		if f = c.families[prom]; f == nil {
			f = &family{kind: kind, series: map[string]*series{}}
			c.families[prom] = f
		}
		c.byName[sdkName{kind, name}] = f
	}
	if f.kind != kind {
		// The SDK never uses one name for two kinds; if it ever did, keep the first and drop the
		// other rather than break the whole scrape.
		return &series{counts: make([]atomic.Uint64, len(timerBuckets))}
	}
	s := f.series[key]
	if s == nil {
		s = &series{tags: tags}
		if kind == kindTimer {
			s.counts = make([]atomic.Uint64, len(timerBuckets))
		}
		f.series[key] = s
	}
	return s
}

func addFloat(u *atomic.Uint64, d float64) {
	for {
		old := u.Load()
		if u.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (s *series) observe(d time.Duration) {
	v := d.Seconds()
	if i := sort.SearchFloat64s(timerBuckets, v); i < len(timerBuckets) {
		s.counts[i].Add(1)
	}
	s.count.Add(1)
	addFloat(&s.sum, v)
}

// Describe sends nothing: the SDK's metrics are only known once it emits them, which makes this
// an unchecked collector.
func (c *temporalCollector) Describe(chan<- *prometheus.Desc) {}

func (c *temporalCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, f := range c.families {
		union := map[string]bool{}
		for _, s := range f.series {
			for k := range s.tags {
				union[k] = true
			}
		}
		labels := slices.Sorted(maps.Keys(union))
		desc := prometheus.NewDesc(name, "Temporal SDK metric "+name+".", labels, nil)
		for _, s := range f.series {
			values := make([]string, len(labels))
			for i, l := range labels {
				values[i] = s.tags[l]
			}
			switch f.kind {
			case kindCounter:
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, math.Float64frombits(s.value.Load()), values...)
			case kindGauge:
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, math.Float64frombits(s.value.Load()), values...)
			case kindTimer:
				buckets := make(map[float64]uint64, len(timerBuckets))
				var cum uint64
				for i, ub := range timerBuckets {
					cum += s.counts[i].Load()
					buckets[ub] = cum
				}
				ch <- prometheus.MustNewConstHistogram(desc, s.count.Load(), math.Float64frombits(s.sum.Load()), buckets, values...)
			}
		}
	}
}

// temporalHandler implements the SDK's client.MetricsHandler on the collector. Its tag set's
// key is made once, when the SDK adds tags, rather than at every counter it then asks for.
type temporalHandler struct {
	c    *temporalCollector
	tags map[string]string
	key  string
}

func (h temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	maps.Copy(merged, h.tags)
	maps.Copy(merged, tags)
	return temporalHandler{c: h.c, tags: merged, key: tagsKey(merged)}
}

func (h temporalHandler) Counter(name string) client.MetricsCounter {
	s := h.c.series(kindCounter, name, h.tags, h.key)
	return counterFunc(func(d int64) { addFloat(&s.value, float64(d)) })
}

func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	s := h.c.series(kindGauge, name, h.tags, h.key)
	return gaugeFunc(func(v float64) { s.value.Store(math.Float64bits(v)) })
}

func (h temporalHandler) Timer(name string) client.MetricsTimer {
	return timerFunc(h.c.series(kindTimer, name, h.tags, h.key).observe)
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
