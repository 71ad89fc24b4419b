//go:build linux

package devices

import (
	"net"
	"syscall"
)

// quickAcker re-arms TCP_QUICKACK before each read. Console daemons such as
// vpcs leave Nagle on, so with delayed ACKs a command's second output
// segment stalls about 40 ms; the kernel clears the flag after use, hence
// before every read.
type quickAcker struct{ rc syscall.RawConn }

func newQuickAcker(c net.Conn) *quickAcker {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return &quickAcker{rc: rc}
}

func (q *quickAcker) arm() {
	if q == nil {
		return
	}
	_ = q.rc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
}
