//go:build linux

package frrlab

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A console whose shell and its job ignore SIGHUP (inherited, as under nohup) still stops: the
// shell is killed, and closing the master hangs up the job, which holds the pty's slave open.
func TestStopEndsAConsoleWhoseProgramsIgnoreSIGHUP(t *testing.T) {
	c, err := bootConsole("ignoring", []string{"/bin/sh", "-c", `trap "" HUP; cat 0<&1 & echo up; wait`}, os.Environ(), t.TempDir(), "up")
	if err != nil {
		t.Fatal(err)
	}
	shell := c.cmd.Process.Pid
	job := childOf(t, shell)
	t.Cleanup(func() {
		// Only if the stop below failed: the job would keep reading a slave nobody writes to.
		if p, err := os.FindProcess(job); err == nil {
			_ = p.Signal(syscall.SIGKILL)
		}
	})
	stopped := make(chan error, 1)
	go func() { stopped <- c.stop() }()
	select {
	case err := <-stopped:
		if err == nil || !strings.Contains(err.Error(), "ignored SIGHUP") {
			t.Fatalf("stop: %v, want the shell named as having ignored SIGHUP", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the console did not stop within 30s: its reader is still blocked on the pty")
	}
	// The job got the hangup when the master closed, and exits.
	if !exits(t, job, 10*time.Second) {
		t.Fatalf("the console's job %d is still running 10s after the console stopped", job)
	}
}

// childOf is the PID of the one process whose parent is pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state, then the parent's PID.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			return child
		}
	}
	t.Fatalf("process %d has no child", pid)
	return 0
}

// exits waits up to d for pid, not a child of this process, to exit.
func exits(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d.Milliseconds()))
	if err != nil {
		t.Fatalf("waiting for %d: %v", pid, err)
	}
	return n == 1
}
