// Package temporaldev runs the Temporal CLI's development server
// (`temporal server start-dev`) as a supervised child process, so that
// `serve` and end-to-end tests need no Temporal running beforehand. Its
// state lives in a SQLite file in a data directory and survives restarts.
package temporaldev

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"
)

// CLIVersion is the Temporal CLI release this package is written and
// tested against.
const CLIVersion = "1.5.1"

// InstallCommand installs the pinned CLI into $(go env GOPATH)/bin.
const InstallCommand = "go install github.com/temporalio/cli/cmd/temporal@v" + CLIVersion

// SearchAttributes are registered on every start so that chat-turn
// workflows can be found by project, session and user in the Web UI
// (and configuration jobs also by tool).
var SearchAttributes = []string{"ProjectId", "SessionId", "UserId", "ToolName"}

// DBFileName and LogFileName are the files Start keeps in Options.DataDir.
const (
	DBFileName  = "temporal.db"
	LogFileName = "temporal-dev.log"
	lockName    = "temporal.lock"
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
//   - Nexus is off (no endpoints are registered; nothing polls for them).
//
// The events cache stays at its default (512 KB for the one shard the CLI runs, which
// `temporal server start-dev` cannot change). The scaled-out layout's server keeps Temporal's
// defaults for these: it is meant for a machine of its own.
var leanSettings = []string{
	"history.hostLevelCacheMaxSize=512",
	"worker.taskQueueScannerEnabled=false",
	"worker.historyScannerEnabled=false",
	"system.enableNexus=false",
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

const (
	defaultStartTimeout = 60 * time.Second
	stopGrace           = 10 * time.Second
	killWait            = 5 * time.Second
	maxLogSize          = 16 << 20
	busyRetryDelay      = time.Second
)

// A dev server that finds its database busy exits at once; busyAttempts
// bounds how often Start tries before it says so (a variable for tests).
var busyAttempts = 8

// diedAttempts bounds the starts of a dev server that dies (or finds a port
// taken) before it is ready. The CLI binds some ports of its own choosing
// (membership, metrics) by picking a free one and binding it later, and we
// choose the frontend and UI ports the same way, so two starts at the same
// moment can pick one port and the loser panics or hangs. A fresh start
// with fresh ports is all it takes; a cause that is not a race fails again
// the same way, and then the error quotes it.
var diedAttempts = 4

// diedRetryDelay spaces those starts a little, so the burst that caused the
// race has moved on.
const diedRetryDelay = 200 * time.Millisecond

// errPortTaken is a start whose log says a port it needed was taken: the CLI
// then neither exits nor answers, so waiting for health would only time out.
var errPortTaken = errors.New("a port it needed was taken by another process")

// errExited is a start whose process exited before it was ready.
var errExited = errors.New("process exited")

// Options configures Start. Zero values pick sensible defaults.
type Options struct {
	// CLIPath is the temporal binary; empty means FindCLI's search.
	CLIPath string
	// DataDir holds the SQLite database, the log and a lock file. Required.
	DataDir string
	// Host is the address both the gRPC frontend and the UI bind to
	// (default 127.0.0.1).
	Host string
	// Port is the gRPC frontend port; 0 picks a free one.
	Port int
	// UIPort is the Web UI port when not Headless; 0 picks a free one.
	UIPort int
	// UIPortPreferred makes UIPort a wish: when that port is taken, the
	// Web UI gets a free one instead of the start failing.
	UIPortPreferred bool
	// Headless disables the Web UI.
	Headless bool
	// Namespace is created at launch and checked for readiness (default
	// "default", which always exists).
	Namespace string
	// Logger receives lifecycle messages (default slog.Default()); the
	// server's own output goes to LogFileName in DataDir.
	Logger *slog.Logger
	// ExtraArgs are appended to the start-dev command line.
	ExtraArgs []string
	// Lock is the data directory's lock when the caller took it already
	// (LockDataDir), to cover more than the dev server's database; nil makes
	// Start take it, waiting up to LockWait. Either way the child inherits it.
	Lock *Lock
	// LockWait bounds the wait for the lock when Start takes it (default
	// DefaultLockWait).
	LockWait time.Duration
	// Retention is the namespace's retention of closed workflows, set at every start
	// (default DefaultRetention; Temporal takes no less than a day).
	Retention time.Duration
}

// Server is a running dev server.
type Server struct {
	addr, uiAddr string
	namespace    string
	dataDir      string
	logPath      string
	pid          int
	logger       *slog.Logger
	release      func() // must be safe to call more than once

	done    chan struct{}
	waitErr error // set before done is closed

	stopOnce sync.Once
	stopErr  error
	stopping chan struct{}
}

// FindCLI locates the temporal binary: the explicit path if given, then
// PATH, then $GOBIN and $GOPATH/bin (default ~/go/bin), then the directories
// `go env GOBIN GOPATH` names (a GOPATH set with `go env -w` is not in the
// environment, yet `go install` and scripts/install-temporal.sh use it). The
// error says how to install it.
func FindCLI(explicit string) (string, error) {
	if explicit != "" {
		if err := checkExecutable(explicit); err != nil {
			return "", fmt.Errorf("temporal CLI %q: %w; install it with `%s` (or `make temporal`)", explicit, err, InstallCommand)
		}
		return explicit, nil
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	var tried []string
	for _, dirs := range []func() []string{goBinDirs, goEnvBinDirs} {
		for _, dir := range dirs() {
			p := filepath.Join(dir, exeName("temporal"))
			if slices.Contains(tried, p) {
				continue
			}
			if checkExecutable(p) == nil {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	return "", fmt.Errorf("temporal CLI not found on PATH or at %s; install it with `%s` (or `make temporal`), or point the service at an existing Temporal server",
		strings.Join(tried, ", "), InstallCommand)
}

func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

func goBinDirs() []string {
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		if p != "" {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	return dirs
}

// goEnvBinDirs asks the go command where `go install` puts binaries.
func goEnvBinDirs() []string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	var dirs []string
	if len(lines) > 0 && lines[0] != "" {
		dirs = append(dirs, lines[0])
	}
	if len(lines) > 1 {
		for _, p := range filepath.SplitList(lines[1]) {
			if p != "" {
				dirs = append(dirs, filepath.Join(p, "bin"))
			}
		}
	}
	return dirs
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	if runtime.GOOS != "windows" && fi.Mode()&0o111 == 0 {
		return errors.New("is not executable")
	}
	return nil
}

// CLIModuleVersion reads the module version a `go install`ed binary was
// built from ("v1.5.1"); it is empty for binaries without Go build info.
func CLIModuleVersion(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil || info.Main.Path != "github.com/temporalio/cli" {
		return ""
	}
	return info.Main.Version
}

// Start launches the dev server and returns once it answers for the
// namespace. It gives up when ctx ends (or after 60 s if ctx has no
// deadline), stopping the child and quoting the end of its log.
func Start(ctx context.Context, opts Options) (*Server, error) {
	started := time.Now()
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cli, err := FindCLI(opts.CLIPath)
	if err != nil {
		return nil, err
	}
	if v := CLIModuleVersion(cli); v != "" && v != "v"+CLIVersion {
		logger.Warn("temporal CLI version differs from the tested one", "path", cli, "version", v, "tested", "v"+CLIVersion)
	}
	if opts.DataDir == "" {
		return nil, errors.New("temporaldev: DataDir is required (the dev server keeps its database there)")
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: data dir: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("temporaldev: create data dir: %w", err)
	}
	lock := opts.Lock
	release := func() {}
	if lock == nil {
		if lock, err = LockDataDir(ctx, dataDir, LockOptions{Wait: opts.LockWait, Logger: logger}); err != nil {
			return nil, err
		}
		release = lock.Release
	} else if lock.Dir() != dataDir {
		return nil, fmt.Errorf("temporaldev: the lock given is for %s, not the data dir %s", lock.Dir(), dataDir)
	}
	ok := false
	defer func() {
		if !ok {
			release()
		}
	}()

	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	namespace := opts.Namespace
	if namespace == "" {
		namespace = "default"
	}
	var ports startPorts
	if err := ports.choose(host, opts, logger, false); err != nil {
		return nil, err
	}

	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	busy, died := 0, 0
	for {
		s := &Server{
			addr:      net.JoinHostPort(dialHost(host), strconv.Itoa(ports.frontend)),
			namespace: namespace,
			dataDir:   dataDir,
			logPath:   filepath.Join(dataDir, LogFileName),
			logger:    logger,
			release:   release,
			done:      make(chan struct{}),
			stopping:  make(chan struct{}),
		}
		if ports.ui != 0 {
			s.uiAddr = net.JoinHostPort(dialHost(host), strconv.Itoa(ports.ui))
		}
		err := s.launch(ctx, cli, startArgs(host, dataDir, namespace, ports, opts), lock)
		if err == nil {
			if err = s.setRetention(ctx, opts.Retention); err != nil {
				stopErr := s.stopChild()
				return nil, errors.Join(err, stopErr)
			}
		}
		if err == nil {
			ok = true
			logger.Info("temporal dev server ready", "address", s.addr, "ui", s.UIURL(), "namespace", namespace,
				"pid", s.pid, "db", filepath.Join(dataDir, DBFileName), "log", s.logPath, "took", time.Since(started).Round(time.Millisecond))
			go s.watch()
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		var delay time.Duration
		switch {
		case s.databaseBusy():
			if busy++; busy == busyAttempts {
				return nil, fmt.Errorf("temporaldev: the dev server's database %s stayed busy (SQLITE_BUSY) through %d starts over %s: another process still has it open (`fuser %s` names it); stop that process and start again",
					filepath.Join(dataDir, DBFileName), busy, time.Since(started).Round(time.Second), filepath.Join(dataDir, DBFileName))
			}
			logger.Warn("the dev server found its database busy (another process still has it open); starting it again",
				"db", filepath.Join(dataDir, DBFileName), "attempt", busy, "of", busyAttempts)
			delay = busyRetryDelay
		case errors.Is(err, errExited) || errors.Is(err, errPortTaken):
			if opts.Port != 0 && s.portTaken(opts.Port) {
				// The port the caller chose is someone else's: starting again cannot help.
				return nil, err
			}
			if died++; died == diedAttempts {
				return nil, fmt.Errorf("temporaldev: the dev server died while starting, %d times in a row: %w", died, err)
			}
			if err := ports.choose(host, opts, logger, true); err != nil {
				return nil, err
			}
			logger.Warn("the dev server died while starting; starting it again on fresh ports",
				"cause", s.failureLine(), "attempt", died, "of", diedAttempts, "port", ports.frontend, "ui_port", ports.ui)
			delay = diedRetryDelay
		default:
			return nil, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		}
	}
}

// startPorts are the ports one start binds; those Start chose itself are
// chosen again for a retry.
type startPorts struct{ frontend, ui int }

func (p *startPorts) choose(host string, opts Options, logger *slog.Logger, retry bool) error {
	var err error
	if opts.Port == 0 {
		if p.frontend, err = freePort(host); err != nil {
			return err
		}
	} else {
		p.frontend = opts.Port
	}
	switch {
	case opts.Headless:
		p.ui = 0
	case opts.UIPort == 0 || (opts.UIPortPreferred && retry):
		p.ui, err = freePort(host)
	case opts.UIPortPreferred && !portFree(host, opts.UIPort):
		logger.Info("the preferred Temporal Web UI port is taken; the Web UI gets another free port", "port", opts.UIPort)
		p.ui, err = freePort(host)
	default:
		p.ui = opts.UIPort
	}
	return err
}

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

// launch spawns one dev server process and waits until it is healthy; on
// failure the process is stopped and the error quotes its log.
func (s *Server) launch(ctx context.Context, cli string, args []string, lock *Lock) error {
	logFile, err := openLog(s.logPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(logFile, "\n=== %s: %s %s\n", time.Now().Format(time.RFC3339), cli, strings.Join(args, " "))

	cmd := exec.Command(cli, args...)
	cmd.Dir = s.dataDir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = childProcAttr()
	// The child holds the data directory's lock as long as it runs, even
	// after we are gone.
	cmd.ExtraFiles = []*os.File{lock.f}
	if err := s.spawn(cmd, logFile); err != nil {
		return fmt.Errorf("temporaldev: start %s: %w", cli, err)
	}
	if err := writeChildRecord(s.dataDir, s.pid, cmd.Args); err != nil {
		s.logger.Warn("temporaldev: cannot record the dev server's PID; a later start cannot recognise it as ours", "err", err)
	}
	if err := s.waitHealthy(ctx); err != nil {
		stopErr := s.stopChild()
		return errors.Join(fmt.Errorf("temporaldev: dev server on %s did not become ready: %w%s", s.addr, err, s.logExcerpt()), stopErr)
	}
	return nil
}

// databaseBusy says whether this start's output shows SQLite's busy error.
func (s *Server) databaseBusy() bool {
	out := s.startLog()
	return strings.Contains(out, "SQLITE_BUSY") || strings.Contains(out, "database is locked")
}

// spawn starts the child on a goroutine locked to its OS thread for the
// child's whole life: Linux delivers the parent-death signal when the
// forking thread exits, not the process, so that thread must not go away
// while the child runs.
func (s *Server) spawn(cmd *exec.Cmd, logFile *os.File) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked: when this goroutine returns the runtime
		// retires the thread, which by then has no child left to signal.
		if err := cmd.Start(); err != nil {
			started <- err
			logFile.Close()
			return
		}
		s.pid = cmd.Process.Pid
		started <- nil
		err := cmd.Wait()
		logFile.Close()
		removeChildRecord(s.dataDir, s.pid)
		s.waitErr = err
		close(s.done)
	}()
	return <-started
}

// watch reports an exit nobody asked for, so an operator sees why turns
// stopped making progress.
func (s *Server) watch() {
	select {
	case <-s.stopping:
	case <-s.done:
		select {
		case <-s.stopping:
		default:
			s.logger.Error("temporal dev server exited unexpectedly", "pid", s.pid, "err", s.waitErr, "log", s.logPath)
		}
	}
}

func (s *Server) waitHealthy(ctx context.Context) error {
	nop := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var lastErr error
	for polls := 0; ; polls++ {
		select {
		case <-s.done:
			return fmt.Errorf("%w: %v", errExited, s.waitErr)
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("%w (last check: %v)", ctx.Err(), lastErr)
			}
			return ctx.Err()
		default:
		}
		if lastErr = s.check(ctx, nop); lastErr == nil {
			return nil
		}
		// The log is read every few polls only: it is the rare case, and a file read.
		if polls%8 == 7 && strings.Contains(s.startLog(), "address already in use") {
			return errPortTaken
		}
		select {
		case <-time.After(25 * time.Millisecond):
		case <-s.done:
		case <-ctx.Done():
		}
	}
}

// check passes once the frontend answers a health check and describes the
// namespace, and the UI (if any) answers HTTP.
func (s *Server) check(ctx context.Context, logger sdklog.Logger) error {
	conn, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return err
	}
	conn.Close()
	attempt, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := client.DialContext(attempt, client.Options{HostPort: s.addr, Namespace: s.namespace, Logger: logger})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.CheckHealth(attempt, &client.CheckHealthRequest{}); err != nil {
		return err
	}
	nc, err := client.NewNamespaceClient(client.Options{HostPort: s.addr, Logger: logger})
	if err != nil {
		return err
	}
	defer nc.Close()
	desc, err := nc.Describe(attempt, s.namespace)
	if err != nil {
		return err
	}
	if st := desc.GetNamespaceInfo().GetState(); st != enums.NAMESPACE_STATE_REGISTERED {
		return fmt.Errorf("namespace %s is %s", s.namespace, st)
	}
	if s.uiAddr != "" {
		req, _ := http.NewRequestWithContext(attempt, http.MethodGet, s.UIURL(), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("web UI: %w", err)
		}
		resp.Body.Close()
	}
	return nil
}

// setRetention sets the namespace's retention of closed workflows when it differs from want
// (0: DefaultRetention).
func (s *Server) setRetention(ctx context.Context, want time.Duration) error {
	if want <= 0 {
		want = DefaultRetention
	}
	nop := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	nc, err := client.NewNamespaceClient(client.Options{HostPort: s.addr, Logger: nop})
	if err != nil {
		return fmt.Errorf("temporaldev: setting the retention: %w", err)
	}
	defer nc.Close()
	desc, err := nc.Describe(ctx, s.namespace)
	if err != nil {
		return fmt.Errorf("temporaldev: setting the retention: %w", err)
	}
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() == want {
		return nil
	}
	err = nc.Update(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: s.namespace,
		Config:    &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(want)},
	})
	if err != nil {
		return fmt.Errorf("temporaldev: setting the retention of namespace %s to %s: %w", s.namespace, want, err)
	}
	s.logger.Info("temporal dev server: retention of closed workflows set", "namespace", s.namespace, "retention", want)
	return nil
}

// Address is the gRPC frontend as host:port, for client.Options.HostPort.
func (s *Server) Address() string { return s.addr }

// UIAddress is the Web UI as host:port; empty when headless.
func (s *Server) UIAddress() string { return s.uiAddr }

// UIURL is the Web UI's URL; empty when headless.
func (s *Server) UIURL() string {
	if s.uiAddr == "" {
		return ""
	}
	return "http://" + s.uiAddr
}

// Namespace is the namespace checked at start.
func (s *Server) Namespace() string { return s.namespace }

// PID is the child's process ID (also its process group ID).
func (s *Server) PID() int { return s.pid }

// LogPath is the file the server's output is appended to.
func (s *Server) LogPath() string { return s.logPath }

// Done is closed when the child has exited, whether stopped or crashed.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is the child's exit error once Done is closed (nil before, and for a
// clean exit).
func (s *Server) Err() error {
	select {
	case <-s.done:
		return s.waitErr
	default:
		return nil
	}
}

// Stop sends SIGTERM to the child's process group, waits up to 10 s, then
// SIGKILLs the group. It is idempotent and safe for concurrent use; later
// calls return the first call's result.
func (s *Server) Stop() error {
	err := s.stopChild()
	s.release()
	return err
}

// stopChild stops the process but keeps the lock, so that Start can try
// again while holding it.
func (s *Server) stopChild() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		select {
		case <-s.done:
			return
		default:
		}
		// Signal only while the child is unreaped: its PID, and so its
		// group ID, cannot have been reused yet.
		if err := terminateGroup(s.pid); err != nil && !processGone(err) {
			s.logger.Warn("temporal dev server: SIGTERM failed", "pid", s.pid, "err", err)
		}
		select {
		case <-s.done:
			s.logger.Info("temporal dev server stopped", "pid", s.pid)
			return
		case <-time.After(stopGrace):
		}
		s.logger.Warn("temporal dev server ignored SIGTERM; killing it", "pid", s.pid)
		if err := killGroup(s.pid); err != nil && !processGone(err) {
			s.stopErr = fmt.Errorf("temporaldev: kill process group %d: %w", s.pid, err)
		}
		select {
		case <-s.done:
		case <-time.After(killWait):
			s.stopErr = errors.Join(s.stopErr, fmt.Errorf("temporaldev: process %d still running after SIGKILL", s.pid))
		}
	})
	return s.stopErr
}

// startLog is the output of the latest start: the log is appended to across
// starts.
func (s *Server) startLog() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	if i := strings.LastIndex(string(b), "\n=== "); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// logExcerpt quotes the latest start's output for an error: its first lines,
// where a Go panic puts its message, and its last ones, where the stack ends.
func (s *Server) logExcerpt() string {
	b := strings.TrimSpace(s.startLog())
	if b == "" {
		return ""
	}
	const headMax, tailMax = 1500, 2000
	if len(b) <= headMax+tailMax {
		return fmt.Sprintf("\n--- end of %s (the whole output of this start) ---\n%s", s.logPath, b)
	}
	head, tail := b[:headMax], b[len(b)-tailMax:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return fmt.Sprintf("\n--- first lines of this start's output, from %s ---\n%s\n[… %d bytes left out …]\n--- end of %s ---\n%s",
		s.logPath, head, len(b)-len(head)-len(tail), s.logPath, tail)
}

// portTaken says whether the latest start's output names port as taken.
func (s *Server) portTaken(port int) bool {
	for _, l := range strings.Split(s.startLog(), "\n") {
		if strings.Contains(l, "address already in use") && strings.Contains(l, ":"+strconv.Itoa(port)+":") {
			return true
		}
	}
	return false
}

// failureLine is the one line of the latest start's output that best says
// why it failed (a panic's message, a bind error), for a one-line log.
func (s *Server) failureLine() string {
	lines := strings.Split(s.startLog(), "\n")
	for _, marker := range []string{"panic:", "address already in use", "fatal", "error"} {
		for _, l := range lines {
			if !strings.HasPrefix(l, "=== ") && strings.Contains(strings.ToLower(l), marker) {
				return truncateLine(strings.TrimSpace(l))
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "=== ") {
			return truncateLine(l)
		}
	}
	return ""
}

func truncateLine(l string) string {
	const max = 300
	if len(l) > max {
		return l[:max] + "…"
	}
	return l
}

func openLog(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: open log: %w", err)
	}
	return f, nil
}

// dialHost turns a wildcard bind address into one a client can dial.
func dialHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			return "127.0.0.1"
		}
		return "::1"
	}
	return host
}

func portFree(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(dialHost(host), strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(dialHost(host), "0"))
	if err != nil {
		return 0, fmt.Errorf("temporaldev: find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
