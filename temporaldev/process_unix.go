//go:build unix

package temporaldev

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// lockDataDir takes an exclusive advisory lock so two dev servers never
// share one SQLite database; the kernel drops it if this process dies.
func lockDataDir(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another process is running a Temporal dev server on this data directory (lock %s held)", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil
}

func terminateGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }

func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

func processGone(err error) bool { return errors.Is(err, syscall.ESRCH) }
