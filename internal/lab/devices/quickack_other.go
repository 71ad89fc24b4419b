//go:build !linux

package devices

import "net"

// quickAcker is a no-op where TCP_QUICKACK does not exist.
type quickAcker struct{}

func newQuickAcker(net.Conn) *quickAcker { return nil }

func (q *quickAcker) arm() {}
