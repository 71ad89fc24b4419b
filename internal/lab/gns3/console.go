package gns3

import (
	"net"
	"strconv"
	"strings"
)

// unspecifiedHost reports whether h names "any address", which GNS3 sends
// when the console listens on every interface of the GNS3 host.
func unspecifiedHost(h string) bool {
	h = strings.Trim(strings.TrimSpace(h), "[]")
	if h == "" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

// ConsoleHostOr returns the host to dial for the node's console:
// console_host, or gns3Host when console_host is empty, 0.0.0.0 or ::.
func (n *Node) ConsoleHostOr(gns3Host string) string {
	if unspecifiedHost(n.ConsoleHost) {
		return gns3Host
	}
	return strings.Trim(n.ConsoleHost, "[]")
}

// ConsoleAddr returns "host:port" for the node's console, or "" when the
// node has no console port.
func (n *Node) ConsoleAddr(gns3Host string) string {
	if n.ConsolePort() == 0 {
		return ""
	}
	return net.JoinHostPort(n.ConsoleHostOr(gns3Host), strconv.Itoa(n.ConsolePort()))
}

func equalFold(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}
