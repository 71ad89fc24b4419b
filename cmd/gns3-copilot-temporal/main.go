// Command gns3-copilot-temporal is the Temporal dev server that `gns3-copilot serve` starts on a
// GNS3 host. It runs the pinned Temporal CLI's own dev-server package at the CLI's version, so it
// is the same server with the same SQLite database as `temporal server start-dev`; what it adds
// is what the CLI cannot do from outside: once started, and after a burst of turns, it gives
// back the code that starting mapped and the heap the burst left (internal/memtrim). On a GNS3
// host that memory belongs to the emulated routers (issue 36): started with the copilot's
// settings, the CLI's dev server holds about 112 MB idle, 72 MB of it its binary's code.
//
// It takes the part of the CLI's command line that serve uses (`server start-dev` and its flags),
// so serve runs either binary the same way, and an operator can swap one for the other.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/temporalio/cli/temporalcli/devserver"

	"github.com/gns3-copilot/gns3-copilot/internal/memtrim"
)

// How often the server checks for memory to give back, and above how much heap it does: an
// idle server holds about 30 MB of heap, a burst of 100 turns took it past 100 MB.
const (
	trimEvery     = 20 * time.Second
	trimThreshold = 64 << 20
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: 2 for a command line it does not take, 1 for a server that failed.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if len(args) < 2 || args[0] != "server" || args[1] != "start-dev" {
		fmt.Fprintln(stderr, "usage: gns3-copilot-temporal server start-dev [flags] (the flags of `temporal server start-dev` that gns3-copilot uses; --help lists them)")
		return 2
	}
	opts, err := parseStartDev(args[2:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "gns3-copilot-temporal:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, opts, stdout); err != nil {
		fmt.Fprintln(stderr, "gns3-copilot-temporal:", err)
		return 1
	}
	return 0
}

// serve runs the dev server until ctx ends.
func serve(ctx context.Context, opts devserver.StartOptions, stdout io.Writer) error {
	// As the CLI does: a port another process holds fails here, in words, where the server
	// itself would panic while building its services.
	for _, p := range []struct {
		what, ip string
		port     int
	}{{"frontend", opts.FrontendIP, opts.FrontendPort}, {"frontend HTTP", opts.FrontendIP, opts.FrontendHTTPPort},
		{"UI", opts.UIIP, opts.UIPort}, {"metrics", opts.FrontendIP, opts.MetricsPort}} {
		if p.port == 0 || p.ip == "" {
			continue
		}
		if err := devserver.CheckPortFree(p.ip, p.port); err != nil {
			return fmt.Errorf("can't set %s port %d: %w", p.what, p.port, err)
		}
	}
	s, err := devserver.Start(opts)
	if err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	defer s.Stop()
	// Starting ran the initialisation of the whole Temporal server, its UI server and the SQLite
	// driver, and built the schema: none of that code runs again, and its garbage is garbage.
	debug.FreeOSMemory()
	memtrim.DropIdleCodePages()
	fmt.Fprintf(stdout, "%s\nServer:  %s:%d\n", versionLine(), opts.FrontendIP, opts.FrontendPort)
	if opts.UIIP != "" {
		fmt.Fprintf(stdout, "UI:      http://%s:%d%s\n", opts.UIIP, opts.UIPort, opts.PublicPath)
	}
	memtrim.ReturnIdleMemory(ctx, trimEvery, trimThreshold)
	fmt.Fprintln(stdout, "Stopping server...")
	return nil
}

// versionLine names this binary and the Temporal CLI and server it runs, from its build info.
func versionLine() string {
	cli, server := "unknown", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			switch m.Path {
			case "github.com/temporalio/cli":
				cli = m.Version
			case "go.temporal.io/server":
				server = m.Version
			}
		}
	}
	return fmt.Sprintf("gns3-copilot-temporal: the dev server of Temporal CLI %s (server %s)", cli, server)
}

// logLevel reads the CLI's --log-level values; "never" is above every level.
func logLevel(s string) (slog.Level, error) {
	if s == "never" {
		return slog.Level(100), nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn, error or never", s)
	}
	return l, nil
}
