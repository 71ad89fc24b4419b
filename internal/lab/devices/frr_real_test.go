package devices_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
)

// frrTarget describes a lab router as GNS3 v3.0 describes an FRR appliance node: no tags, a
// QEMU node from the "FRR" template with its disk image.
func frrTarget(r *frrlab.Router) devices.Target {
	return devices.Target{NodeID: r.Namespace, Name: r.Name, NodeType: "qemu", TemplateName: "FRR", Image: "frr-8.2.2.qcow2",
		ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: r.ConsolePort}
}

func connectFRR(t *testing.T, r *frrlab.Router) *devices.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := devices.Connect(ctx, frrTarget(r), "", devices.Options{Policy: devices.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func configure(t *testing.T, s *devices.Session, lines ...string) []devices.CommandResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.Configure(ctx, lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Failed {
			t.Fatalf("%s: %+v", s.Addr(), res)
		}
	}
	return res
}

// TestRealFRR runs the flows of a two-router FRR lab against real FRRouting: show, an
// addressed link with its configuration read back and diffed, a ping across it that only
// Ctrl-C ends, OSPF between the two, and "exit" at the top of vtysh.
func TestRealFRR(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2})
	r1, r2 := lab.Routers[0], lab.Routers[1]
	s1, s2 := connectFRR(t, r1), connectFRR(t, r2)
	for _, s := range []*devices.Session{s1, s2} {
		if s.Profile().Name != "frr" || s.Prompt() != "frr#" || s.Mode() != devices.ModePrivileged {
			t.Fatalf("%s: profile %s prompt %q mode %s", s.Addr(), s.Profile().Name, s.Prompt(), s.Mode())
		}
	}
	p := s1.Profile()

	// Show, and the read-back a configuration job starts from.
	before := mustRun(t, s1, p.ConfigCommand())
	if before.Failed || !strings.Contains(before.Output, "hostname frr") || strings.Contains(before.Output, "frr# ") {
		t.Fatalf("%+v", before)
	}

	// Address both ends; each line is in effect in the configuration read back after.
	for i, s := range []*devices.Session{s1, s2} {
		name, addr := lab.Routers[i].Name, []string{"10.1.0.1/24", "10.1.0.2/24"}[i]
		lines := []string{"hostname " + name, "interface eth0", "ip address " + addr, "exit"}
		configure(t, s, lines...)
		if s.Prompt() != name+"#" {
			t.Fatalf("prompt %q after renaming to %s", s.Prompt(), name)
		}
		cfg := p.ConfigLines(mustRun(t, s, p.ConfigCommand()).Output)
		for _, l := range lines[:3] {
			if v := p.Verify(l, cfg); v != devices.VerdictTook {
				t.Errorf("%s %q: %s in %q", name, l, v, cfg)
			}
		}
		if i == 0 {
			added, removed := devices.DiffConfig(p.ConfigLines(before.Output), cfg)
			// FRR 8.4's vtysh keeps a "hostname" of its own beside the daemons' one, so the rename
			// adds a line and removes none.
			if !slices.Contains(added, "interface eth0 | ip address 10.1.0.1/24") || !slices.Contains(added, "hostname R1") || len(removed) != 0 {
				t.Fatalf("diff +%q -%q", added, removed)
			}
		}
	}

	// What a link's traffic check reads on a router: its addresses, and its ping.
	if a := p.Addressing(mustRun(t, s1, p.ConfigCommand()).Output); len(a.Addresses) != 1 || a.Addresses[0].Prefix.String() != "10.1.0.1/24" ||
		!a.Addresses[0].NamesInterface("eth0") {
		t.Fatalf("R1's addresses: %+v", a)
	}
	if cmd, ok := p.PingCommand(netip.MustParseAddr("10.1.0.2"), 5); !ok || cmd != "ping 10.1.0.2" {
		t.Fatalf("FRR's ping: %q %v", cmd, ok)
	}

	// vtysh's ping has no count: it is stopped with Ctrl-C and keeps replies and statistics.
	start := time.Now()
	r := mustRun(t, s1, "ping 10.1.0.2")
	if r.Failed || !r.Stopped || !strings.Contains(r.Output, "bytes from 10.1.0.2") ||
		!strings.Contains(r.Output, "packets transmitted") || !strings.Contains(r.Output, "[stopped after 5s with Ctrl-C") {
		t.Fatalf("ping: %+v", r)
	}
	if got := devices.ParsePing(r.Output); !got.Read || got.Replies < 3 || got.Sent < got.Replies || len(got.RTTs) != got.Replies {
		t.Fatalf("the ping read: %+v from %q", got, r.Output)
	}
	if d := time.Since(start); d > devices.OpenEndedRun+5*time.Second {
		t.Fatalf("ping took %s", d)
	}
	if r := mustRun(t, s1, "show interface brief"); r.Failed || !strings.Contains(r.Output, "eth0") || s1.Prompt() != "R1#" {
		t.Fatalf("console not back at its prompt after the ping: %+v", r)
	}

	// OSPF across the link (point-to-point and 1 s hellos: adjacent in a few seconds).
	for i, s := range []*devices.Session{s1, s2} {
		configure(t, s, "interface eth0", "ip ospf network point-to-point", "ip ospf hello-interval 1", "ip ospf dead-interval 4",
			"exit", "interface lo", "ip address 192.0.2."+[]string{"1", "2"}[i]+"/32", "exit",
			"router ospf", "network 10.1.0.0/24 area 0", "network 192.0.2.0/24 area 0", "exit")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r1routes := mustRun(t, s1, "show ip route ospf")
		r2routes := mustRun(t, s2, "show ip route ospf")
		if strings.Contains(r1routes.Output, "192.0.2.2/32") && strings.Contains(r2routes.Output, "192.0.2.1/32") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OSPF routes within 30s:\nR1:\n%s\nR2:\n%s", r1routes.Output, r2routes.Output)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r := mustRun(t, s1, "show ip ospf neighbor"); !strings.Contains(r.Output, "Full") {
		t.Fatalf("%+v", r)
	}

	// Saving is asked for explicitly, from exec mode or among configuration lines (sent with
	// "do"), and lands in the router's own directory.
	if r := mustRun(t, s1, "write memory"); r.Failed || !strings.Contains(r.Output, "[OK]") {
		t.Fatalf("%+v", r)
	}
	if res := configure(t, s2, "interface eth0", "description to R1", "exit", "write memory"); res[3].Command != "write memory" || !strings.Contains(res[3].Output, "[OK]") {
		t.Fatalf("%+v", res)
	}

	// "exit" at the top of vtysh drops to the root shell; the driver brings vtysh back.
	if r := mustRun(t, s2, "exit"); r.Failed || s2.Prompt() != "R2#" && s2.Prompt() != "frr#" {
		t.Fatalf("%+v prompt %q", r, s2.Prompt())
	}
	if r := mustRun(t, s2, "show ip ospf neighbor"); r.Failed || !strings.Contains(r.Output, "Full") {
		t.Fatalf("%+v", r)
	}
	// Refused before it is sent.
	if r := mustRun(t, s2, "start-shell"); !r.Blocked {
		t.Fatalf("%+v", r)
	}
	// An unknown command is a failed command, not a broken session.
	if r := mustRun(t, s2, "show ip frobnicate"); !r.Failed || !strings.HasPrefix(r.Error, "% ") {
		t.Fatalf("%+v", r)
	}
}

// BenchmarkRealFRR measures what a device tool call costs on a real FRR router: "connect" opens
// the console (detection from the node, wake-up, paging off), runs "show running-config" and
// closes it; "show" reuses an open session.
func BenchmarkRealFRR(b *testing.B) {
	lab := frrlab.Start(b, frrlab.Options{Routers: 1, Links: []frrlab.Link{}})
	r := lab.Routers[0]
	ctx := context.Background()
	check := func(res devices.CommandResult, err error) {
		if err != nil || res.Failed || !strings.Contains(res.Output, "frr version") {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.Run("connect", func(b *testing.B) {
		for b.Loop() {
			s, err := devices.Connect(ctx, frrTarget(r), "", devices.Options{})
			if err != nil {
				b.Fatal(err)
			}
			check(s.Run(ctx, "show running-config"))
			s.Close()
		}
	})
	b.Run("show", func(b *testing.B) {
		s, err := devices.Connect(ctx, frrTarget(r), "", devices.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			check(s.Run(ctx, "show running-config"))
		}
	})
}

// A real Linux host (bash in a network namespace, linked to a real FRR router) whose console asks
// for a login first, as a QEMU Linux VM's does, detected from its image name: the session logs
// in with the configured user name and password, reads the exit status of every command (a
// failed one is failed, with its output), and stops a ping without a count with Ctrl-C, keeping
// its replies and statistics.
func TestRealLinuxHost(t *testing.T) {
	lab := frrlab.Start(t, frrlab.Options{Routers: 1, Hosts: 1, Login: &frrlab.Login{User: "debian", Password: "s3cret"}})
	r1, h := lab.Routers[0], lab.Hosts[0]
	if _, err := r1.Vtysh("configure terminal", "interface eth0", "ip address 10.2.0.1/24"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := devices.Target{NodeID: h.Namespace, Name: h.Name, NodeType: "qemu", Image: "debian-12-genericcloud-amd64.qcow2",
		ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: h.ConsolePort}
	if _, err := devices.Connect(ctx, target, "", devices.Options{}); !errors.Is(err, devices.ErrLoginRequired) {
		t.Fatalf("without credentials: %v", err)
	}
	s, err := devices.Connect(ctx, target, "", devices.Options{Username: "debian", Password: "s3cret", Policy: devices.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Profile().Name != "linux" || s.Prompt() != "root@host1:~#" {
		t.Fatalf("profile %s prompt %q", s.Profile().Name, s.Prompt())
	}
	if r := mustRun(t, s, "false"); !r.Failed || r.Error != "exit status 1" || r.Output != "" {
		t.Fatalf("false: %+v", r)
	}
	if r := mustRun(t, s, "ls /nonexistent"); !r.Failed || r.Error != "exit status 2" || !strings.Contains(r.Output, "No such file or directory") {
		t.Fatalf("ls: %+v", r)
	}
	// A command that ends its own list, and a prompt that changes with the directory.
	if r := mustRun(t, s, "cd /tmp;"); r.Failed || r.Prompt != "root@host1:/tmp#" {
		t.Fatalf("cd: %+v", r)
	}
	if r := mustRun(t, s, "cd"); r.Failed || r.Prompt != "root@host1:~#" {
		t.Fatalf("cd: %+v", r)
	}
	if r := mustRun(t, s, "ip addr add 10.2.0.10/24 dev eth0"); r.Failed || r.Output != "" {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "ip -br addr show dev eth0"); r.Failed || !strings.Contains(r.Output, "10.2.0.10/24") || strings.Contains(r.Output, "__rc") {
		t.Fatalf("%+v", r)
	}
	start := time.Now()
	r := mustRun(t, s, "ping 10.2.0.1")
	if r.Failed || !r.Stopped || !strings.Contains(r.Output, "bytes from 10.2.0.1") || !strings.Contains(r.Output, "packets transmitted") ||
		!strings.Contains(r.Output, "[stopped after 5s with Ctrl-C") || strings.Contains(r.Output, "__rc") {
		t.Fatalf("ping: %+v", r)
	}
	if got := devices.ParsePing(r.Output); !got.Read || got.Replies < 3 || got.Sent < got.Replies {
		t.Fatalf("the ping read: %+v from %q", got, r.Output)
	}
	if cmd, _ := s.Profile().PingCommand(netip.MustParseAddr("10.2.0.1"), 5); !strings.HasPrefix(cmd, "ping -c 5") {
		t.Fatalf("the host's counted ping: %q", cmd)
	}
	if got := devices.ParsePing(mustRun(t, s, "ping -c 3 10.2.0.1").Output); got.Sent != 3 || got.Replies != 3 {
		t.Fatalf("a counted ping read: %+v", got)
	}
	if a := s.Profile().Addressing(mustRun(t, s, s.Profile().ConfigCommand()).Output); !slices.ContainsFunc(a.Addresses, func(x devices.Address) bool {
		return x.Prefix.String() == "10.2.0.10/24" && x.NamesInterface("eth0")
	}) {
		t.Fatalf("the host's addresses: %+v", a)
	}
	if d := time.Since(start); d > devices.OpenEndedRun+5*time.Second {
		t.Fatalf("ping took %s", d)
	}
	if r := mustRun(t, s, "true"); r.Failed || s.Prompt() != "root@host1:~#" {
		t.Fatalf("after the ping: %+v prompt %q", r, s.Prompt())
	}
}
