package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
)

// This file runs the Temporal dev server of a `serve` given no --temporal-address: it starts it,
// and supervises it for as long as the process runs.

// startDevServer starts the dev server on the data directory and supervises it.
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
		Logger: log.With("component", "temporal-dev"), Lock: r.lock, MemoryLimit: cfg.TemporalMemoryLimit,
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
