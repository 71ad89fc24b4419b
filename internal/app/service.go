package app

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
	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3proxy"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/memtrim"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/quota"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/mcp"
	"github.com/gns3-copilot/gns3-copilot/models"
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
	applyMemoryLimit(cfg.MemoryLimit)
	_ = memtrim.DeclineHugePages()
	r, err := Start(ctx, role, cfg)
	if err != nil {
		return err
	}
	// Initialisation and starting ran code all over the binary; most of it is not needed again.
	// One pass once started drops all of it (a pass before starting would only be repeated).
	memtrim.DropIdleCodePages()
	switch {
	case r.listener != nil && r.proxying:
		fmt.Printf("gns3-copilot: GNS3 web UI with the copilot on http://%s/ (GNS3 at %s), the copilot's own page on http://%s%s\n",
			r.Addr(), cfg.GNS3URL, r.Addr(), gns3proxy.CopilotPagePath)
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
	if err := checkRole(role, cfg); err != nil {
		return nil, err
	}
	if err := r.lockDataDir(ctx, role, cfg); err != nil {
		return nil, err
	}
	st, err := r.openStores(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.connectTemporal(ctx, cfg); err != nil {
		return nil, err
	}
	sh, err := r.buildShared(cfg, st)
	if err != nil {
		return nil, err
	}
	if role != RoleAPI {
		if err := r.startWorker(role, cfg, sh); err != nil {
			return nil, err
		}
	}
	metricsAddr, err := r.serveDiagnostics(role, cfg)
	if err != nil {
		return nil, err
	}
	if role != RoleWorker {
		if err := r.serveAPI(cfg, sh, metricsAddr == ""); err != nil {
			return nil, err
		}
	}
	r.keepReturningIdleMemory()
	return r, nil
}

// checkRole refuses a configuration the role cannot run with.
func checkRole(role Role, cfg Config) error {
	if role != RoleServe && cfg.TemporalAddress == "" {
		return errors.New("--temporal-address is required for `api` and `worker`: both halves must reach the same Temporal cluster")
	}
	if role != RoleServe && cfg.RedisURL == "" {
		// Split halves share the event log and the turn credentials only through Redis: a worker
		// on an in-process log would stream to nobody and look for credentials the API never
		// stored where it looks.
		return errors.New("--redis-url is required for `api` and `worker`: the two halves share turn events and credentials through Redis")
	}
	return nil
}

// lockDataDir holds the data directory when this process may run the dev server or SQLite on it.
func (r *Running) lockDataDir(ctx context.Context, role Role, cfg Config) (err error) {
	if role == RoleServe && (cfg.TemporalAddress == "" || !models.IsPostgres(cfg.DatabaseURL)) {
		// Before the database is opened: a crashed predecessor's dev server may still be
		// writing, and two processes must never share the dev server's database.
		r.lock, err = temporaldev.LockDataDir(ctx, cfg.DataDir, temporaldev.LockOptions{Logger: r.log})
	}
	return err
}

// stores are the process's storage: the database, Redis when configured, the event log and the
// credential store.
type stores struct {
	db     *gorm.DB
	rdb    *redis.Client
	sealer *credentials.Sealer
	events relay.Log
	creds  credentials.Store
}

// openStores opens and migrates the database, connects to Redis and picks the event log and the
// credential store.
func (r *Running) openStores(ctx context.Context, cfg Config) (st stores, err error) {
	if st.db, err = models.Open(cfg.DatabaseURL, cfg.DataDir); err != nil {
		return st, err
	}
	sqlDB, err := st.db.DB()
	if err != nil {
		return st, err
	}
	r.closers = append(r.closers, sqlDB.Close)
	if err := models.Migrate(st.db); err != nil {
		return st, err
	}
	key, err := credentials.LoadOrCreateKey(cfg.DataDir, cfg.SecretKey)
	if err != nil {
		return st, err
	}
	if st.sealer, err = credentials.NewSealer(key); err != nil {
		return st, err
	}
	if st.rdb, err = r.connectRedis(ctx, cfg.RedisURL); err != nil {
		return st, err
	}
	if st.events, st.creds, err = eventsAndCredentials(st.db, st.rdb, st.sealer, cfg.DataDir); err != nil {
		return st, err
	}
	if c, ok := st.events.(interface{ Close() error }); ok {
		r.closers = append(r.closers, c.Close)
	}
	return st, nil
}

// connectRedis connects to Redis at url and checks that it answers; nil without a URL.
func (r *Running) connectRedis(ctx context.Context, url string) (*redis.Client, error) {
	if url == "" {
		return nil, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %w", err)
	}
	if !strings.Contains(url, "pool_size=") {
		// Every open SSE stream blocks one connection in XREAD; the default pool (10 per
		// CPU) would queue browsers behind each other.
		opt.PoolSize = 256
	}
	rdb := redis.NewClient(opt)
	r.closers = append(r.closers, rdb.Close)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		return nil, fmt.Errorf("Redis at %s does not answer: %w", opt.Addr, err)
	}
	return rdb, nil
}

// connectTemporal dials the configured Temporal cluster, or starts the dev server first when
// none is configured.
func (r *Running) connectTemporal(ctx context.Context, cfg Config) (err error) {
	r.temporalAddr = cfg.TemporalAddress
	if r.temporalAddr == "" {
		if err := r.startDevServer(ctx, cfg, r.log); err != nil {
			return err
		}
	}
	copts := client.Options{
		HostPort:  r.temporalAddr,
		Namespace: cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(withTurnIDs(r.log.Handler())).With("component", "temporal")),
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
	if r.temporal, err = client.DialContext(ctx, copts); err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", r.temporalAddr, err)
	}
	return nil
}

// shared is what the worker and the API of one process share.
type shared struct {
	stores
	configuredParts
	gns3      *gns3.Server
	live      *livetopo.Hub // nil without the live topology
	repo      *models.ChatRepository
	approvals models.ApprovalRepository
	jobs      models.ConfigJobRepository
	records   models.DeviceRepository
	exercises models.ExerciseRepository
	mcpCalls  models.MCPCallRepository
	workflows durable.Temporal
}

// buildShared builds the repositories, the GNS3 server, the live topology, the Temporal client
// and the configured parts.
func (r *Running) buildShared(cfg Config, st stores) (*shared, error) {
	sh := &shared{stores: st, gns3: gns3.NewServer(cfg.GNS3URL, cfg.GNS3Timeout).Observe(r.metrics.GNS3Request),
		repo: models.NewChatRepository(st.db), approvals: models.ApprovalRepository{DB: st.db},
		jobs: models.ConfigJobRepository{DB: st.db}, records: models.DeviceRepository{DB: st.db},
		exercises: models.ExerciseRepository{DB: st.db}, mcpCalls: models.MCPCallRepository{DB: st.db},
		workflows: durable.Temporal{Client: r.temporal, TaskQueue: workflows.TaskQueue}}
	r.metrics.ConfigureLLMLabels(providerLabels(), []string{cfg.LLMModel})
	// One live topology per process, shared by its API and worker (see package livetopo for why
	// not one shared through Redis).
	if !cfg.NoLiveTopology {
		live := livetopo.New(sh.gns3, livetopo.Options{Logger: r.log.With("component", "livetopo"), AccessTTL: cfg.checkCacheTTL()})
		r.closers = append(r.closers, func() error { live.Close(); return nil })
		r.metrics.WatchLiveTopology(func() metrics.LiveTopologyStats { return metrics.LiveTopologyStats(live.Stats()) })
		sh.live = live
	}
	r.metrics.WatchApprovals(approvalCounts(sh.approvals))
	var err error
	sh.configuredParts, err = buildConfiguredParts(st.db, st.sealer, st.rdb, cfg, r.log)
	return sh, err
}

// startWorker starts the Temporal worker that runs the workflows and their activities.
func (r *Running) startWorker(role Role, cfg Config, sh *shared) error {
	acts := &activities.Activities{Repo: sh.repo, Events: sh.events, LLM: sh.llmLoader, Credentials: sh.creds,
		GNS3: sh.gns3, Tools: sh.tools, Logger: r.log, EventTTL: cfg.EventTTL,
		Devices: sh.devices, DeviceRecords: sh.records, LLMClient: llmClient(sh.untrustedHTTP, cfg.LLMIdleTimeout),
		Skills: sh.skills, Approvals: sh.approvals, ConfigJobs: sh.jobs, Metrics: r.metrics,
		Marks: &models.TopologyMarks{DB: sh.db}, MCPCalls: sh.mcpCalls, Exercises: sh.exercises,
		ExerciseStarter: sh.workflows, ExerciseTTL: cfg.ExerciseTTL, SavePoints: models.SavePointRepository{DB: sh.db}}
	if role == RoleWorker {
		r.closers = append(r.closers, followSkillReloads(sh.events, sh.skills, r.log, nil))
	}
	if sh.live != nil {
		acts.Live = sh.live
	}
	r.worker = worker.New(r.temporal, acts, worker.Options{MaxConcurrentActivities: cfg.MaxConcurrentActivities})
	if err := r.worker.Start(); err != nil {
		return fmt.Errorf("starting the worker: %w", err)
	}
	return nil
}

// serveDiagnostics serves /metrics and pprof on addresses of their own when configured; it
// returns the metrics' address ("" when the API serves them).
func (r *Running) serveDiagnostics(role Role, cfg Config) (metricsAddr string, err error) {
	metricsAddr = cfg.MetricsListen
	if role == RoleWorker && metricsAddr == "" {
		metricsAddr = cfg.Listen // a worker has no API to serve /metrics on
	}
	if metricsAddr != "" {
		if err := r.serveMetrics(metricsAddr); err != nil {
			return "", err
		}
	}
	if cfg.PprofListen != "" {
		if err := r.servePprof(cfg.PprofListen); err != nil {
			return "", err
		}
	}
	return metricsAddr, nil
}

// serveAPI builds the HTTP API with its front doors (chat, approvals, exercises, skills, MCP,
// the GNS3 proxy) and serves it; metricsOnAPI serves /metrics on it too.
func (r *Running) serveAPI(cfg Config, sh *shared, metricsOnAPI bool) (err error) {
	work := durable.Settings{Approval: cfg.Approval, ApprovalTimeout: cfg.ApprovalTimeout, DeviceConcurrency: cfg.DeviceConcurrency}
	mcpDeps := mcp.Deps{Workflows: sh.workflows, Calls: sh.mcpCalls, Approvals: sh.approvals,
		Events: sh.events, Credentials: sh.creds, Tools: sh.tools, LLM: sh.llmChooser, DefaultMode: cfg.CopilotMode,
		Work: work, MaxCallsPerUser: cfg.MCPMaxCallsPerUser, ElicitTimeout: cfg.MCPElicitTimeout, Logger: r.log}
	if sh.live != nil {
		mcpDeps.Live = sh.live
	}
	deps := api.Deps{Repo: sh.repo, GNS3: sh.gns3, Events: sh.events, Turns: sh.workflows,
		Credentials: sh.creds, LLM: sh.llmChooser, LLMConfigs: sh.llmConfigs, Logger: r.log, Web: sh.web,
		Metrics: r.metrics, Heartbeat: cfg.Heartbeat, CORSOrigins: cfg.CORSOrigins,
		Limits: turnLimits(cfg, sh.rdb), Work: work, Live: liveAPI(sh.live), UserCacheTTL: cfg.checkCacheTTL(),
		Exercises: &api.Exercises{Repo: sh.exercises, Control: sh.workflows},
		Approvals: &api.Approvals{Repo: sh.approvals, Jobs: sh.jobs, Records: sh.records, Decider: sh.workflows},
		Skills:    sh.skills, MCP: mcp.Handler(mcpDeps), MCPOrigin: mcp.OriginGuard(cfg.MCPAllowedOrigins)}
	if metricsOnAPI {
		deps.MetricsHandler = r.metrics.Handler()
	}
	if cfg.ProxyGNS3 {
		if deps.GNS3Proxy, err = gns3proxy.New(cfg.GNS3URL); err != nil {
			return fmt.Errorf("--proxy-gns3: %w", err)
		}
		r.proxying = true
	}
	srv := api.New(deps)
	if r.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	r.http = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.http.Serve(r.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("HTTP server stopped", "error", err)
		}
	}()
	return nil
}

// keepReturningIdleMemory keeps a class's burst of turns from leaving the process holding its peak
// memory (README: Load), until the process stops.
func (r *Running) keepReturningIdleMemory() {
	memCtx, stopMem := context.WithCancel(context.Background())
	memDone := make(chan struct{})
	go func() {
		defer close(memDone)
		memtrim.ReturnIdleMemory(memCtx, idleMemoryEvery, idleMemoryThreshold)
	}()
	r.closers = append(r.closers, func() error { stopMem(); <-memDone; return nil })
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

// llmClient is the worker's client for model calls, its streams watched for silence for idle
// (llm.DefaultIdleTimeout when 0).
func llmClient(untrusted *http.Client, idle time.Duration) *llm.Client {
	c := llm.NewClient(nil, untrusted)
	if idle > 0 {
		c = c.WithIdleTimeout(idle)
	}
	return c
}
