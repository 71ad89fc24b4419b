//go:build unix

package temporaldev

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock without blocking. flock belongs to the
// open file description, so a child that inherits the descriptor holds the
// lock too, and the kernel drops it when the last holder is gone.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func signalPID(pid int, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(pid, sig)
}

func terminateGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }

func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

func processGone(err error) bool { return errors.Is(err, syscall.ESRCH) }
