// Package scripts_test runs the repository's shell scripts the way a newcomer meets them: the
// toolchain check before a build, and the Temporal CLI install with its PATH note and its
// fallback from the release archive to a build from source.
package scripts_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binDir makes a directory holding links to the named system tools, for a PATH with nothing
// else on it.
func binDir(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range tools {
		p, err := exec.LookPath(name)
		require.NoError(t, err, name)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, name)))
	}
	return dir
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(body), 0o755))
}

func run(t *testing.T, env []string, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var shellTools = []string{"bash", "awk", "sort", "head", "printf", "dirname", "env", "cat", "mkdir", "date", "chmod", "rm", "mv", "ln", "sh"}

// Issue 15 points 1 and 2: without Go, with an old Go, or without a C compiler, the check
// says in one line what to install and fails; on this machine it passes quietly.
func TestToolchainCheck(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err)
	home := "HOME=" + os.Getenv("HOME")

	out, err := run(t, os.Environ(), "check-toolchain.sh")
	require.NoError(t, err, out)
	assert.Empty(t, out)

	noGo := binDir(t, shellTools...)
	out, err = run(t, []string{"PATH=" + noGo, home}, "check-toolchain.sh")
	require.Error(t, err)
	assert.Equal(t, "check: Go is not installed (no go on PATH): install Go 1.26.8 or newer from https://go.dev/dl/ and put its bin directory on PATH\n", out)

	oldGo := binDir(t, append(shellTools, "gcc")...)
	writeExec(t, filepath.Join(oldGo, "go"), "#!/bin/sh\ncase \"$*\" in *GOVERSION*) echo go1.19.8;; *CGO_ENABLED*) echo 1;; esac\n")
	out, err = run(t, []string{"PATH=" + oldGo, home}, "check-toolchain.sh")
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(out, "\n"), out)
	assert.Contains(t, out, "Go 1.26.8 or newer is needed, found 1.19.8")

	noCC := binDir(t, shellTools...)
	require.NoError(t, os.Symlink(goCmd, filepath.Join(noCC, "go")))
	out, err = run(t, []string{"PATH=" + noCC, home, "CC=cc-that-is-not-installed"}, "check-toolchain.sh")
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(out, "\n"), out)
	assert.Contains(t, out, "no C compiler (cc-that-is-not-installed): SQLite is linked through cgo")
}

// installEnv is an environment for install-temporal.sh whose `go` builds nothing: `go install`
// writes a stand-in CLI into GOBIN, `go build` a stand-in at its -o, and both record the call;
// everything else goes to the real go. It returns the environment, GOBIN and the log of those
// calls.
func installEnv(t *testing.T, releaseURL string, gobinOnPath bool) ([]string, string, string) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err)
	tools := binDir(t, append(shellTools, "grep", "tr", "cut", "uname", "mktemp", "sed", "find")...)
	gobin := t.TempDir()
	log := filepath.Join(t.TempDir(), "go-install.log")
	writeExec(t, filepath.Join(tools, "go"), `#!/bin/sh
if [ "$1" = install ]; then
	echo "$*" >> "`+log+`"
	printf '#!/bin/sh\necho "temporal version 1.5.1 (Server 1.27.1, UI 2.36.0)"\n' > "$GOBIN/temporal"
	chmod +x "$GOBIN/temporal"
	exit 0
fi
if [ "$1" = build ]; then
	echo "$*" >> "`+log+`"
	while [ "$#" -gt 0 ] && [ "$1" != -o ]; do shift; done
	printf '#!/bin/sh\n' > "$2"
	chmod +x "$2"
	exit 0
fi
exec "`+goCmd+`" "$@"
`)
	path := tools
	if gobinOnPath {
		path = gobin + ":" + path
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "GOBIN=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+path, "GOBIN="+gobin, "TEMPORAL_RELEASE_BASE_URL="+releaseURL)
	return env, gobin, log
}

// Issue 13 §6 and issue 15 point 3: a release whose checksum does not match is refused and the
// CLI is built from source instead; the PATH note looks at PATH after the install, so it
// appears only when GOBIN really is not on PATH.
func TestInstallFallsBackToSourceAndNotesPATH(t *testing.T) {
	release := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch filepath.Base(r.URL.Path) {
		case "checksums.txt":
			_, _ = w.Write([]byte(strings.Repeat("ab", 32) + "  temporal_cli_1.5.1_linux_amd64.tar.gz\n" +
				strings.Repeat("ab", 32) + "  temporal_cli_1.5.1_linux_arm64.tar.gz\n" +
				strings.Repeat("ab", 32) + "  temporal_cli_1.5.1_darwin_arm64.tar.gz\n"))
		default:
			_, _ = w.Write([]byte("not the archive"))
		}
	}))
	defer release.Close()

	for _, onPath := range []bool{true, false} {
		env, gobin, log := installEnv(t, release.URL, onPath)
		out, err := run(t, env, "install-temporal.sh")
		require.NoError(t, err, out)
		assert.Contains(t, out, "checksum mismatch")
		assert.Contains(t, out, "building temporal 1.5.1 from source instead")
		assert.Contains(t, out, "about 6 minutes on 2 cores", "says what the build costs")
		calls, err := os.ReadFile(log)
		require.NoError(t, err)
		assert.Equal(t, "install github.com/temporalio/cli/cmd/temporal@v1.5.1\n"+
			"build -C cmd/gns3-copilot-temporal -o "+filepath.Join(gobin, "gns3-copilot-temporal")+" .\n", string(calls))
		assert.Contains(t, out, "gns3-copilot-temporal is installed: "+filepath.Join(gobin, "gns3-copilot-temporal"))
		assert.Contains(t, out, "temporal 1.5.1 is installed: "+filepath.Join(gobin, "temporal"))
		if onPath {
			assert.NotContains(t, out, "not on PATH", "GOBIN is on PATH")
		} else {
			assert.Contains(t, out, "note: "+gobin+" is not on PATH; gns3-copilot finds the CLI there anyway")
		}

		// A second run finds it and installs nothing.
		out, err = run(t, env, "install-temporal.sh")
		require.NoError(t, err, out)
		assert.Contains(t, out, "temporal 1.5.1 is installed")
		assert.Contains(t, out, "gns3-copilot-temporal is up to date")
		calls, _ = os.ReadFile(log)
		assert.Equal(t, 1, strings.Count(string(calls), "install "))
		assert.Equal(t, 1, strings.Count(string(calls), "build "))
	}
}

// No release host reachable (as in CI): the build from source follows.
func TestInstallWithoutReleaseHost(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	env, _, log := installEnv(t, url, true)
	out, err := run(t, env, "install-temporal.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "building temporal 1.5.1 from source instead")
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(calls), "install github.com/temporalio/cli/cmd/temporal@v1.5.1")
}
