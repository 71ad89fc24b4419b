package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The built command, for the tests that check what a person typing it sees; main's dispatch
// cannot be called in-process because it exits.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	if os.Getenv("GNS3_COPILOT_TEST_MAIN") == "1" {
		t.Skip("inside the re-executed test binary")
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=TestMainProcess", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "GNS3_COPILOT_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestMainProcess runs main with the arguments after "--" when re-executed by runBinary.
func TestMainProcess(t *testing.T) {
	if os.Getenv("GNS3_COPILOT_TEST_MAIN") != "1" {
		return
	}
	for i, a := range os.Args {
		if a == "--" {
			os.Args = append([]string{"gns3-copilot"}, os.Args[i+1:]...)
			break
		}
	}
	main()
	os.Exit(0)
}

// Issue 26: -h lists the commands (it used to print serve's flags), and version and --version
// are commands, not errors.
func TestHelpAndVersionCommands(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		out, code := runBinary(t, args...)
		if code != 0 || !strings.Contains(out, "gns3-copilot doctor [flags]") || !strings.Contains(out, "gns3-copilot version") {
			t.Errorf("%v: exit %d, output:\n%s", args, code, out)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, code := runBinary(t, args...)
		if code != 0 || !strings.HasPrefix(out, "gns3-copilot ") || !strings.Contains(out, "temporal CLI: 1.5.1") {
			t.Errorf("%v: exit %d, output:\n%s", args, code, out)
		}
	}
	out, code := runBinary(t, "doctor", "-h")
	if code != 0 || !strings.Contains(out, "-gns3-user") || !strings.Contains(out, "-gns3-url") {
		t.Errorf("doctor -h: exit %d, output:\n%s", code, out)
	}
	out, code = runBinary(t, "frobnicate")
	if code != 2 || !strings.Contains(out, `unknown command "frobnicate"`) {
		t.Errorf("an unknown command: exit %d, output:\n%s", code, out)
	}
}
