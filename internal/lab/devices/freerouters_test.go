package devices_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
)

// fakeVtysh answers like the console of GNS3's FRR appliance as measured on FRRouting 10.3:
// vtysh prompts that follow the hostname, CIDR addresses, "exit"-terminated interface blocks,
// a ping that runs until Ctrl-C, and "exit" at the top dropping to the root shell.
type fakeVtysh struct {
	hostname string
	mode     string // "", "config", "config-if", "config-router", "shell"
	iface    string
	addrs    map[string][]string
	saved    bool
}

func (f *fakeVtysh) prompt() string {
	switch f.mode {
	case "shell":
		return "root@frr:~# "
	case "":
		return f.hostname + "# "
	}
	return f.hostname + "(" + f.mode + ")# "
}

func (f *fakeVtysh) runningConfig() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Building configuration...\n\nCurrent configuration:\n!\nfrr version 10.3\nfrr defaults traditional\nhostname %s\nno ipv6 forwarding\n!\n", f.hostname)
	names := make([]string, 0, len(f.addrs))
	for n := range f.addrs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "interface %s\n", n)
		for _, a := range f.addrs[n] {
			fmt.Fprintf(&b, " ip address %s\n", a)
		}
		b.WriteString("exit\n!\n")
	}
	b.WriteString("end")
	return b.String()
}

func (f *fakeVtysh) reply(c *scriptedConsole, l string) string {
	defer func() { c.setPrompt(f.prompt()) }()
	w := strings.Fields(l)
	if f.mode == "shell" {
		if l == "vtysh" {
			f.mode = ""
			return "\nHello, this is FRRouting (version 10.3).\nCopyright 1996-2005 Kunihiro Ishiguro, et al.\n"
		}
		return "bash: " + w[0] + ": command not found"
	}
	switch {
	case l == "terminal length 0":
		return ""
	case l == "configure terminal" && f.mode == "":
		f.mode = "config"
	case l == "end":
		f.mode, f.iface = "", ""
	case l == "exit":
		switch f.mode {
		case "":
			f.mode = "shell"
		case "config":
			f.mode = ""
		default:
			f.mode, f.iface = "config", ""
		}
	case len(w) == 2 && w[0] == "hostname" && f.mode == "config":
		f.hostname = w[1]
	case len(w) == 2 && w[0] == "interface" && f.mode != "":
		f.mode, f.iface = "config-if", w[1]
	case len(w) == 3 && w[0] == "ip" && w[1] == "address" && f.mode == "config-if":
		if _, _, err := net.ParseCIDR(w[2]); err != nil {
			return "% Malformed address"
		}
		f.addrs[f.iface] = append(f.addrs[f.iface], w[2])
	case l == "router ospf" && f.mode != "":
		f.mode = "config-router"
	case l == "show running-config" && f.mode == "":
		return f.runningConfig()
	case l == "write memory" && f.mode == "", l == "do write memory" && f.mode != "":
		f.saved = true
		return "Note: this version of vtysh never writes vtysh.conf\nBuilding Configuration...\nIntegrated configuration saved to /etc/frr/frr.conf\n[OK]"
	case l == "show logging" && f.mode == "":
		// A pager that slipped through (VTYSH_PAGER=less): Ctrl-C does nothing, "q" leaves.
		c.keepPaging()
		return "2026/12/01 14:00:01 ZEBRA: zebra 10.3 starting\n:"
	case l == "show version" && f.mode == "":
		return "FRRouting 10.3 (" + f.hostname + ") on Linux(6.1.0-31-amd64)."
	case len(w) == 2 && w[0] == "ping" && f.mode == "":
		c.keepRunning("--- " + w[1] + " ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss, time 1001ms\nrtt min/avg/max/mdev = 0.412/0.462/0.512/0.050 ms")
		return "PING " + w[1] + " (" + w[1] + ") 56(84) bytes of data.\n64 bytes from " + w[1] + ": icmp_seq=1 ttl=64 time=0.512 ms\n64 bytes from " + w[1] + ": icmp_seq=2 ttl=64 time=0.412 ms"
	default:
		return "% Unknown command: " + l
	}
	return ""
}

func startFakeVtysh(t *testing.T) (*scriptedConsole, *fakeVtysh) {
	f := &fakeVtysh{hostname: "frr", addrs: map[string][]string{}}
	c := startScripted(t, f.prompt(), f.reply)
	return c, f
}

// connectTarget connects as the device tools do, from what GNS3 says of the node.
func connectTarget(t *testing.T, c *scriptedConsole, target devices.Target, opts devices.Options) *devices.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(c.ln.Addr().String())
	target.ConsoleType, target.ConsoleHost = "telnet", host
	target.ConsolePort, _ = strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := devices.Connect(ctx, target, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFRRDetectedFromTemplateImageOrPrompt(t *testing.T) {
	for _, target := range []devices.Target{
		{Name: "R1", NodeType: "qemu", TemplateName: "FRR"},
		{Name: "R1", NodeType: "qemu", Image: "frr-10.3.qcow2"},
		{Name: "R1", NodeType: "qemu"}, // nothing but the "frr# " prompt
	} {
		c, _ := startFakeVtysh(t)
		s := connectTarget(t, c, target, devices.Options{})
		if s.Profile().Name != "frr" || s.Prompt() != "frr#" || s.Mode() != devices.ModePrivileged {
			t.Fatalf("%+v: profile %s prompt %q mode %s", target, s.Profile().Name, s.Prompt(), s.Mode())
		}
		if !slices.Contains(c.sent(), "terminal length 0") {
			t.Fatalf("paging not turned off: %q", c.sent())
		}
	}
}

func TestFRRShowConfigureAndReadBack(t *testing.T) {
	c, _ := startFakeVtysh(t)
	s := connectTarget(t, c, devices.Target{Name: "R1", NodeType: "qemu", TemplateName: "FRR"}, devices.Options{})
	p := s.Profile()
	before := mustRun(t, s, p.ConfigCommand())
	if before.Failed || !strings.Contains(before.Output, "hostname frr") {
		t.Fatalf("%+v", before)
	}
	lines := []string{"hostname R1", "interface eth0", "ip address 10.1.0.1/24", "exit"}
	res, err := s.Configure(context.Background(), lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Failed {
			t.Fatalf("%+v", res)
		}
	}
	// The prompt follows the hostname, in and out of configuration mode.
	if s.Prompt() != "R1#" || s.Mode() != devices.ModePrivileged {
		t.Fatalf("prompt %q mode %s", s.Prompt(), s.Mode())
	}
	wantSent := []string{"configure terminal", "hostname R1", "interface eth0", "ip address 10.1.0.1/24", "exit", "end"}
	if sent := c.sent(); !slices.Equal(sent[len(sent)-len(wantSent):], wantSent) {
		t.Fatalf("sent %q", sent)
	}
	after := mustRun(t, s, p.ConfigCommand())
	cfg := p.ConfigLines(after.Output)
	if !slices.Contains(cfg, "interface eth0 | ip address 10.1.0.1/24") || slices.Contains(cfg, "exit") {
		t.Fatalf("config lines %q", cfg)
	}
	for _, l := range lines[:3] {
		if v := p.Verify(l, cfg); v != devices.VerdictTook {
			t.Errorf("%q: %s", l, v)
		}
	}
	added, removed := devices.DiffConfig(p.ConfigLines(before.Output), cfg)
	if !slices.Equal(added, []string{"hostname R1", "interface eth0", "interface eth0 | ip address 10.1.0.1/24"}) ||
		!slices.Equal(removed, []string{"hostname frr"}) {
		t.Fatalf("diff +%q -%q", added, removed)
	}

	if r := mustRun(t, s, "write memory"); r.Failed || !strings.HasSuffix(r.Output, "[OK]") {
		t.Fatalf("%+v", r)
	}
	// Among configuration lines, vtysh knows "write" only behind "do".
	res, err = s.Configure(context.Background(), []string{"interface eth0", "exit", "write memory"})
	if err != nil || len(res) != 3 || res[2].Failed || res[2].Command != "write memory" || !slices.Contains(c.sent(), "do write memory") {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = s.Configure(context.Background(), []string{"interface eth1", "ip address 10.1.0.300/24", "ip address 10.2.0.1/24"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[1].Failed || res[1].Error != "% Malformed address" || s.Mode() != devices.ModePrivileged {
		t.Fatalf("a rejected line must stop the job and leave configuration mode: %+v", res)
	}
	if r := mustRun(t, s, "show ip bgp summary json please"); !r.Failed || !strings.HasPrefix(r.Error, "% Unknown command") {
		t.Fatalf("%+v", r)
	}
}

func TestFRRPingIsStoppedWithCtrlC(t *testing.T) {
	c, _ := startFakeVtysh(t)
	s := connectTarget(t, c, devices.Target{Name: "R1", NodeType: "qemu", TemplateName: "FRR"}, devices.Options{TimeoutScale: 0.1})
	start := time.Now()
	r := mustRun(t, s, "ping 10.1.0.2")
	if r.Failed || !r.Stopped || r.TimedOut {
		t.Fatalf("an endless ping's expected end is not a failure: %+v", r)
	}
	for _, want := range []string{"64 bytes from 10.1.0.2: icmp_seq=2", "2 packets transmitted, 2 received, 0% packet loss", "[stopped after 500ms with Ctrl-C"} {
		if !strings.Contains(r.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Output)
		}
	}
	if strings.Contains(r.Output, "^C") {
		t.Errorf("the echoed interrupt belongs to no output:\n%s", r.Output)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("stopped after %s, before its deadline", d)
	}
	// The console is back at its prompt for the next command.
	if r := mustRun(t, s, "show version"); r.Failed || !strings.HasPrefix(r.Output, "FRRouting 10.3") {
		t.Fatalf("%+v", r)
	}

	// A pager that slipped through is left with "q" once Ctrl-C did not help.
	r = mustRun(t, s, "show logging")
	if !r.Failed || !r.TimedOut || !strings.Contains(r.Output, "zebra 10.3 starting") || s.Prompt() != "frr#" {
		t.Fatalf("%+v prompt %q", r, s.Prompt())
	}
	if r := mustRun(t, s, "show version"); r.Failed {
		t.Fatalf("%+v", r)
	}
}

func TestFRRExitAtTopLevelReturnsToVtysh(t *testing.T) {
	c, _ := startFakeVtysh(t)
	s := connectTarget(t, c, devices.Target{Name: "R1", NodeType: "qemu", TemplateName: "FRR"}, devices.Options{})
	r := mustRun(t, s, "exit")
	if r.Failed || s.Prompt() != "frr#" {
		t.Fatalf("%+v prompt %q", r, s.Prompt())
	}
	if r := mustRun(t, s, "show version"); r.Failed {
		t.Fatalf("%+v", r)
	}

	// A console someone left at the root shell is brought back to vtysh on connect.
	s.Close()
	raw, err := net.Dial("tcp", c.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte("exit\r"))
	var screen []byte
	buf := make([]byte, 256)
	for !strings.HasSuffix(string(screen), "root@frr:~# ") {
		raw.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := raw.Read(buf)
		if err != nil {
			t.Fatalf("%v after %q", err, screen)
		}
		screen = append(screen, buf[:n]...)
	}
	raw.Close()
	s2 := connectTarget(t, c, devices.Target{Name: "R1", NodeType: "qemu", TemplateName: "FRR"}, devices.Options{})
	if s2.Profile().Name != "frr" || s2.Prompt() != "frr#" {
		t.Fatalf("profile %s prompt %q", s2.Profile().Name, s2.Prompt())
	}
}

func TestFRRUnknownDeviceStillFailsClearly(t *testing.T) {
	c := startScripted(t, "??? ", func(c *scriptedConsole, l string) string { return "" })
	host, port, _ := net.SplitHostPort(c.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := devices.Connect(ctx, devices.Target{Name: "X", NodeType: "qemu", TemplateName: "Mystery", Image: "m.qcow2",
		ConsoleType: "telnet", ConsoleHost: host, ConsolePort: p}, "", devices.Options{WakeAttempts: 1, WakeTimeout: 200 * time.Millisecond})
	if !errors.Is(err, devices.ErrPlatformUnknown) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{`template "Mystery"`, `image "m.qcow2"`, `node type "qemu"`, `console prompt "??? "`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %s", err, want)
		}
	}
}

func TestGuessedPlatformCorrectedByPrompt(t *testing.T) {
	// A Docker node's image says nothing of a network OS, so it is guessed a shell, but its
	// console is vtysh.
	c, _ := startFakeVtysh(t)
	s := connectTarget(t, c, devices.Target{Name: "R1", NodeType: "docker", Image: "alpine:3.20"}, devices.Options{})
	if s.Profile().Name != "frr" {
		t.Fatalf("profile %s", s.Profile().Name)
	}
	// A tag is the user's word: a prompt that contradicts it is an error, not a correction.
	s.Close()
	host, port, _ := net.SplitHostPort(c.ln.Addr().String())
	pn, _ := strconv.Atoi(port)
	_, err := devices.Connect(context.Background(), devices.Target{Name: "R1", Tags: []string{"device_type:vyos"},
		ConsoleType: "telnet", ConsoleHost: host, ConsolePort: pn}, "", devices.Options{WakeAttempts: 1})
	if err == nil || !strings.Contains(err.Error(), "looks like frr") {
		t.Fatalf("%v", err)
	}
}

func TestLinuxPingWithoutCountIsStopped(t *testing.T) {
	c := startScripted(t, "root@box:/# ", func(c *scriptedConsole, l string) string {
		if l == "ping 10.0.0.2" {
			c.keepRunning("--- 10.0.0.2 ping statistics ---\n1 packets transmitted, 1 packets received, 0% packet loss")
			return "PING 10.0.0.2 (10.0.0.2): 56 data bytes\n64 bytes from 10.0.0.2: seq=0 ttl=64 time=0.100 ms"
		}
		if l == "sleep 100" {
			c.keepRunning("")
			return ""
		}
		return "ok"
	})
	s := connectTarget(t, c, devices.Target{Name: "box", NodeType: "docker", Image: "alpine"}, devices.Options{TimeoutScale: 0.1})
	r := mustRun(t, s, "ping 10.0.0.2")
	if r.Failed || !r.Stopped || !strings.Contains(r.Output, "0% packet loss") {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "echo hi"); r.Output != "ok" {
		t.Fatalf("%+v", r)
	}
}

func TestVyOSConfigureCommitAndBanner(t *testing.T) {
	cfg := []string{"set interfaces ethernet eth0 hw-id '0c:2a:11:00:00:00'", "set system host-name 'vyos'"}
	editing := false
	var staged []string
	// The user is not "vyos", so the prompt alone would pass for a Linux shell; the banner tells.
	banner := "Welcome to VyOS!\n\n   ┌── ┐\n   . VyOS 1.4.0\n   └ ──┘\n\n"
	c := startGreeting(t, banner, "admin@vyos:~$ ", func(c *scriptedConsole, l string) string {
		w := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "set terminal "):
			return ""
		case l == "configure" && !editing:
			editing = true
			c.setPrompt("admin@vyos# ")
			return "[edit]"
		case editing && w[0] == "set" && w[len(w)-1] != "address":
			staged = append(staged, "set "+strings.Join(w[1:len(w)-1], " ")+" '"+w[len(w)-1]+"'")
			return "[edit]"
		case editing && w[0] == "set":
			return "\n  Configuration path: [" + strings.Join(w[1:], " ") + "] requires a value\n\n  Set failed\n\n[edit]"
		case editing && l == "commit":
			cfg = append(cfg, staged...)
			staged = nil
			return "[edit]"
		case editing && l == "exit":
			if len(staged) > 0 {
				return "Cannot exit: configuration modified.\nUse 'exit discard' to discard the changes and exit.\n[edit]"
			}
			editing = false
			c.setPrompt("admin@vyos:~$ ")
			return "exit"
		case !editing && l == "show configuration commands":
			return strings.Join(cfg, "\n")
		}
		return "\n  Invalid command: [" + l + "]\n"
	})
	s := connectTarget(t, c, devices.Target{Name: "V1", NodeType: "qemu"}, devices.Options{})
	if s.Profile().Name != "vyos" || s.Mode() != devices.ModeUser {
		t.Fatalf("profile %s mode %s", s.Profile().Name, s.Mode())
	}
	res, err := s.Configure(context.Background(), []string{"set interfaces ethernet eth0 address 10.1.0.1/24"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Failed || res[0].Output != "" || res[1].Command != "commit" || res[1].Failed || s.Mode() != devices.ModeUser {
		t.Fatalf("%+v mode %s", res, s.Mode())
	}
	p := s.Profile()
	read := p.ConfigLines(mustRun(t, s, p.ConfigCommand()).Output)
	if v := p.Verify("set interfaces ethernet eth0 address 10.1.0.1/24", read); v != devices.VerdictTook {
		t.Fatalf("%s in %q", v, read)
	}
	if v := p.Verify("delete system host-name", read); v != devices.VerdictNotTook {
		t.Fatalf("delete: %s", v)
	}
	res, err = s.Configure(context.Background(), []string{"set interfaces ethernet eth1 address"})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Failed || res[0].Error != "Set failed" {
		t.Fatalf("%+v", res)
	}
	if r := mustRun(t, s, "shwo version"); !r.Failed || !strings.HasPrefix(r.Error, "Invalid command") {
		t.Fatalf("%+v", r)
	}
}

func TestRouterOSAddressAndExport(t *testing.T) {
	var items []string
	c := startScripted(t, "[admin@MikroTik] > ", func(c *scriptedConsole, l string) string {
		w := strings.Fields(l)
		switch {
		case w[0] == "/ip" && len(w) > 3 && w[1] == "address" && w[2] == "add":
			var props []string
			for _, kv := range w[3:] {
				if !strings.Contains(kv, "=") {
					return "expected end of command (line 1 column 17)"
				}
				props = append(props, kv)
			}
			addr, _, _ := strings.Cut(strings.TrimPrefix(props[0], "address="), "/")
			ip := net.ParseIP(addr).To4()
			props = append(props, fmt.Sprintf("network=%d.%d.%d.0", ip[0], ip[1], ip[2]))
			items = append(items, "/ip address add "+strings.Join(props, " "))
			return ""
		case l == "/export terse":
			return "# 2024-03-01 10:00:00 by RouterOS 7.14\n# software id = \n#\n" + strings.Join(items, "\n") + "\n/system identity set name=MikroTik"
		case l == "/ping 10.1.0.2":
			c.keepRunning("    sent=2 received=2 packet-loss=0% min-rtt=412us avg-rtt=462us max-rtt=512us")
			return "  SEQ HOST                                     SIZE TTL TIME       STATUS\n    0 10.1.0.2                                   56  64 512us\n    1 10.1.0.2                                   56  64 412us"
		}
		return "bad command name " + w[0] + " (line 1 column 1)"
	})
	s := connectTarget(t, c, devices.Target{Name: "M1", NodeType: "qemu", Image: "chr-7.14.img"}, devices.Options{TimeoutScale: 0.1})
	p := s.Profile()
	if p.Name != "mikrotik_routeros" {
		t.Fatalf("profile %s", p.Name)
	}
	line := "/ip address add address=10.1.0.1/24 interface=ether1"
	res, err := s.Configure(context.Background(), []string{line})
	if err != nil || len(res) != 1 || res[0].Failed {
		t.Fatalf("%+v %v", res, err)
	}
	cfg := p.ConfigLines(mustRun(t, s, p.ConfigCommand()).Output)
	if v := p.Verify(line, cfg); v != devices.VerdictTook {
		t.Fatalf("%s in %q", v, cfg)
	}
	if v := p.Verify("/ip address add address=10.9.0.1/24 interface=ether1", cfg); v != devices.VerdictNotTook {
		t.Fatalf("absent address: %s", v)
	}
	r := mustRun(t, s, "/ping 10.1.0.2")
	if r.Failed || !r.Stopped || !strings.Contains(r.Output, "packet-loss=0%") {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "/ip address add 10.1.0.1/24"); !r.Failed || !strings.HasPrefix(r.Error, "expected end of command") {
		t.Fatalf("%+v", r)
	}
	if ok, _ := devices.DefaultPolicy().CheckPlatform(p.Name, "/system reboot"); ok {
		t.Fatal("/system reboot must be refused")
	}
	if ok, _ := devices.DefaultPolicy().CheckPlatform(p.Name, "/system/reset-configuration no-defaults=yes"); ok {
		t.Fatal("/system/reset-configuration must be refused")
	}
}

func TestOpenWrtUCI(t *testing.T) {
	uci := map[string]string{"network.lan": "interface", "network.lan.ipaddr": "192.168.1.1", "network.lan.proto": "static"}
	banner := "\n\nBusyBox v1.36.1 (2024-03-22 22:09:42 UTC) built-in shell (ash)\n\n  _______                     ________        __\n |       |.-----.-----.-----.|  |  |  |.----.|  |_\n |   -   ||  _  |  -__|     ||  |  |  ||   _||   _|\n |_______||   __|_____|__|__||________||__|  |____|\n          |__| W I R E L E S S   F R E E D O M\n -----------------------------------------------------\n OpenWrt 23.05.3, r23809-234f1a2efa\n -----------------------------------------------------\n"
	c := startGreeting(t, banner, "root@OpenWrt:~# ", func(c *scriptedConsole, l string) string {
		w := strings.Fields(l)
		switch {
		case len(w) == 3 && w[0] == "uci" && w[1] == "set":
			k, v, _ := strings.Cut(w[2], "=")
			uci[k] = strings.Trim(v, "'")
			return ""
		case l == "uci commit network":
			return ""
		case l == "uci show network":
			var out []string
			for k, v := range uci {
				out = append(out, k+"='"+v+"'")
			}
			slices.Sort(out)
			return strings.Join(out, "\n")
		}
		return "-ash: " + w[0] + ": not found"
	})
	s := connectTarget(t, c, devices.Target{Name: "W1", NodeType: "qemu"}, devices.Options{})
	p := s.Profile()
	if p.Name != "openwrt" {
		t.Fatalf("profile %s", p.Name)
	}
	if _, err := s.Configure(context.Background(), []string{"uci set network.lan.ipaddr='10.1.0.1'", "uci commit network"}); err != nil {
		t.Fatal(err)
	}
	cfg := p.ConfigLines(mustRun(t, s, "uci show network").Output)
	if v := p.Verify("uci set network.lan.ipaddr='10.1.0.1'", cfg); v != devices.VerdictTook {
		t.Fatalf("%s in %q", v, cfg)
	}
	if v := p.Verify("uci set network.lan.proto=dhcp", cfg); v != devices.VerdictNotTook {
		t.Fatalf("%s", v)
	}
	if r := mustRun(t, s, "frob"); !r.Failed {
		t.Fatalf("%+v", r)
	}
	if ok, _ := devices.DefaultPolicy().CheckPlatform(p.Name, "firstboot -y"); ok {
		t.Fatal("firstboot must be refused")
	}
}
