package scripts_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo is a `go` that answers `go test -fuzz` with the progress lines Go prints and records
// the command lines it was given; FAKE_GO_FAIL names a target it fails as a crash.
const fakeGo = `#!/bin/sh
echo "$@" >> "$FAKE_GO_CALLS"
target=$(echo "$@" | sed -E 's/.*-fuzz \^([A-Za-z0-9_]+)\$.*/\1/')
echo "fuzz: elapsed: 0s, gathering baseline coverage: 0/3 completed"
echo "fuzz: elapsed: 3s, execs: 9178 (3059/sec), new interesting: 4 (total: 12)"
if [ "$target" = "$FAKE_GO_FAIL" ]; then
	echo "--- FAIL: $target (0.10s)"
	echo "    Failing input written to testdata/fuzz/$target/cd1d322c7b2d110b"
	exit 1
fi
echo "fuzz: elapsed: 6s, execs: 20001 (3607/sec), new interesting: 7 (total: 15)"
echo "PASS"
`

// make fuzz and the CI pass: every target of the repository runs in a `go test` of its own,
// with one worker and the time asked for, and its row gives the last executions and new
// inputs Go reported; a crash fails the run after every target ran, naming its input.
func TestFuzzRunsEveryTargetAndReadsItsProgress(t *testing.T) {
	dir := t.TempDir()
	goTool, calls := filepath.Join(dir, "go"), filepath.Join(dir, "calls")
	writeExec(t, goTool, fakeGo)
	env := append(os.Environ(), "GO="+goTool, "FAKE_GO_CALLS="+calls, "FUZZTIME=3s", "FUZZLOGS="+filepath.Join(dir, "logs"))

	out, err := run(t, env, "fuzz.sh", "^(FuzzBGP|FuzzCapture)$")
	require.NoError(t, err, out)
	assert.Regexp(t, `(?m)^FuzzBGP +internal/lab/capture +\d+ +20001 +7 ok$`, out)
	assert.Regexp(t, `(?m)^FuzzCapture +internal/lab/capture +\d+ +20001 +7 ok$`, out)
	given, err := os.ReadFile(calls)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^test -run \^\$ -fuzz \^FuzzBGP\$ -fuzztime 3s -fuzzminimizetime 500x -parallel 1 \./internal/lab/capture$`, string(given))

	require.NoError(t, os.Remove(calls))
	out, err = run(t, append(env, "FAKE_GO_FAIL=FuzzConsole"), "fuzz.sh")
	require.Error(t, err, out)
	assert.Regexp(t, `(?m)^FuzzConsole +internal/lab/devices +\d+ +9178 +4 FAIL testdata/fuzz/FuzzConsole/cd1d322c7b2d110b$`, out)
	given, err = os.ReadFile(calls)
	require.NoError(t, err)
	// The targets after the crash ran too, in packages after its own.
	assert.Regexp(t, regexp.MustCompile(`(?s)-fuzz \^FuzzConsole\$.*-fuzz \^FuzzModelStream\$.*-fuzz \^FuzzMCP\$`), string(given))

	out, err = run(t, env, "fuzz.sh", "^FuzzNothing$")
	require.Error(t, err)
	assert.Contains(t, out, "no fuzz target matches")
}
