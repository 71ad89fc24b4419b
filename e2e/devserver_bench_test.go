package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

// BenchmarkBareStartsOnTheDevServer is the floor under the load command's time to first token:
// N workflows (LOAD_TURNS, default 100) started at the same moment on the Temporal dev server as
// serve configures it, eagerly, by a client that is also their worker, each workflow doing
// nothing but returning. Nothing of the copilot runs; whatever p99 start latency this prints on
// a machine, a burst of N turns cannot open its streams faster there, since each turn's stream
// opens when its workflow start returns.
//
//	LOAD_TURNS=100 go test -run '^$' -bench BareStartsOnTheDevServer -benchtime 1x ./e2e
func BenchmarkBareStartsOnTheDevServer(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("LOAD_TURNS")); err == nil && v > 0 {
		n = v
	}
	cli := e2eenv.RequireTemporalCLI(b)
	s, err := temporaldev.Start(context.Background(), temporaldev.Options{CLIPath: cli, DataDir: b.TempDir(), Headless: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop() })
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	const queue = "bare-starts"
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "Bare"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	ctx := context.Background()
	round := 0
	start := func(id string) (time.Duration, client.WorkflowRun, error) {
		t0 := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, EnableEagerStart: true,
			WorkflowTaskTimeout: 5 * time.Second}, "Bare")
		return time.Since(t0), run, err
	}
	for b.Loop() {
		round++
		var single []time.Duration
		for i := range 5 {
			d, run, err := start(fmt.Sprintf("bare-%d-single-%d", round, i))
			if err == nil {
				err = run.Get(ctx, nil)
			}
			if err != nil {
				b.Fatal(err)
			}
			single = append(single, d)
		}
		idle, _ := procfs.ReadMemory(s.PID())
		cpu0, _ := procfs.ReadStat(s.PID())
		starts := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-gate
				var run client.WorkflowRun
				starts[i], run, errs[i] = start(fmt.Sprintf("bare-%d-%d", round, i))
				if errs[i] == nil {
					errs[i] = run.Get(ctx, nil)
				}
			})
		}
		t0 := time.Now()
		close(gate)
		wg.Wait()
		wall := time.Since(t0)
		cpu1, _ := procfs.ReadStat(s.PID())
		after, _ := procfs.ReadMemory(s.PID())
		for i, err := range errs {
			if err != nil {
				b.Fatalf("workflow %d of %d: %v", i, n, err)
			}
		}
		b.ReportMetric(ms(percentile(starts, 50)), "start-p50-ms")
		b.ReportMetric(ms(percentile(starts, 99)), "start-p99-ms")
		fmt.Printf("\n%d bare workflows started at once on the dev server, all closed in %.2f s\n", n, wall.Seconds())
		fmt.Printf("one start alone (median of 5): %.1f ms\n", ms(percentile(single, 50)))
		fmt.Printf("start returned  p50 %5.0f ms   p99 %5.0f ms\n", ms(percentile(starts, 50)), ms(percentile(starts, 99)))
		fmt.Printf("CPU of the dev server during the burst: %.2f s (%.1f ms per workflow)\n",
			cpu1.CPUSeconds-cpu0.CPUSeconds, 1000*(cpu1.CPUSeconds-cpu0.CPUSeconds)/float64(n))
		fmt.Printf("dev server resident before the burst %.0f MB (anon %.0f + file %.0f), after it %.0f MB (anon %.0f + file %.0f)\n",
			mb(idle.RSS), mb(idle.Anon), mb(idle.File), mb(after.RSS), mb(after.Anon), mb(after.File))
		b.ReportMetric(1000*(cpu1.CPUSeconds-cpu0.CPUSeconds)/float64(n), "devserver-cpu-ms/workflow")
		b.ReportMetric(mb(after.RSS), "devserver-after-MB")
	}
}
