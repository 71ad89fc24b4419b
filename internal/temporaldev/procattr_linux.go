package temporaldev

import "syscall"

// childProcAttr puts the child in its own process group, so Stop can signal
// everything it started, and has the kernel send it SIGTERM if we die
// without stopping it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
