// Package temporaldev runs the Temporal CLI's development server
// (`temporal server start-dev`) as a supervised child process, so that
// `serve` and end-to-end tests need no Temporal running beforehand. Its
// state lives in a SQLite file in a data directory and survives restarts.
package temporaldev

import (
	"context"
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
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

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
	// MemoryLimit, above 0, is the dev server's soft Go memory limit in bytes, given to it as
	// GOMEMLIMIT (both the CLI and gns3-copilot-temporal are Go programs); 0 leaves the
	// environment it inherits as it is. It trades the burst's speed for its peak: see
	// docs/scale.md for what it costs.
	MemoryLimit int64
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
	// retention is the namespace's retention of closed workflows as the health check that
	// found the server ready read it, so that setRetention need not ask again.
	retention time.Duration

	done    chan struct{}
	waitErr error // set before done is closed

	stopOnce sync.Once
	stopErr  error
	stopping chan struct{}
}

// Start launches the dev server and returns once it answers for the
// namespace. It gives up when ctx ends (or after 60 s if ctx has no
// deadline), stopping the child and quoting the end of its log.
func Start(ctx context.Context, opts Options) (*Server, error) {
	st, err := prepareStart(ctx, opts)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			st.release()
		}
	}()
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	for {
		s, final, err := st.attempt(ctx)
		if err == nil {
			ok = true
			st.logger.Info("temporal dev server ready", "address", s.addr, "ui", s.UIURL(), "namespace", st.namespace,
				"pid", s.pid, "db", filepath.Join(st.dataDir, DBFileName), "log", s.logPath, "took", time.Since(st.started).Round(time.Millisecond))
			go s.watch()
			return s, nil
		}
		if final || ctx.Err() != nil {
			return nil, err
		}
		delay, err := st.retryAfter(s, err)
		if err != nil {
			return nil, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		}
	}
}

// starter is one Start: what every attempt shares (the CLI, the locked data dir, the ports) and
// how many attempts have failed, and why.
type starter struct {
	opts            Options
	started         time.Time
	logger          *slog.Logger
	cli             string
	dataDir         string
	lock            *Lock
	release         func() // the data dir's lock, when Start took it itself
	host, namespace string
	ports           startPorts
	busy, died      int
}

// prepareStart finds the CLI, makes and locks the data dir and chooses the ports.
func prepareStart(ctx context.Context, opts Options) (*starter, error) {
	st := &starter{opts: opts, started: time.Now(), logger: opts.Logger, host: opts.Host, namespace: opts.Namespace, release: func() {}}
	if st.logger == nil {
		st.logger = slog.Default()
	}
	var err error
	if st.cli, err = FindCLI(opts.CLIPath); err != nil {
		return nil, err
	}
	if v := CLIModuleVersion(st.cli); v != "" && v != "v"+CLIVersion {
		st.logger.Warn("temporal CLI version differs from the tested one", "path", st.cli, "version", v, "tested", "v"+CLIVersion)
	}
	if opts.DataDir == "" {
		return nil, errors.New("temporaldev: DataDir is required (the dev server keeps its database there)")
	}
	if st.dataDir, err = filepath.Abs(opts.DataDir); err != nil {
		return nil, fmt.Errorf("temporaldev: data dir: %w", err)
	}
	if err := os.MkdirAll(st.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("temporaldev: create data dir: %w", err)
	}
	st.lock = opts.Lock
	if st.lock == nil {
		if st.lock, err = LockDataDir(ctx, st.dataDir, LockOptions{Wait: opts.LockWait, Logger: st.logger}); err != nil {
			return nil, err
		}
		st.release = st.lock.Release
	} else if st.lock.Dir() != st.dataDir {
		return nil, fmt.Errorf("temporaldev: the lock given is for %s, not the data dir %s", st.lock.Dir(), st.dataDir)
	}
	if st.host == "" {
		st.host = "127.0.0.1"
	}
	if st.namespace == "" {
		st.namespace = "default"
	}
	if err := st.ports.choose(st.host, opts, st.logger, false); err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

// attempt starts the child once and waits for it to answer, then sets the namespace's
// retention; the Server is returned on failure too, for retryAfter to read its log. A server
// that started but refused the retention is stopped, and that failure is final.
func (st *starter) attempt(ctx context.Context) (s *Server, final bool, err error) {
	s = &Server{
		addr:      net.JoinHostPort(dialHost(st.host), strconv.Itoa(st.ports.frontend)),
		namespace: st.namespace,
		dataDir:   st.dataDir,
		logPath:   filepath.Join(st.dataDir, LogFileName),
		logger:    st.logger,
		release:   st.release,
		done:      make(chan struct{}),
		stopping:  make(chan struct{}),
	}
	if st.ports.ui != 0 {
		s.uiAddr = net.JoinHostPort(dialHost(st.host), strconv.Itoa(st.ports.ui))
	}
	if err := s.launch(ctx, st.cli, startArgs(st.host, st.dataDir, st.namespace, st.ports, st.opts), childEnv(st.opts), st.lock); err != nil {
		return s, false, err
	}
	if err := s.setRetention(ctx, st.opts.Retention); err != nil {
		return s, true, errors.Join(err, s.stopChild())
	}
	return s, false, nil
}

// retryAfter decides whether a failed attempt is worth another and after how long: a database
// another process still holds (a previous dev server going away) and a child that died while
// starting (a port taken meanwhile: fresh ports are chosen) are, a bounded number of times.
func (st *starter) retryAfter(s *Server, err error) (time.Duration, error) {
	db := filepath.Join(st.dataDir, DBFileName)
	switch {
	case s.databaseBusy():
		if st.busy++; st.busy == busyAttempts {
			return 0, fmt.Errorf("temporaldev: the dev server's database %s stayed busy (SQLITE_BUSY) through %d starts over %s: another process still has it open (`fuser %s` names it); stop that process and start again",
				db, st.busy, time.Since(st.started).Round(time.Second), db)
		}
		st.logger.Warn("the dev server found its database busy (another process still has it open); starting it again",
			"db", db, "attempt", st.busy, "of", busyAttempts)
		return busyRetryDelay, nil
	case errors.Is(err, errExited) || errors.Is(err, errPortTaken):
		if st.opts.Port != 0 && s.portTaken(st.opts.Port) {
			// The port the caller chose is someone else's: starting again cannot help.
			return 0, err
		}
		if st.died++; st.died == diedAttempts {
			return 0, fmt.Errorf("temporaldev: the dev server died while starting, %d times in a row: %w", st.died, err)
		}
		if err := st.ports.choose(st.host, st.opts, st.logger, true); err != nil {
			return 0, err
		}
		st.logger.Warn("the dev server died while starting; starting it again on fresh ports",
			"cause", s.failureLine(), "attempt", st.died, "of", diedAttempts, "port", st.ports.frontend, "ui_port", st.ports.ui)
		return diedRetryDelay, nil
	default:
		return 0, err
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

// launch spawns one dev server process and waits until it is healthy; on
// failure the process is stopped and the error quotes its log.
func (s *Server) launch(ctx context.Context, cli string, args, env []string, lock *Lock) error {
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
	cmd.Env = env
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
	s.retention = desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
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
