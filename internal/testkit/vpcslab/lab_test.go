//go:build linux

package vpcslab

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

func TestLabStaysOnLoopbackAndStopsCleanly(t *testing.T) {
	var nodes []Node
	t.Run("lab", func(t *testing.T) {
		lab := Start(t, 3)
		for _, n := range lab.Nodes {
			if n.childPID == 0 || !ownsUDP(n.childPID, n.UDPPort) || !ownsUDP(n.childPID, n.UDPPort+9) {
				t.Errorf("%s: child %d does not hold its UDP ports", n.Name, n.childPID)
			}
			nodes = append(nodes, *n)
		}
		if lab.Nodes[0].PeerPort != lab.Nodes[1].UDPPort || lab.Nodes[1].PeerPort != lab.Nodes[0].UDPPort {
			t.Errorf("pair not linked: %+v %+v", lab.Nodes[0], lab.Nodes[1])
		}
		if lab.Nodes[2].Peer != -1 {
			t.Errorf("odd node linked to %d", lab.Nodes[2].Peer)
		}
		// Every socket vpcs opened is bound to 127.0.0.1: none on another
		// IPv4 address, none on IPv6.
		for _, file := range []string{"/proc/net/tcp", "/proc/net/udp", "/proc/net/tcp6", "/proc/net/udp6"} {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				f := strings.Fields(line)
				if len(f) < 2 {
					continue
				}
				for _, n := range lab.Nodes {
					for _, port := range []int{n.ConsolePort, n.UDPPort, n.UDPPort + 9} {
						if strings.HasSuffix(f[1], fmt.Sprintf(":%04X", port)) &&
							(strings.HasSuffix(file, "6") || !strings.HasPrefix(f[1], "0100007F:")) {
							t.Errorf("%s: port %d bound to %s", file, port, f[1])
						}
					}
				}
			}
		}
	})
	// The sub-test's cleanup has stopped the lab.
	for _, n := range nodes {
		if procfs.Alive(n.PID) {
			t.Errorf("%s: daemon %d still running", n.Name, n.PID)
		}
		if procfs.Alive(n.childPID) {
			t.Errorf("%s: pty child %d still running", n.Name, n.childPID)
		}
	}
}
