//go:build unix && !linux

package temporaldev

import "syscall"

// childProcAttr puts the child in its own process group so Stop can signal
// everything it started. Only Linux offers a parent-death signal.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
