package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/activities"
	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/credentials"
	"github.com/gns3-copilot/gns3-copilot/gns3"
	"github.com/gns3-copilot/gns3-copilot/livetopo"
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
	metrics      *metrics.Metrics
	worker       sdkworker.Worker
	temporal     client.Client
	dev          *temporaldev.Server
	closers      []func() error
	temporalAddr string
	uiAddr       string
	proxying     bool
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
	<-ctx.Done()
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
	r.temporal, err = client.DialContext(ctx, client.Options{
		HostPort:  r.temporalAddr,
		Namespace: cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(withTurnIDs(log.Handler())).With("component", "temporal")),
		// The SDK's client and worker metrics join the product's in one registry.
		MetricsHandler: r.metrics.Temporal(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", r.temporalAddr, err)
	}

	gns3Server := gns3.NewServer(cfg.GNS3URL, cfg.GNS3Timeout)
	// One live topology per process, shared by its API and worker (see package livetopo for why
	// not one shared through Redis).
	var live *livetopo.Hub
	if !cfg.NoLiveTopology {
		live = livetopo.New(gns3Server, livetopo.Options{Logger: log.With("component", "livetopo")})
		r.closers = append(r.closers, func() error { live.Close(); return nil })
	}
	repo := models.NewChatRepository(db)
	parts, err := buildParts(db, sealer, rdb, cfg, log)
	if err != nil {
		return nil, err
	}

	if role != RoleAPI {
		acts := &activities.Activities{Repo: repo, Events: events, LLM: parts.llmLoader, Credentials: creds,
			GNS3: gns3Server, Tools: parts.tools, Logger: log, EventTTL: cfg.EventTTL,
			Devices: parts.devices, DeviceRecords: models.DeviceRepository{DB: db}, UntrustedHTTP: parts.untrustedHTTP,
			Skills: parts.skills, Approvals: models.ApprovalRepository{DB: db}, ConfigJobs: models.ConfigJobRepository{DB: db}, Metrics: r.metrics,
			Marks: &models.TopologyMarks{DB: db}}
		if role == RoleWorker {
			r.closers = append(r.closers, followSkillReloads(events, parts.skills, log, nil))
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
	if role != RoleWorker {
		var metricsOnAPI http.Handler
		if metricsAddr == "" {
			metricsOnAPI = r.metrics.Handler()
		}
		turns := api.TemporalTurns{Client: r.temporal, TaskQueue: workflows.TaskQueue}
		routes := append(parts.routes, api.ApprovalRoutes(models.ApprovalRepository{DB: db}, models.ConfigJobRepository{DB: db},
			models.DeviceRepository{DB: db}, turns))
		deps := api.Deps{Repo: repo, GNS3: gns3Server, Events: events,
			Turns:       turns,
			Credentials: creds, LLM: parts.llmChooser, LLMConfigs: parts.llmConfigs, Logger: log, Web: parts.web,
			Routes: routes, Metrics: r.metrics, MetricsHandler: metricsOnAPI,
			Heartbeat: cfg.Heartbeat, DeviceConcurrency: cfg.DeviceConcurrency, CORSOrigins: cfg.CORSOrigins,
			Limits: turnLimits(cfg, rdb), Approval: cfg.Approval, ApprovalTimeout: cfg.ApprovalTimeout, Live: liveAPI(live)}
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

func (r *Running) startDevServer(ctx context.Context, cfg Config, log *slog.Logger) error {
	cli, err := temporaldev.FindCLI(cfg.TemporalCLI)
	if err != nil {
		return err
	}
	uiPort, headless := cfg.TemporalUIPort, false
	if uiPort < 0 {
		uiPort, headless = 0, true
	}
	r.dev, err = temporaldev.Start(ctx, temporaldev.Options{
		CLIPath: cli, DataDir: cfg.DataDir, Host: "127.0.0.1", Port: cfg.TemporalPort, UIPort: uiPort,
		Headless: headless, Namespace: cfg.TemporalNamespace, Logger: log.With("component", "temporal-dev"),
	})
	if err != nil {
		return fmt.Errorf("starting the Temporal dev server: %w", err)
	}
	r.temporalAddr = r.dev.Address()
	if !headless {
		r.uiAddr = r.dev.UIAddress()
	}
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
	if r.worker != nil {
		r.worker.Stop()
		r.worker = nil
	}
	if r.temporal != nil {
		r.temporal.Close()
		r.temporal = nil
	}
	if r.dev != nil {
		if err := r.dev.Stop(); err != nil {
			errs = append(errs, err)
		}
		r.dev = nil
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	r.closers = nil
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
