package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// requireTool finds a program the test needs: outside CI a missing one skips the test, in CI
// it fails it (.ci/run installs them).
func requireTool(t *testing.T, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: %s", name, why)
		}
		t.Skipf("%s is missing (%s); skipping", name, why)
	}
	return p
}

func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// withoutOurVariables is the environment without any GNS3_COPILOT_ setting of the machine's.
func withoutOurVariables(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GNS3_COPILOT_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Issue 26: `make deb`'s packager builds a package that lists what an operator needs, whose
// unit systemd accepts, that dpkg installs, and whose installed binary's doctor passes against
// a working GNS3 and model. The install goes into a throwaway root with `dpkg --root`; its
// maintainer scripts see DPKG_ROOT and leave the host alone (no user created, no systemctl),
// so the test can run as root on a CI machine without changing it.
func TestDebianPackageInstallsAndItsDoctorPasses(t *testing.T) {
	requireTool(t, "dpkg-deb", "the package test lists and installs the .deb (Debian's dpkg package)")
	requireTool(t, "dpkg", "the package test installs the .deb into a throwaway root")
	bin := buildBinary(t)
	work := t.TempDir()
	deb := filepath.Join(work, "gns3-copilot.deb")
	// zstd: gzip (make deb's default, which every dpkg reads) takes ~30 s on 90 MB here.
	runTool(t, "../packaging", nil, "go", "run", ".", "-binary", bin, "-version", "0.0.0~test1",
		"-out", deb, "-compression", "zstd")

	listing := runTool(t, "", nil, "dpkg-deb", "-c", deb)
	for _, want := range []string{
		"-rwxr-xr-x root/root", "./usr/bin/gns3-copilot\n",
		"-rw------- root/root", "./etc/gns3-copilot/gns3-copilot.env\n",
		"./usr/lib/systemd/system/gns3-copilot.service\n",
		"./usr/lib/sysusers.d/gns3-copilot.conf\n",
	} {
		require.Contains(t, listing, want)
	}
	control := runTool(t, "", nil, "dpkg-deb", "-I", deb)
	require.Contains(t, control, "Package: gns3-copilot")
	require.Contains(t, control, "Version: 0.0.0~test1")
	name := runTool(t, "", nil, "dpkg-deb", "-f", deb, "Package")
	require.Equal(t, "gns3-copilot\n", name)

	root := filepath.Join(work, "root")
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644))
	args := []string{"--root=" + root, "--force-script-chrootless", "--force-depends", "--log=/dev/null"}
	if os.Geteuid() != 0 {
		args = append(args, "--force-not-root")
	}
	runTool(t, "", nil, "dpkg", append(args, "-i", deb)...)
	status := runTool(t, "", nil, "dpkg", "--root="+root, "-s", "gns3-copilot")
	require.Contains(t, status, "Status: install ok installed")
	require.Contains(t, status, "/etc/gns3-copilot/gns3-copilot.env", "the environment file is a conffile: upgrades keep its edits")
	installed := filepath.Join(root, "usr/bin/gns3-copilot")
	unit := filepath.Join(root, "usr/lib/systemd/system/gns3-copilot.service")
	unitText, err := os.ReadFile(unit)
	require.NoError(t, err)
	for _, want := range []string{"User=gns3-copilot\n", "StateDirectory=gns3-copilot\n", "ProtectSystem=strict\n",
		"NoNewPrivileges=yes\n", "EnvironmentFile=/etc/gns3-copilot/gns3-copilot.env\n"} {
		require.Contains(t, string(unitText), want)
	}

	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		// verify checks that ExecStart's program exists on this machine: point the copy at
		// the installed one. Warnings (an unknown key, a bad value) exit 0, so any output fails.
		copyDir := t.TempDir()
		text := strings.NewReplacer("/usr/bin/gns3-copilot", installed,
			"/etc/gns3-copilot/", filepath.Join(root, "etc/gns3-copilot")+"/").Replace(string(unitText))
		copied := filepath.Join(copyDir, "gns3-copilot.service")
		require.NoError(t, os.WriteFile(copied, []byte(text), 0o644))
		out, err := exec.Command(analyze, "verify", copied).CombinedOutput()
		require.NoError(t, err, "systemd-analyze verify:\n%s", out)
		require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify has remarks")
	} else {
		t.Log("systemd-analyze is not installed: the unit is not verified")
	}

	version := runTool(t, "", withoutOurVariables(), installed, "--version")
	require.Contains(t, version, "temporal CLI: 1.5.1")

	g := fakegns3.New(t)
	m := fakeopenai.New(t)
	m.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if req.HasTools() {
			return fakeopenai.Calls(fakeopenai.ToolCall{Name: req.ToolNames()[0], Arguments: `{"status":"ok"}`}), true
		}
		return fakeopenai.Text("ready"), true
	})
	cli := filepath.Join(work, "temporal")
	require.NoError(t, os.WriteFile(cli, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	doctor := exec.Command(installed, "doctor", "--gns3-user", fakegns3.AdminUser)
	doctor.Env = withoutOurVariables("GNS3_COPILOT_GNS3_URL="+g.URL, "GNS3_COPILOT_GNS3_PASSWORD="+fakegns3.AdminPassword,
		"GNS3_COPILOT_DATA_DIR="+filepath.Join(work, "data"), "GNS3_COPILOT_TEMPORAL_CLI="+cli,
		"GNS3_COPILOT_LLM_PROVIDER=custom", "GNS3_COPILOT_LLM_BASE_URL="+m.URL, "GNS3_COPILOT_LLM_MODEL=tool-model",
		"GNS3_COPILOT_LLM_API_KEY=sk-package-test", "GNS3_COPILOT_LLM_ALLOW_HOSTS=127.0.0.1")
	out, err := doctor.CombinedOutput()
	require.NoError(t, err, "doctor of the installed binary:\n%s", out)
	require.Contains(t, string(out), "calls tools")
	require.Contains(t, string(out), "checks passed")
	require.NotContains(t, string(out), "sk-package-test")
}
