package temporaldev

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"
)

// pollRPSSettings lift the dev server's 20/s task-processor poll limits, which
// otherwise add ~50 ms of scheduling to every activity (~8 ms with it).
var pollRPSSettings = []string{
	"history.transferProcessorMaxPollRPS=2000",
	"history.timerProcessorMaxPollRPS=2000",
	"history.visibilityProcessorMaxPollRPS=2000",
	"system.enableEagerWorkflowStart=true",
	"system.enableActivityEagerExecution=true",
	// One partition per task queue: with the default four, a task written to a partition
	// without a waiting poll is forwarded or stored; one worker process polls them all anyway.
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
}

// leanSettings keep the dev server's memory and idle CPU down on a GNS3 host, where both are
// taken from the emulated routers (issue 36). What they leave out, the copilot does not use:
//   - the mutable-state cache holds 512 workflows instead of the CLI's 8096: a class of 300
//     starting at once fits, and a workflow evicted (an exercise left open for days) is read
//     back from SQLite on its next task;
//   - the task-queue and history scanners are off: their system workflows clean up after
//     Cassandra-era failures and idle task queues, while finished tasks are deleted as they
//     are acknowledged and closed workflows by their retention (the namespace's setting below);
//     off, they save about 7 MB and half of the idle CPU;
//   - Nexus is off (no endpoints are registered; nothing polls for them);
//   - the parent-close-policy system worker is off: the history service then applies a closing
//     parent's policy to its children itself, whatever their number (it hands the work to that
//     worker only from 10 children on), and a turn has a few configuration jobs at most; off, the
//     worker's SDK client, pollers and caches (1.5 MB of live heap) are not there.
//
// The events cache stays at its default (512 KB for the one shard the CLI runs, which
// `temporal server start-dev` cannot change). The scaled-out layout's server keeps Temporal's
// defaults for these: it is meant for a machine of its own.
var leanSettings = []string{
	"history.hostLevelCacheMaxSize=512",
	"worker.taskQueueScannerEnabled=false",
	"worker.historyScannerEnabled=false",
	"system.enableNexus=false",
	"system.enableParentClosePolicyWorker=false",
}

// DefaultRetention is how long the dev server keeps a closed workflow's history (a finished
// turn, MCP call, configuration job or exercise) before deleting it: a day, for the Temporal UI
// and for investigating a turn that went wrong. The transcript, audit records and approvals
// live in the copilot's own database and are not affected.
const DefaultRetention = 24 * time.Hour

// sqlitePragmas put the dev server's database in WAL mode without an fsync per commit: its
// default rollback journal with full sync made every workflow start and task a few fsyncs in
// one queue, so a burst of turns waited for each other's writes. A killed process loses no
// commit in WAL mode; only a power cut may lose the last ones.
var sqlitePragmas = []string{"journal_mode=wal", "synchronous=normal"}

// childEnv is the dev server's environment: this process's, with opts.MemoryLimit as its
// GOMEMLIMIT, which replaces one this process was given (exec keeps the last of a name), and
// with devServerGOGC unless this process was given a GOGC.
func childEnv(opts Options) []string {
	env := os.Environ()
	if opts.MemoryLimit > 0 {
		env = append(env, "GOMEMLIMIT="+strconv.FormatInt(opts.MemoryLimit, 10))
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		env = append(env, "GOGC="+strconv.Itoa(devServerGOGC))
	}
	return env
}

// devServerGOGC is the dev server's garbage-collection target: its heap may grow to 1.75 times
// what it holds live instead of twice that. In a burst of 100 turns its heap grows with the
// burst's garbage, and this took the dev server from 115 to 109 MB (medians of six runs each,
// alternated) right after it, with its CPU a turn and the burst's first-token p99 within the
// runs' spread (docs/scale.md). GOGC=50 was tried in an earlier round: 10 MB less for 15 % more
// of its CPU.
const devServerGOGC = 75

// startArgs are the CLI's arguments for one start: where it listens and keeps its database,
// the search attributes, and the dynamic config above.
func startArgs(host, dataDir, namespace string, ports startPorts, opts Options) []string {
	args := []string{"server", "start-dev",
		"--ip", host,
		"--port", strconv.Itoa(ports.frontend),
		"--db-filename", filepath.Join(dataDir, DBFileName),
		"--log-level", "warn",
	}
	if ports.ui == 0 {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-ip", host, "--ui-port", strconv.Itoa(ports.ui))
	}
	if namespace != "default" {
		args = append(args, "--namespace", namespace)
	}
	for _, sa := range SearchAttributes {
		args = append(args, "--search-attribute", sa+"=Keyword")
	}
	for _, kv := range slices.Concat(pollRPSSettings, leanSettings) {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, p := range sqlitePragmas {
		args = append(args, "--sqlite-pragma", p)
	}
	return append(args, opts.ExtraArgs...)
}

// setRetention sets the namespace's retention of closed workflows when it differs from want
// (0: DefaultRetention), as the ready check read it: after the first start, nothing to do.
func (s *Server) setRetention(ctx context.Context, want time.Duration) error {
	if want <= 0 {
		want = DefaultRetention
	}
	if s.retention == want {
		return nil
	}
	nop := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	nc, err := client.NewNamespaceClient(client.Options{HostPort: s.addr, Logger: nop})
	if err != nil {
		return fmt.Errorf("temporaldev: setting the retention: %w", err)
	}
	defer nc.Close()
	err = nc.Update(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: s.namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(want)},
	})
	if err != nil {
		return fmt.Errorf("temporaldev: setting the retention of namespace %s to %s: %w", s.namespace, want, err)
	}
	s.logger.Info("temporal dev server: retention of closed workflows set", "namespace", s.namespace, "retention", want)
	s.retention = want
	return nil
}
