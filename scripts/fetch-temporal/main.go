// Command fetch-temporal installs the Temporal CLI from its official release archive after
// checking the archive's SHA-256 checksum. scripts/install-temporal.sh runs it first and builds
// the CLI from source when it fails (no network to the release host, or a mismatch).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev/clirelease"
)

func main() {
	version := flag.String("version", "", "CLI version without the leading v (required)")
	dest := flag.String("dest", "", "path of the installed binary (required)")
	base := flag.String("base-url", envOr("TEMPORAL_RELEASE_BASE_URL", clirelease.DefaultBaseURL), "release download URL (env TEMPORAL_RELEASE_BASE_URL)")
	timeout := flag.Duration("timeout", 3*time.Minute, "give up after this long")
	flag.Parse()
	if *version == "" || *dest == "" {
		fmt.Fprintln(os.Stderr, "fetch-temporal: -version and -dest are required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	err := clirelease.Fetch(ctx, clirelease.Options{
		BaseURL: *base, Version: *version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Dest: *dest,
		Progress: func(s string) { fmt.Println("fetch-temporal:", s) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fetch-temporal:", err)
		os.Exit(1)
	}
	fmt.Println("fetch-temporal: installed", *dest)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
