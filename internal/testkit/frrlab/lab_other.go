//go:build !linux

// Package frrlab runs real FRRouting routers in network namespaces as test devices.
// Network namespaces exist only on Linux.
package frrlab

import (
	"os"
	"testing"
)

// Router is one running FRR router (Linux only).
type Router struct {
	Name, Namespace, Dir string
	Interfaces           []string
	ConsolePort          int
}

// Addr is the console address.
func (r *Router) Addr() string { return "" }

// Vtysh runs vtysh commands on the router (Linux only).
func (r *Router) Vtysh(cmds ...string) (string, error) { return "", nil }

// Link joins interfaces of two routers.
type Link struct{ A, B int }

// Host is a Linux host beside the routers (Linux only).
type Host struct {
	Name, Namespace, Dir string
	Interfaces           []string
	ConsolePort          int
}

// Addr is the console address.
func (h *Host) Addr() string { return "" }

// Shell runs a command in the host's namespace (Linux only).
func (h *Host) Shell(cmd string) (string, error) { return "", nil }

// Login is a user name and password a host's console asks for.
type Login struct{ User, Password string }

// Options shape a lab.
type Options struct {
	Routers, Hosts int
	Links          []Link
	ExtraDaemons   []string
	Login          *Login
}

// Lab is a set of running FRR routers and Linux hosts.
type Lab struct {
	Routers []*Router
	Hosts   []*Host
}

// Require skips (or fails with CI=true): the lab needs Linux.
func Require(tb testing.TB, extra ...string) (string, string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal("frrlab needs Linux")
	}
	tb.Skip("frrlab needs Linux; skipping")
	return "", ""
}

// Start needs Linux; it skips (or fails with CI=true).
func Start(tb testing.TB, opts Options) *Lab {
	tb.Helper()
	Require(tb)
	return nil
}
