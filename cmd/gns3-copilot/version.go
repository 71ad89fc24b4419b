package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
)

// Set with -ldflags "-X main.buildTime=…" by `make build` and `make deb`. Go stamps the module
// version and the commit into a binary built from a git checkout, but not when it was built, and
// not the commit either where VCS stamping is off (-buildvcs=false in GOFLAGS).
var (
	buildTime   string
	buildCommit string
	// buildVersion overrides the module version, for packages built from a tag-less tree.
	buildVersion string
)

// versionInfo is what `gns3-copilot version` reports; an operator pastes it into a bug report.
type versionInfo struct {
	Version, Commit, CommitTime, BuildTime, Go, TemporalCLI string
	Modified                                                bool
}

func readVersion() versionInfo {
	v := versionInfo{Version: "unknown", BuildTime: buildTime, TemporalCLI: temporaldev.CLIVersion}
	info, ok := debug.ReadBuildInfo()
	if ok {
		v.Version, v.Go = info.Main.Version, info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.CommitTime = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if buildVersion != "" {
		v.Version = buildVersion
	}
	if v.Commit == "" {
		v.Commit = buildCommit
	}
	return v
}

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gns3-copilot %s\n", orUnknown(v.Version))
	commit := orUnknown(v.Commit)
	if v.CommitTime != "" {
		commit += " (" + v.CommitTime + ")"
	}
	if v.Modified {
		commit += ", with uncommitted changes"
	}
	fmt.Fprintf(&b, "  commit:       %s\n", commit)
	fmt.Fprintf(&b, "  built:        %s\n", orUnknown(v.BuildTime))
	fmt.Fprintf(&b, "  go:           %s\n", orUnknown(v.Go))
	fmt.Fprintf(&b, "  temporal CLI: %s (the pinned release; install it with `%s`)\n", v.TemporalCLI, temporaldev.InstallCommand)
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
