package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/activities"
	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/credentials"
	"github.com/gns3-copilot/gns3-copilot/gns3"
	"github.com/gns3-copilot/gns3-copilot/livetopo"
	"github.com/gns3-copilot/gns3-copilot/llm"
	"github.com/gns3-copilot/gns3-copilot/mcp"
	"github.com/gns3-copilot/gns3-copilot/metrics"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/quota"
	"github.com/gns3-copilot/gns3-copilot/relay"
	"github.com/gns3-copilot/gns3-copilot/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/worker"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Running is a started service.
type Running struct {
	log          *slog.Logger
	listener     net.Listener
	http         *http.Server
	metricsLn    net.Listener
	metricsHTTP  *http.Server
	pprofHTTP    *http.Server
	metrics      *metrics.Metrics
	worker       sdkworker.Worker
	temporal     client.Client
	closers      []func() error
	temporalAddr string
	uiAddr       string
	proxying     bool

	// lock holds the data directory while this process (or its dev server) uses it.
	lock *temporaldev.Lock
	// devMu guards dev, which the supervisor replaces when the child dies.
	devMu           sync.Mutex
	dev             *temporaldev.Server
	stopSupervising context.CancelFunc
	supervised      chan struct{} // closed when the supervisor has returned
	fatal           chan error    // the supervisor gave up: the process should exit
}

// Addr is where the API listens ("" for a worker).
func (r *Running) Addr() string {
	if r.listener == nil {
		return ""
	}
	return r.listener.Addr().String()
}

// MetricsAddr is where /metrics is served apart from the API ("" when it is on the API).
func (r *Running) MetricsAddr() string {
	if r.metricsLn == nil {
		return ""
	}
	return r.metricsLn.Addr().String()
}

// Metrics is the process's metrics registry.
func (r *Running) Metrics() *metrics.Metrics { return r.metrics }

// Temporal is the process's Temporal client.
func (r *Running) Temporal() client.Client { return r.temporal }

// Run starts the service and stops it when ctx ends.
func Run(ctx context.Context, role Role, cfg Config) error {
	r, err := Start(ctx, role, cfg)
	if err != nil {
		return err
	}
	switch {
	case r.listener != nil && r.proxying:
		fmt.Printf("gns3-copilot: GNS3 web UI with the copilot on http://%s/ (GNS3 at %s), the copilot's own page on http://%s%s\n",
			r.Addr(), cfg.GNS3URL, r.Addr(), api.CopilotPagePath)
	case r.listener != nil:
		fmt.Printf("gns3-copilot: API and chat page on http://%s/\n", r.Addr())
	}
	if r.metricsLn != nil {
		fmt.Printf("gns3-copilot: metrics on http://%s/metrics\n", r.MetricsAddr())
	}
	fmt.Printf("gns3-copilot: Temporal at %s", r.temporalAddr)
	if r.uiAddr != "" {
		fmt.Printf(", its Web UI on http://%s/", r.uiAddr)
	}
	fmt.Println()
	if r.DevServerPID() != 0 {
		// The dev server's own log says "localhost"; this is what it really binds.
		fmt.Printf("gns3-copilot: the Temporal dev server (pid %d) binds 127.0.0.1 only: gRPC on %s", r.DevServerPID(), r.temporalAddr)
		if r.uiAddr != "" {
			fmt.Printf(", Web UI on %s", r.uiAddr)
		}
		fmt.Println()
	}
	select {
	case <-ctx.Done():
	case err := <-r.fatal:
		fmt.Println("gns3-copilot: stopping:", err)
		return errors.Join(err, r.Stop())
	}
	fmt.Println("gns3-copilot: stopping")
	return r.Stop()
}

// Start builds and starts everything the role needs. On error, whatever was started is stopped.
func Start(ctx context.Context, role Role, cfg Config) (_ *Running, err error) {
	logOut := cfg.LogOutput
	if logOut == nil {
		logOut = os.Stderr
	}
	log, err := newLogger(logOut, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, err
	}
	r := &Running{log: log, metrics: metrics.New()}
	defer func() {
		if err != nil {
			_ = r.Stop()
		}
	}()
	if role != RoleServe && cfg.TemporalAddress == "" {
		return nil, errors.New("--temporal-address is required for `api` and `worker`: both halves must reach the same Temporal cluster")
	}
	if role != RoleServe && cfg.RedisURL == "" {
		// Split halves share the event log and the turn credentials only through Redis: a worker
		// on an in-process log would stream to nobody and look for credentials the API never
		// stored where it looks.
		return nil, errors.New("--redis-url is required for `api` and `worker`: the two halves share turn events and credentials through Redis")
	}

	if role == RoleServe && (cfg.TemporalAddress == "" || !models.IsPostgres(cfg.DatabaseURL)) {
		// Before the database is opened: a crashed predecessor's dev server may still be
		// writing, and two processes must never share the dev server's database.
		if r.lock, err = temporaldev.LockDataDir(ctx, cfg.DataDir, temporaldev.LockOptions{Logger: log}); err != nil {
			return nil, err
		}
	}

	db, err := models.Open(cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, sqlDB.Close)
	if err := models.Migrate(db); err != nil {
		return nil, err
	}

	key, err := credentials.LoadOrCreateKey(cfg.DataDir, cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	sealer, err := credentials.NewSealer(key)
	if err != nil {
		return nil, err
	}

	var rdb *redis.Client
	if cfg.RedisURL != "" {
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %w", err)
		}
		if !strings.Contains(cfg.RedisURL, "pool_size=") {
			// Every open SSE stream blocks one connection in XREAD; the default pool (10 per
			// CPU) would queue browsers behind each other.
			opt.PoolSize = 256
		}
		rdb = redis.NewClient(opt)
		r.closers = append(r.closers, rdb.Close)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = rdb.Ping(pctx).Err()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("Redis at %s does not answer: %w", opt.Addr, err)
		}
	}
	events, creds, err := eventsAndCredentials(db, rdb, sealer, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if c, ok := events.(interface{ Close() error }); ok {
		r.closers = append(r.closers, c.Close)
	}

	r.temporalAddr = cfg.TemporalAddress
	if r.temporalAddr == "" {
		if err := r.startDevServer(ctx, cfg, log); err != nil {
			return nil, err
		}
	}
	copts := client.Options{
		HostPort:  r.temporalAddr,
		Namespace: cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(withTurnIDs(log.Handler())).With("component", "temporal")),
		// The SDK's client and worker metrics join the product's in one registry.
		MetricsHandler: r.metrics.Temporal(),
	}
	if r.dev != nil {
		// Our own dev server comes back on the same address within a second or two when
		// it dies; reconnect that soon instead of the SDK's backoff of up to 10 s.
		cp := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 5 * time.Second}
		cp.Backoff.BaseDelay, cp.Backoff.MaxDelay = 100*time.Millisecond, time.Second
		copts.ConnectionOptions.DialOptions = []grpc.DialOption{grpc.WithConnectParams(cp)}
		// It listens on 127.0.0.1: compressing every request (the SDK's default) only costs CPU
		// on both sides of the loopback, on the path of every turn's start and activity.
		copts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	r.temporal, err = client.DialContext(ctx, copts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", r.temporalAddr, err)
	}

	gns3Server := gns3.NewServer(cfg.GNS3URL, cfg.GNS3Timeout).Observe(r.metrics.GNS3Request)
	r.metrics.ConfigureLLMLabels(providerLabels(), []string{cfg.LLMModel})
	// One live topology per process, shared by its API and worker (see package livetopo for why
	// not one shared through Redis).
	var live *livetopo.Hub
	if !cfg.NoLiveTopology {
		live = livetopo.New(gns3Server, livetopo.Options{Logger: log.With("component", "livetopo"), AccessTTL: cfg.checkCacheTTL()})
		r.closers = append(r.closers, func() error { live.Close(); return nil })
		r.metrics.WatchLiveTopology(func() metrics.LiveTopologyStats { return metrics.LiveTopologyStats(live.Stats()) })
	}
	repo := models.NewChatRepository(db)
	// The repositories and the turn starter the worker and the API share.
	approvals, configJobs, deviceRecords := models.ApprovalRepository{DB: db}, models.ConfigJobRepository{DB: db}, models.DeviceRepository{DB: db}
	exercises, mcpCalls := models.ExerciseRepository{DB: db}, models.MCPCallRepository{DB: db}
	turns := api.TemporalTurns{Client: r.temporal, TaskQueue: workflows.TaskQueue}
	r.metrics.WatchApprovals(approvalCounts(approvals))
	configured, err := buildConfiguredParts(db, sealer, rdb, cfg, log)
	if err != nil {
		return nil, err
	}

	if role != RoleAPI {
		acts := &activities.Activities{Repo: repo, Events: events, LLM: configured.llmLoader, Credentials: creds,
			GNS3: gns3Server, Tools: configured.tools, Logger: log, EventTTL: cfg.EventTTL,
			Devices: configured.devices, DeviceRecords: deviceRecords, LLMClient: llm.NewClient(nil, configured.untrustedHTTP),
			Skills: configured.skills, Approvals: approvals, ConfigJobs: configJobs, Metrics: r.metrics,
			Marks: &models.TopologyMarks{DB: db}, MCPCalls: mcpCalls, Exercises: exercises,
			ExerciseStarter: turns, ExerciseTTL: cfg.ExerciseTTL}
		if role == RoleWorker {
			r.closers = append(r.closers, followSkillReloads(events, configured.skills, log, nil))
		}
		if live != nil {
			acts.Live = live
		}
		r.worker = worker.New(r.temporal, acts, worker.Options{MaxConcurrentActivities: cfg.MaxConcurrentActivities})
		if err := r.worker.Start(); err != nil {
			return nil, fmt.Errorf("starting the worker: %w", err)
		}
	}
	metricsAddr := cfg.MetricsListen
	if role == RoleWorker && metricsAddr == "" {
		metricsAddr = cfg.Listen // a worker has no API to serve /metrics on
	}
	if metricsAddr != "" {
		if err := r.serveMetrics(metricsAddr); err != nil {
			return nil, err
		}
	}
	if cfg.PprofListen != "" {
		if err := r.servePprof(cfg.PprofListen); err != nil {
			return nil, err
		}
	}
	if role != RoleWorker {
		var metricsOnAPI http.Handler
		if metricsAddr == "" {
			metricsOnAPI = r.metrics.Handler()
		}
		routes := append(configured.routes, api.ApprovalRoutes(approvals, configJobs, deviceRecords, turns))
		mcpDeps := mcp.Deps{Temporal: r.temporal, TaskQueue: workflows.TaskQueue, Calls: mcpCalls, Approvals: approvals,
			Events: events, Credentials: creds, Tools: configured.tools, LLM: configured.llmChooser, DefaultMode: cfg.CopilotMode, Approval: cfg.Approval,
			ApprovalTimeout: cfg.ApprovalTimeout, DeviceConcurrency: cfg.DeviceConcurrency, MaxCallsPerUser: cfg.MCPMaxCallsPerUser,
			Logger: log}
		if live != nil {
			mcpDeps.Live = live
		}
		routes = append(routes, mcp.Routes(mcpDeps))
		deps := api.Deps{Repo: repo, GNS3: gns3Server, Events: events,
			Turns:       turns,
			Credentials: creds, LLM: configured.llmChooser, LLMConfigs: configured.llmConfigs, Logger: log, Web: configured.web,
			Routes: routes, Metrics: r.metrics, MetricsHandler: metricsOnAPI,
			Heartbeat: cfg.Heartbeat, DeviceConcurrency: cfg.DeviceConcurrency, CORSOrigins: cfg.CORSOrigins,
			Limits: turnLimits(cfg, rdb), Approval: cfg.Approval, ApprovalTimeout: cfg.ApprovalTimeout, Live: liveAPI(live), UserCacheTTL: cfg.checkCacheTTL(),
			Exercises: &api.Exercises{Repo: exercises, Control: turns}, Approvals: approvals}
		if cfg.ProxyGNS3 {
			if deps.GNS3Proxy, err = api.NewGNS3Proxy(cfg.GNS3URL); err != nil {
				return nil, fmt.Errorf("--proxy-gns3: %w", err)
			}
			r.proxying = true
		}
		srv := api.New(deps)
		r.listener, err = net.Listen("tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("listening on %s: %w", cfg.Listen, err)
		}
		r.http = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := r.http.Serve(r.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("HTTP server stopped", "error", err)
			}
		}()
	}
	// A class's burst of turns must not leave the process holding its peak memory (README: Load).
	memCtx, stopMem := context.WithCancel(context.Background())
	memDone := make(chan struct{})
	go func() {
		defer close(memDone)
		returnIdleMemory(memCtx, idleMemoryEvery, idleMemoryThreshold)
	}()
	r.closers = append(r.closers, func() error { stopMem(); <-memDone; return nil })
	return r, nil
}

// serveMetrics serves /metrics on an address of its own.
func (r *Running) serveMetrics(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", r.metrics.Handler())
	r.metricsLn = ln
	r.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.metricsHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("metrics server stopped", "error", err)
		}
	}()
	return nil
}

// servePprof serves Go's profiles on an address of their own, never on the API's, so that
// turning them on cannot expose them to the API's users.
func (r *Running) servePprof(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for pprof on %s: %w", addr, err)
	}
	// Where goroutines wait (a lock, a channel, the one database connection) matters as much
	// as where the CPU goes when latency is the question; sampling it costs little.
	runtime.SetBlockProfileRate(int((100 * time.Microsecond).Nanoseconds()))
	runtime.SetMutexProfileFraction(100)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	r.pprofHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.pprofHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("pprof server stopped", "error", err)
		}
	}()
	return nil
}

func (r *Running) startDevServer(ctx context.Context, cfg Config, log *slog.Logger) error {
	cli, err := temporaldev.FindCLI(cfg.TemporalCLI)
	if err != nil {
		return err
	}
	// Without --temporal-ui-port the Web UI wants 8233, the port Temporal's docs name, and takes
	// another free one when 8233 is taken.
	uiPort, uiPreferred, headless := cfg.TemporalUIPort, false, false
	switch {
	case uiPort < 0:
		uiPort, headless = 0, true
	case uiPort == 0:
		uiPort, uiPreferred = DefaultUIPort, true
	}
	opts := temporaldev.Options{
		CLIPath: cli, DataDir: cfg.DataDir, Host: "127.0.0.1", Port: cfg.TemporalPort, UIPort: uiPort,
		UIPortPreferred: uiPreferred, Headless: headless, Namespace: cfg.TemporalNamespace,
		Logger: log.With("component", "temporal-dev"), Lock: r.lock,
	}
	dev, err := temporaldev.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("starting the Temporal dev server: %w", err)
	}
	r.dev = dev
	r.temporalAddr = dev.Address()
	if !headless {
		r.uiAddr = dev.UIAddress()
	}
	// A restart binds the same ports, so the client, the worker and bookmarks of the UI keep working.
	opts.Port = portOf(dev.Address())
	opts.UIPort = portOf(dev.UIAddress())
	sctx, cancel := context.WithCancel(context.Background())
	r.stopSupervising, r.supervised, r.fatal = cancel, make(chan struct{}), make(chan error, 1)
	go r.supervise(sctx, opts, log)
	return nil
}

// Supervision bounds: a dev server that cannot be started again this many times in a row
// makes the process exit (a supervisor such as systemd then restarts all of it).
const (
	devRestartAttempts = 5
	devRestartBackoff  = 2 * time.Second
)

// supervise starts the dev server again, on the same database and ports, whenever it dies
// while this process runs. The Temporal client and the worker reconnect by themselves to
// the same address; turns in flight go on from their last recorded step.
func (r *Running) supervise(ctx context.Context, opts temporaldev.Options, log *slog.Logger) {
	defer close(r.supervised)
	for {
		dev := r.devServer()
		select {
		case <-ctx.Done():
			return
		case <-dev.Done():
		}
		if ctx.Err() != nil {
			return
		}
		log.Error("the Temporal dev server died; starting it again on the same database",
			"pid", dev.PID(), "err", dev.Err(), "log", dev.LogPath())
		_ = dev.Stop() // already gone: this only marks it stopped
		began := time.Now()
		for attempt := 1; ; attempt++ {
			next, err := temporaldev.Start(ctx, opts)
			if err == nil {
				r.devMu.Lock()
				r.dev = next
				r.devMu.Unlock()
				log.Info("the Temporal dev server is back", "pid", next.PID(), "address", next.Address(),
					"took", time.Since(began).Round(time.Millisecond))
				break
			}
			if ctx.Err() != nil {
				return
			}
			if attempt == devRestartAttempts {
				r.fatal <- fmt.Errorf("the Temporal dev server died and could not be started again (%d attempts): %w", attempt, err)
				return
			}
			log.Error("starting the Temporal dev server again failed; trying again", "attempt", attempt, "err", err)
			select {
			case <-time.After(devRestartBackoff):
			case <-ctx.Done():
				return
			}
		}
	}
}

func (r *Running) devServer() *temporaldev.Server {
	r.devMu.Lock()
	defer r.devMu.Unlock()
	return r.dev
}

// DevServerPID is the PID of the Temporal dev server this process supervises (0 when it
// uses a Temporal it was given).
func (r *Running) DevServerPID() int {
	if dev := r.devServer(); dev != nil {
		return dev.PID()
	}
	return 0
}

// DefaultUIPort is where the dev server's Web UI goes when that port is free, so a bookmark
// keeps working across restarts (Temporal's own default).
const DefaultUIPort = 8233

func portOf(hostPort string) int {
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// eventsAndCredentials picks Redis when configured (several processes share it), and otherwise
// database-backed credentials with the event log in its own SQLite file in the data directory:
// both outlive a killed process, so a restarted `serve` finishes the turn and a client that
// rejoins replays what it missed. (The in-process relay.Memory would die with the process.) The
// log has a file of its own so its many small writes do not queue behind the chat tables'.
func eventsAndCredentials(db *gorm.DB, rdb *redis.Client, sealer *credentials.Sealer, dataDir string) (relay.Log, credentials.Store, error) {
	if rdb != nil {
		return relay.NewRedis(rdb, relay.RedisOptions{}), credentials.NewRedisStore(rdb, sealer, "gns3copilot:cred"), nil
	}
	store, err := credentials.NewDBStore(db, sealer)
	if err != nil {
		return nil, nil, err
	}
	if dataDir == "" {
		return nil, nil, errors.New("--data-dir is required without --redis-url: the event log is kept there")
	}
	events, err := relay.OpenSQLite(filepath.Join(dataDir, EventsFileName), relay.SQLiteOptions{})
	if err != nil {
		return nil, nil, err
	}
	return events, store, nil
}

// turnLimits builds the per-user limits; the rate limit lives in Redis when the API runs in
// several processes, so a user cannot multiply it by reaching several of them.
func turnLimits(cfg Config, rdb *redis.Client) api.TurnLimits {
	l := api.TurnLimits{MaxRunning: cfg.MaxTurnsPerUser, TurnsPerMinute: cfg.TurnsPerMinute,
		DailyTokens: cfg.DailyTokenBudget, IncludeSuperadmins: cfg.LimitSuperadmins}
	switch {
	case cfg.TurnsPerMinute <= 0:
	case rdb != nil:
		l.PerMinute = quota.NewRedis(rdb, "gns3copilot:turnrate:", cfg.TurnsPerMinute)
	default:
		l.PerMinute = quota.NewMemory(cfg.TurnsPerMinute, nil)
	}
	return l
}

// EventsFileName is the event log's file in the data directory when there is no Redis.
const EventsFileName = "events.db"

// Stop shuts the API down first (no new turns), then the worker, then Temporal.
func (r *Running) Stop() error {
	var errs []error
	if r.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// Streams are long-lived: give them a moment, then close them; turns go on in Temporal.
		if err := r.http.Shutdown(ctx); err != nil {
			_ = r.http.Close()
		}
		cancel()
		r.http = nil
	}
	if r.metricsHTTP != nil {
		_ = r.metricsHTTP.Close()
		r.metricsHTTP = nil
	}
	if r.pprofHTTP != nil {
		_ = r.pprofHTTP.Close()
		r.pprofHTTP = nil
	}
	if r.worker != nil {
		r.worker.Stop()
		r.worker = nil
	}
	if r.temporal != nil {
		r.temporal.Close()
		r.temporal = nil
	}
	if r.stopSupervising != nil {
		r.stopSupervising()
		<-r.supervised
		r.stopSupervising = nil
	}
	if dev := r.devServer(); dev != nil {
		if err := dev.Stop(); err != nil {
			errs = append(errs, err)
		}
		r.devMu.Lock()
		r.dev = nil
		r.devMu.Unlock()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	r.closers = nil
	if r.lock != nil {
		// Last: everything that used the data directory is closed.
		r.lock.Release()
		r.lock = nil
	}
	return errors.Join(errs...)
}

// newLogger writes to w in slog's text or JSON format.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("--log-format must be json or text, got %q", format)
	}
}

// liveAPI keeps a disabled live topology a nil interface, not an interface holding a nil hub.
func liveAPI(h *livetopo.Hub) api.LiveTopology {
	if h == nil {
		return nil
	}
	return h
}
