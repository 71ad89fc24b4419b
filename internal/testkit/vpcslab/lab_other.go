//go:build !linux

// Package vpcslab runs real vpcs processes on 127.0.0.1 as test devices.
// vpcs and the LD_PRELOAD shim it needs exist only on Linux.
package vpcslab

import (
	"os"
	"testing"
)

// Node is one running vpcs instance (Linux only).
type Node struct {
	Index, ConsolePort, UDPPort, PeerPort, Peer, PID int
	Name, Dir                                        string
}

// Addr is the console address.
func (n *Node) Addr() string { return "" }

// Options change how a lab is started.
type Options struct {
	NoNames bool
	Startup func(i int) string
	NoClamp bool
}

// Lab is a set of running vpcs nodes.
type Lab struct{ Nodes []*Node }

// Require skips (or fails with CI=true): the lab needs Linux.
func Require(tb testing.TB) (string, string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal("vpcslab needs Linux")
	}
	tb.Skip("vpcslab needs Linux; skipping")
	return "", ""
}

// Start runs n linked vpcs nodes (Linux only).
func Start(tb testing.TB, n int) *Lab { return StartWith(tb, n, Options{}) }

// StartWith runs n vpcs nodes with options (Linux only).
func StartWith(tb testing.TB, n int, opts Options) *Lab { Require(tb); return nil }

// Stop stops one node.
func (l *Lab) Stop(i int) {}

// Pair returns the two nodes of link k.
func (l *Lab) Pair(k int) (*Node, *Node) { return l.Nodes[2*k], l.Nodes[2*k+1] }
