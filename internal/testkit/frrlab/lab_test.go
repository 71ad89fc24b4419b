package frrlab_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
)

// readUntil reads a console until its screen contains want.
func readUntil(t *testing.T, c net.Conn, want string) string {
	t.Helper()
	var screen []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(screen), want) {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("waiting for %q: %v; screen %q", want, err, screen)
		}
		screen = append(screen, buf[:n]...)
	}
	return string(screen)
}

func TestLabConsolesAndCleanup(t *testing.T) {
	var namespaces []string
	t.Run("lab", func(t *testing.T) {
		lab := frrlab.Start(t, frrlab.Options{})
		if len(lab.Routers) != 2 || lab.Routers[0].Interfaces[0] != "eth0" || lab.Routers[1].Interfaces[0] != "eth0" {
			t.Fatalf("%+v", lab.Routers)
		}
		for _, r := range lab.Routers {
			namespaces = append(namespaces, r.Namespace)
			c, err := net.Dial("tcp", r.Addr())
			if err != nil {
				t.Fatal(err)
			}
			// Telnet negotiation only: the console shows nothing until Enter.
			neg := make([]byte, 6)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(neg); err != nil || neg[0] != 255 {
				t.Fatalf("negotiation %q %v", neg, err)
			}
			c.Write([]byte("\r"))
			readUntil(t, c, "frr# ")
			// "exit" leaves vtysh for the root shell; "vtysh" returns.
			c.Write([]byte("exit\r"))
			readUntil(t, c, "root@frr:~# ")
			c.Write([]byte("vtysh\r"))
			readUntil(t, c, "Hello, this is FRRouting")
			c.Write([]byte("show interface brief\r"))
			readUntil(t, c, "eth0")
			c.Close()
		}
	})
	// A host: its own namespace, linked to a router, with a root shell on its console.
	t.Run("host", func(t *testing.T) {
		lab := frrlab.Start(t, frrlab.Options{Routers: 1, Hosts: 1})
		h := lab.Hosts[0]
		namespaces = append(namespaces, h.Namespace, lab.Routers[0].Namespace)
		if h.Name != "host1" || len(h.Interfaces) != 1 || h.Interfaces[0] != "eth0" || lab.Routers[0].Interfaces[0] != "eth0" {
			t.Fatalf("%+v %+v", h, lab.Routers[0])
		}
		c, err := net.Dial("tcp", h.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("\r"))
		readUntil(t, c, "root@host1:~# ")
		c.Write([]byte("hostname; ip -br link show dev eth0\r"))
		readUntil(t, c, "eth0@")
		if out, err := h.Shell("hostname"); err != nil || strings.TrimSpace(out) == "host1" {
			t.Fatalf("outside the console the machine keeps its name: %q %v", out, err)
		}
	})
	out, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	for _, ns := range namespaces {
		if strings.Contains(string(out), ns) {
			t.Errorf("namespace %s outlived its lab", ns)
		}
	}
}
