package temporaldev_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
)

// BenchmarkStartToHealthy measures Start (spawn, then health check and
// namespace describe succeed) on a fresh data dir and on a restart, and
// Stop separately.
func BenchmarkStartToHealthy(b *testing.B) {
	cli := requireCLI(b)
	dir := b.TempDir()
	var startTotal, stopTotal time.Duration
	for b.Loop() {
		began := time.Now()
		s, err := temporaldev.Start(context.Background(), temporaldev.Options{CLIPath: cli, DataDir: dir, Headless: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		startTotal += time.Since(began)
		began = time.Now()
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		stopTotal += time.Since(began)
	}
	b.ReportMetric(float64(startTotal.Milliseconds())/float64(b.N), "ms-start/op")
	b.ReportMetric(float64(stopTotal.Milliseconds())/float64(b.N), "ms-stop/op")
}

// BenchmarkWorkflowOneActivity is the end-to-end cost of a workflow with one
// activity on the dev server as Start configures it (poll-rate settings).
func BenchmarkWorkflowOneActivity(b *testing.B) {
	cli := requireCLI(b)
	s, err := temporaldev.Start(context.Background(), temporaldev.Options{CLIPath: cli, DataDir: b.TempDir(), Headless: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop() })
	c := dial(b, s)
	runWorker(b, c, "bench")
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprint("bench-", i), TaskQueue: "bench"}, greet, "x")
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
