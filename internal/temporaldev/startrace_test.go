package temporaldev_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
)

// The dev server's own panic when two starts raced for a port it picked: a message at the
// head, then a long stack, as Go prints it.
const panicHead = "panic: can't set frontend port 33595: listen tcp 127.0.0.1:33595: bind: address already in use"

// wrapCLI writes a stand-in for the temporal binary: its first `failures` starts run
// failScript (with the real arguments as $@); later starts exec the real CLI. The count of
// starts is kept in a file beside it, which the test reads back.
func wrapCLI(t *testing.T, realCLI string, failures int, failScript string) (path string, starts func() int) {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	script := fmt.Sprintf(`#!/bin/sh
n=$(cat %[1]q 2>/dev/null || echo 0)
n=$((n+1))
echo $n > %[1]q
if [ "$n" -le %[2]d ]; then
%[3]s
fi
exec %[4]q "$@"
`, count, failures, failScript, realCLI)
	path = filepath.Join(dir, "temporal")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path, func() int {
		b, err := os.ReadFile(count)
		require.NoError(t, err)
		var n int
		_, err = fmt.Sscanf(string(b), "%d", &n)
		require.NoError(t, err)
		return n
	}
}

// panicScript prints a Go panic (message first, ~6 KB of stack after) and exits 2, as the
// CLI does when it loses a port race inside temporal.NewServerFx.
func panicScript() string {
	var b strings.Builder
	fmt.Fprintf(&b, "echo %q >&2\necho >&2\necho 'goroutine 1 [running]:' >&2\n", panicHead)
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "echo 'go.temporal.io/server/temporal.NewServerFx(...) frame %d' >&2\necho '\t/go/pkg/mod/go.temporal.io/server@v1.29.1/temporal/fx.go:149 +0x%x' >&2\n", i, 0x100+i)
	}
	b.WriteString("echo 'exit status 2: stack ends here' >&2\nexit 2")
	return b.String()
}

// A start that panics while it is being built (a lost port race) is started again on fresh
// ports, with one log line that names the panic, and comes up.
func TestStartThatDiesIsRetriedOnFreshPorts(t *testing.T) {
	real := requireCLI(t)
	cli, starts := wrapCLI(t, real, 1, panicScript())
	logger, logs := bufLogger()
	s, err := temporaldev.Start(ctxFor(t, 60*time.Second), temporaldev.Options{CLIPath: cli, DataDir: t.TempDir(), Headless: true, Logger: logger})
	require.NoError(t, err, "logs:\n%s", logs.String())
	defer func() { assert.NoError(t, s.Stop()) }()
	assert.Equal(t, 2, starts())
	assert.Equal(t, 1, strings.Count(logs.String(), "died while starting"), "one line per retry:\n%s", logs.String())
	assert.Contains(t, logs.String(), "can't set frontend port 33595", "the retry's line names the cause")
	dial(t, s) // it answers
}

// A dev server that stays down fails with the head of its output (where the panic's message
// is) as well as its tail, after a bounded number of starts. No real CLI is needed.
func TestStartThatKeepsDyingQuotesThePanic(t *testing.T) {
	cli, starts := wrapCLI(t, "/nonexistent/temporal", 99, panicScript())
	defer temporaldev.SetDiedAttempts(3)()
	logger, logs := bufLogger()
	_, err := temporaldev.Start(ctxFor(t, 60*time.Second), temporaldev.Options{CLIPath: cli, DataDir: t.TempDir(), Headless: true, Logger: logger})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "died while starting, 3 times in a row")
	assert.Contains(t, msg, panicHead, "the panic's message, at the head of the output")
	assert.Contains(t, msg, "exit status 2: stack ends here", "the end of the output")
	assert.Contains(t, msg, "bytes left out", "the middle of a long stack is cut")
	assert.Less(t, len(msg), 5000)
	assert.Equal(t, 3, starts())
	assert.Equal(t, 2, strings.Count(logs.String(), "died while starting; starting it again"), logs.String())
}

// The race itself, made certain: the first start is given a frontend port another process
// holds, as when another start took the port between our choosing and the CLI binding it.
// The real CLI then neither answers nor exits, and gns3-copilot-temporal exits saying the port
// is taken; either way the start sees the bind error in its log, stops it if need be, and comes
// up on a fresh port.
func TestPortTakenBetweenChoosingAndBindingIsRetried(t *testing.T) {
	real := requireCLI(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	// Swap the value after --port for the taken one, then run the real CLI.
	swap := fmt.Sprintf(`args=""
prev=""
for a in "$@"; do
  if [ "$prev" = "--port" ]; then a=%d; fi
  args="$args $a"; prev="$a"
done
exec %q $args`, takenPort, real)
	cli, starts := wrapCLI(t, real, 1, swap)
	logger, logs := bufLogger()
	began := time.Now()
	s, err := temporaldev.Start(ctxFor(t, 60*time.Second), temporaldev.Options{CLIPath: cli, DataDir: t.TempDir(), Headless: true, Logger: logger})
	require.NoError(t, err, "logs:\n%s", logs.String())
	defer func() { assert.NoError(t, s.Stop()) }()
	t.Logf("came up after %v", time.Since(began))
	assert.Equal(t, 2, starts())
	assert.NotEqual(t, fmt.Sprint(takenPort), s.Address()[strings.LastIndex(s.Address(), ":")+1:])
	assert.Contains(t, logs.String(), "died while starting")
	assert.Contains(t, logs.String(), "address already in use")
}

// A dozen dev servers started at the same moment all come up: whatever port races they meet
// among themselves are absorbed by the retry.
func TestBurstOfStartsAllComeUp(t *testing.T) {
	cli := requireCLI(t)
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	servers := make([]*temporaldev.Server, n)
	logger, logs := bufLogger()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = temporaldev.Start(ctxFor(t, 150*time.Second), temporaldev.Options{
				CLIPath: cli, DataDir: t.TempDir(), UIPort: 8233, UIPortPreferred: true, Logger: logger.With("start", i)})
		}()
	}
	wg.Wait()
	for i, s := range servers {
		if s != nil {
			assert.NoError(t, s.Stop())
		}
		assert.NoError(t, errs[i], "start %d", i)
	}
	t.Logf("retries in the burst: %d", strings.Count(logs.String(), "died while starting; starting it again"))
}
