package procfs

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatReadsTheFieldsAfterTheCommandName(t *testing.T) {
	// A command name with spaces and a ')' of its own, as a process may name itself.
	st, ok := parseStat("4242 (my (odd) cmd) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 9 0 0\n")
	require.True(t, ok)
	require.Equal(t, Stat{State: 'S', PPID: 17, CPUSeconds: 3, StartTicks: 9}, st)

	for _, bad := range []string{"", "4242 no parenthesis S 1", "4242 (cut) S 1 2", "4242 (short) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0", "4242 (x) S one 2 3 4 5 6 7 8 9 10 11 12"} {
		_, ok := parseStat(bad)
		require.False(t, ok, "%q", bad)
	}
}

func TestParseStatusReadsTheResidentSetInBytes(t *testing.T) {
	m, ok := parseStatus("Name:\tserve\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nRssAnon:\t   768 kB\nRssFile:\t   256 kB\nThreads:\t8\n")
	require.True(t, ok)
	require.Equal(t, Memory{RSS: 1 << 20, Anon: 768 << 10, File: 256 << 10, Peak: 2 << 20}, m)
	_, ok = parseStatus("Name:\tkthreadd\nThreads:\t1\n")
	require.False(t, ok, "a kernel thread has no resident set")
}

func TestAProcessIsAliveUntilItIsReaped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	st, ok := ReadStat(os.Getpid())
	require.True(t, ok)
	require.Equal(t, os.Getppid(), st.PPID)
	// CPU time counts in ticks of 10 ms: spin until one is counted.
	for deadline := time.Now().Add(5 * time.Second); st.CPUSeconds == 0 && time.Now().Before(deadline); {
		st, _ = ReadStat(os.Getpid())
	}
	require.Greater(t, st.CPUSeconds, 0.0, "this process has used CPU")
	m, ok := ReadMemory(os.Getpid())
	require.True(t, ok)
	require.Positive(t, m.RSS)
	require.GreaterOrEqual(t, m.Peak, m.RSS)

	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	require.True(t, Alive(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.False(t, Alive(cmd.Process.Pid), "killed and reaped")
}
