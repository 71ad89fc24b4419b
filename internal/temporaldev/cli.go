package temporaldev

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// CLIVersion is the Temporal CLI release this package is written and
// tested against.
const CLIVersion = "1.5.1"

// InstallCommand installs the pinned CLI into $(go env GOPATH)/bin.
const InstallCommand = "go install github.com/temporalio/cli/cmd/temporal@v" + CLIVersion

// DevServerName is the copilot's own dev server binary (cmd/gns3-copilot-temporal): the CLI's
// dev server at CLIVersion, which gives back the memory starting it took. `make temporal`
// installs it beside the CLI.
const DevServerName = "gns3-copilot-temporal"

// FindCLI locates the binary that runs the dev server: the explicit path if given, else
// DevServerName and then the temporal CLI, each looked for on PATH, then in $GOBIN and
// $GOPATH/bin (default ~/go/bin), then in the directories `go env GOBIN GOPATH` names (a GOPATH
// set with `go env -w` is not in the environment, yet `go install` and
// scripts/install-temporal.sh use it). The error says how to install it.
func FindCLI(explicit string) (string, error) {
	if explicit != "" {
		if err := checkExecutable(explicit); err != nil {
			return "", fmt.Errorf("temporal CLI %q: %w; install it with `%s` (or `make temporal`)", explicit, err, InstallCommand)
		}
		return explicit, nil
	}
	var tried []string
	for _, name := range []string{DevServerName, "temporal"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dirs := range []func() []string{goBinDirs, goEnvBinDirs} {
			for _, dir := range dirs() {
				p := filepath.Join(dir, exeName(name))
				if slices.Contains(tried, p) {
					continue
				}
				if checkExecutable(p) == nil {
					return p, nil
				}
				tried = append(tried, p)
			}
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

// CLIModuleVersion reads the Temporal CLI version a binary was built from ("v1.5.1"): the
// version of a `go install`ed CLI, or the version of the CLI whose dev server DevServerName runs.
// It is empty for binaries without Go build info.
func CLIModuleVersion(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	if info.Main.Path == cliModule {
		return info.Main.Version
	}
	for _, m := range info.Deps {
		if m.Path == cliModule {
			return m.Version
		}
	}
	return ""
}

const cliModule = "github.com/temporalio/cli"
