// Command packaging builds gns3-copilot's Debian package with nfpm: the binary, a hardened
// systemd unit, the environment file for settings and the model's key, the service's user,
// and optionally the pinned Temporal CLI. `make deb` runs it.
//
// It is a Go module of its own so that nfpm and what it pulls in (go-git, chglog, several
// compressors: some 40 modules) stay out of the product's dependency graph, its go.sum and
// its `go vet ./...`; only whoever builds a package compiles them.
package main

import (
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
)

// Where the package puts things; the unit and the docs name the same paths.
const (
	binaryPath   = "/usr/bin/gns3-copilot"
	temporalPath = "/usr/lib/gns3-copilot/temporal"
	// The copilot's own dev server; the unit's PATH puts this directory first, and serve
	// prefers it to the CLI beside it.
	devServerPath = "/usr/lib/gns3-copilot/gns3-copilot-temporal"
	envPath       = "/etc/gns3-copilot/gns3-copilot.env"
	unitPath      = "/usr/lib/systemd/system/gns3-copilot.service"
	sysusersPath  = "/usr/lib/sysusers.d/gns3-copilot.conf"
)

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the gns3-copilot binary to package (required)")
	flag.StringVar(&o.temporal, "temporal", "", "the Temporal CLI to package as "+temporalPath+" (optional: without it, the operator installs it)")
	flag.StringVar(&o.devServer, "devserver", "", "gns3-copilot-temporal (cmd/gns3-copilot-temporal) to package as "+devServerPath+" (optional: serve then runs the CLI's dev server)")
	flag.StringVar(&o.version, "version", "", "package version, e.g. 0.1.0 or 0.0.0~git20261201.f82586d (required)")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "Debian architecture of the binary (amd64, arm64)")
	flag.StringVar(&o.out, "out", "", "the .deb to write (default: the conventional name in the current directory)")
	flag.StringVar(&o.compression, "compression", "gzip", "gzip, xz, zstd or none")
	flag.StringVar(&o.dir, "dir", ".", "the directory holding debian/ (the unit, the environment file, the maintainer scripts)")
	flag.Parse()
	path, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

type options struct {
	binary, temporal, devServer, version, arch, out, compression string
	// dir holds debian/: the unit, the environment file, the scripts.
	dir string
}

func build(o options) (string, error) {
	if err := checkInputs(o); err != nil {
		return "", err
	}
	temporalVersion, err := temporalCLIVersion(o.temporal)
	if err != nil {
		return "", err
	}
	if err := checkDevServer(o.devServer); err != nil {
		return "", err
	}
	info := nfpm.WithDefaults(packageInfo(o, temporalVersion))
	if err := nfpm.Validate(info); err != nil {
		return "", err
	}
	return writeDeb(info, o.out)
}

// checkInputs refuses a build that would package a missing or non-executable program.
func checkInputs(o options) error {
	if o.binary == "" || o.version == "" {
		return errors.New("-binary and -version are required")
	}
	for _, p := range []string{o.binary, o.temporal, o.devServer} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err != nil {
			return err
		} else if fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not executable", p)
		}
	}
	return nil
}

// temporalCLIVersion is the bundled CLI's module version, read from the binary itself so the
// package's description cannot name another; "" when no CLI is bundled.
func temporalCLIVersion(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil || info.Main.Path != "github.com/temporalio/cli" {
		return "", fmt.Errorf("%s is not a Temporal CLI built from github.com/temporalio/cli", path)
	}
	return info.Main.Version, nil
}

// checkDevServer refuses to package as gns3-copilot-temporal a binary that is not built from
// cmd/gns3-copilot-temporal.
func checkDevServer(path string) error {
	if path == "" {
		return nil
	}
	const module = "github.com/gns3-copilot/gns3-copilot/cmd/gns3-copilot-temporal"
	if info, err := buildinfo.ReadFile(path); err != nil || info.Main.Path != module {
		return fmt.Errorf("%s is not gns3-copilot-temporal built from %s", path, module)
	}
	return nil
}

// debianFile is one of the package's own files (unit, sysusers, env, maintainer scripts).
func (o options) debianFile(name string) string { return filepath.Join(o.dir, "debian", name) }

// contents are the files the package installs.
func contents(o options) files.Contents {
	src := o.debianFile
	c := files.Contents{
		{Source: o.binary, Destination: binaryPath, FileInfo: &files.ContentFileInfo{Mode: 0o755}},
		{Source: src("gns3-copilot.service"), Destination: unitPath, FileInfo: &files.ContentFileInfo{Mode: 0o644}},
		{Source: src("sysusers.conf"), Destination: sysusersPath, FileInfo: &files.ContentFileInfo{Mode: 0o644}},
		// noreplace: an upgrade keeps the operator's settings and key.
		{Source: src("gns3-copilot.env"), Destination: envPath, Type: files.TypeConfigNoReplace,
			FileInfo: &files.ContentFileInfo{Mode: 0o600}},
	}
	if o.temporal != "" {
		c = append(c, &files.Content{Source: o.temporal, Destination: temporalPath, FileInfo: &files.ContentFileInfo{Mode: 0o755}})
	}
	if o.devServer != "" {
		c = append(c, &files.Content{Source: o.devServer, Destination: devServerPath, FileInfo: &files.ContentFileInfo{Mode: 0o755}})
	}
	return c
}

func packageInfo(o options, temporalVersion string) *nfpm.Info {
	src := o.debianFile
	return &nfpm.Info{
		Name:        "gns3-copilot",
		Arch:        o.arch,
		Platform:    "linux",
		Version:     o.version,
		Section:     "net",
		Priority:    "optional",
		Maintainer:  "gns3-copilot maintainers <gns3-copilot@users.noreply.github.com>",
		Description: description(temporalVersion, o.devServer != ""),
		Homepage:    "https://github.com/gns3-copilot/gns3-copilot",
		// A fixed time keeps two builds of the same inputs byte for byte the same.
		MTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Overridables: nfpm.Overridables{
			// The binary links libc (SQLite through cgo).
			Depends:    []string{"libc6"},
			Recommends: []string{"systemd"},
			Suggests:   []string{"gns3-server"},
			Contents:   contents(o),
			Scripts: nfpm.Scripts{PostInstall: src("postinst"), PreRemove: src("prerm"),
				PostRemove: src("postrm")},
			Deb: nfpm.Deb{Compression: o.compression},
		},
	}
}

// writeDeb writes the package to out (the conventional file name when empty), removing a
// partial file on failure.
func writeDeb(info *nfpm.Info, out string) (string, error) {
	pkg, err := nfpm.Get("deb")
	if err != nil {
		return "", err
	}
	if out == "" {
		out = pkg.ConventionalFileName(info)
	}
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	info.Target = out
	if err := pkg.Package(info, f); err != nil {
		f.Close()
		os.Remove(out)
		return "", err
	}
	return out, f.Close()
}

func description(temporalVersion string, devServer bool) string {
	d := []string{"AI copilot for GNS3 network labs",
		"Chat about a GNS3 project: the copilot reads the topology, creates, links and starts nodes,",
		"and runs show and configuration commands on the devices, with approvals for changes.",
		"It runs as the systemd service gns3-copilot next to gns3-server; its settings and the",
		"model's key are in " + envPath + "."}
	if temporalVersion != "" {
		d = append(d, "It includes the Temporal CLI "+temporalVersion+" as "+temporalPath+".")
		if devServer {
			d = append(d, "It runs the CLI's dev server as "+devServerPath+", which takes less memory.")
		}
	} else {
		d = append(d, "The Temporal CLI it runs is not included: install it with",
			"`sudo GOBIN=/usr/local/bin go install github.com/temporalio/cli/cmd/temporal@v1.5.1`,",
			"or set GNS3_COPILOT_TEMPORAL_ADDRESS.")
	}
	return strings.Join(d, "\n")
}
