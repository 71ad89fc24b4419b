package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ApprovalCount is how many approvals of a kind are in a status.
type ApprovalCount struct {
	Kind, Status string
	N            int64
}

// approvalsCollector reads the approvals table at every scrape. The rows are the truth an API
// and a worker process share, so every process reports the same numbers, and a restart loses
// none of them, which counters kept in memory could not promise.
type approvalsCollector struct {
	desc  *prometheus.Desc
	count func(context.Context) ([]ApprovalCount, error)
}

func (c approvalsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c approvalsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n.N), n.Kind, n.Status)
	}
}

// WatchApprovals adds the approvals gauge, which count reads at every scrape: the pending ones
// are waiting for their owner, the others were decided (approved, rejected) or expired.
func (m *Metrics) WatchApprovals(count func(context.Context) ([]ApprovalCount, error)) {
	if m == nil {
		return
	}
	m.registry.MustRegister(approvalsCollector{count: count, desc: prometheus.NewDesc(namespace+"_approvals",
		"Approvals by kind (config, destructive) and status: pending ones wait for their owner; approved, rejected and expired ones were decided.",
		[]string{"kind", "status"}, nil)})
}
