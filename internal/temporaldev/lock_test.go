package temporaldev_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

// syncBuffer collects log lines written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func bufLogger() (*slog.Logger, *syncBuffer) {
	var b syncBuffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

func TestLockWaitsForTheHolderThenTakesIt(t *testing.T) {
	dir := t.TempDir()
	first, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{})
	require.NoError(t, err)
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // the holder works a while, then lets go
		released <- time.Now()
		first.Release()
	}()
	logger, logs := bufLogger()
	second, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{Wait: 10 * time.Second, Logger: logger})
	require.NoError(t, err)
	got := time.Now()
	defer second.Release()
	assert.False(t, got.Before(<-released), "the lock was taken before its holder let go")
	assert.Equal(t, 1, strings.Count(logs.String(), "waiting up to 10s for"), "one line says what it waits for:\n%s", logs)
	assert.Contains(t, logs.String(), fmt.Sprintf("the process %d that uses it", os.Getpid()))
}

func TestLockGivesUpNamingTheHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{})
	require.NoError(t, err)
	defer first.Release()
	logger, _ := bufLogger()
	began := time.Now()
	_, err = temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{Wait: 200 * time.Millisecond, Logger: logger})
	require.Error(t, err)
	assert.GreaterOrEqual(t, time.Since(began), 200*time.Millisecond, "it waited")
	assert.Contains(t, err.Error(), "still in use by the process "+strconv.Itoa(os.Getpid()))
	assert.Contains(t, err.Error(), "after waiting 200ms")
}

func TestLockHonoursContext(t *testing.T) {
	dir := t.TempDir()
	first, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{})
	require.NoError(t, err)
	defer first.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	logger, _ := bufLogger()
	_, err = temporaldev.LockDataDir(ctx, dir, temporaldev.LockOptions{Wait: time.Minute, Logger: logger})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// procStartTicks reads a process's start time the way the pid file records it.
func procStartTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	st, ok := procfs.ReadStat(pid)
	require.True(t, ok, "process %d", pid)
	return st.StartTicks
}

// holdWithProcess starts a process that inherits the data directory's lock, as a dev server
// does, and returns it; it is killed by PID when the test ends.
func holdWithProcess(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	lock, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{})
	require.NoError(t, err)
	// Hand the locked descriptor on: a fresh open of the file would be another lock holder.
	fd, err := syscall.Dup(int(lock.FD()))
	require.NoError(t, err)
	held := os.NewFile(uintptr(fd), "lock")
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{held}
	require.NoError(t, cmd.Start())
	held.Close()
	lock.Release()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd
}

func writeRecord(t *testing.T, dir string, rec map[string]any) {
	t.Helper()
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, temporaldev.PIDFileName), b, 0o600))
}

// deadPID is a PID whose process has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	require.NoError(t, c.Run())
	return c.Process.Pid
}

// A process holding the lock is stopped only when the pid file says it is our dev server and
// its PID, start time and command line all match, and the process that started it is gone.
func TestLeftoverIsStoppedOnlyWhenItIsOurs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("identifying a leftover needs /proc")
	}
	defer temporaldev.SetLeftoverGrace(2 * time.Second)()
	dir := t.TempDir()
	holder := holdWithProcess(t, dir)
	pid := holder.Process.Pid
	start := procStartTicks(t, pid)
	logger, logs := bufLogger()
	try := func() error {
		l, err := temporaldev.LockDataDir(context.Background(), dir, temporaldev.LockOptions{Wait: 150 * time.Millisecond, Logger: logger})
		if err == nil {
			l.Release()
		}
		return err
	}

	cases := []struct {
		name string
		rec  map[string]any
	}{
		{"other command line", map[string]any{"pid": pid, "start": start, "args": []string{"temporal", "server", "start-dev"}, "owner_pid": deadPID(t), "owner_start": 1}},
		{"other start time", map[string]any{"pid": pid, "start": start + 1, "args": []string{"sleep", "60"}, "owner_pid": deadPID(t), "owner_start": 1}},
		{"owner still running", map[string]any{"pid": pid, "start": start, "args": []string{"sleep", "60"}, "owner_pid": os.Getpid(), "owner_start": procStartTicks(t, os.Getpid())}},
	}
	for _, c := range cases {
		writeRecord(t, dir, c.rec)
		require.Error(t, try(), c.name)
		require.True(t, processAlive(pid), "%s: the holder was signalled", c.name)
	}
	assert.NotContains(t, logs.String(), "stopping the Temporal dev server left by a previous run")

	writeRecord(t, dir, map[string]any{"pid": pid, "start": start, "args": []string{"sleep", "60"}, "owner_pid": deadPID(t), "owner_start": 1})
	require.NoError(t, try(), "a leftover of ours is stopped and the lock taken")
	assert.Contains(t, logs.String(), "stopping the Temporal dev server left by a previous run")
	waitGone(t, pid, 5*time.Second)
}
