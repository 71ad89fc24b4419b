//go:build !unix

package temporaldev

import (
	"errors"
	"os"
	"syscall"
)

var errUnsupported = errors.New("supervising a Temporal dev server needs process groups (Linux, macOS, BSD); run `temporal server start-dev` yourself and point the service at it with --temporal-address")

func tryLock(*os.File) (bool, error) { return false, errUnsupported }

func childProcAttr() *syscall.SysProcAttr { return nil }

func signalPID(int, bool) error { return errUnsupported }

func terminateGroup(int) error { return errUnsupported }

func killGroup(int) error { return errUnsupported }

func processGone(error) bool { return false }
