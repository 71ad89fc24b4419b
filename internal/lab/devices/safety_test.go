package devices

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	p := DefaultPolicy()
	blocked := []string{
		"traceroute 10.0.0.1", "TRACEROUTE 10.0.0.1", "  tracert 8.8.8.8", "tracepath 10.0.0.1", "trace 10.0.0.1",
		"tracer 1.1.1.1", "ping -f 10.0.0.1", "ping 10.0.0.1 -f", "ping -fc 5 10.0.0.1", "debug ip packet", "deb all",
		"DEBUG ospf events", "test aaa group radius", "do debug ip ospf", "run traceroute 1.1.1.1",
		"sudo traceroute 1.1.1.1", "timeout 5 traceroute 1.1.1.1", "echo hi; traceroute 1.1.1.1",
		"ls && tracepath x", "X=1 traceroute y",
		// destructive
		"reload", "reload in 5", "relo", "do reload", "erase startup-config", "erase nvram:", "write erase", "wr er",
		"WRITE ERASE", "format flash:", "delete flash:vlan.dat", "delete /force /recursive flash:/config",
		"delete nvram:startup-config", "request system reboot", "req sys reb", "request system zeroize media",
		"reboot", "reset saved-configuration", "factory-reset all", "boot system flash:c7200.bin", "halt",
		"shutdown -h now", "sudo reboot", "init 6",
	}
	for _, cmd := range blocked {
		if ok, reason := p.Check(cmd); ok || reason == "" {
			t.Errorf("%q should be blocked", cmd)
		}
	}
	allowed := []string{
		"show ip interface brief", "show debugging", "undebug all", "no debug all", "ping 10.0.0.1",
		"ping 10.0.0.1 -c 5", "show running-config | include debug", "show test", "testing", "debugging",
		"show ip ospf neighbor", "configure terminal", "interface GigabitEthernet0/0", "shutdown", "no shutdown",
		"write memory", "wr", "copy running-config startup-config", "delete interfaces ge-0/0/0 unit 0",
		"show reload", "display current-configuration", "for i in 1 2; do echo $i; done", "ip 10.0.0.1/24",
		"set pcname PC1", "show ip route", "terminal length 0", "dir flash:", "show boot", "reset counters",
		"", "   ",
	}
	for _, cmd := range allowed {
		if ok, reason := p.Check(cmd); !ok {
			t.Errorf("%q should be allowed: %s", cmd, reason)
		}
	}
}

func TestPolicyReasons(t *testing.T) {
	p := DefaultPolicy()
	_, reason := p.Check("traceroute 1.1.1.1")
	if reason != "Command 'traceroute 1.1.1.1' is not allowed because it matches the forbidden pattern 'traceroute'. This command may run longer than the tool timeout or leave the device console unavailable for subsequent commands." {
		t.Fatalf("reason %q", reason)
	}
	_, reason = p.Check("wr er")
	if !strings.Contains(reason, "'write erase'") || !strings.Contains(reason, "reload, erase or reformat") {
		t.Fatalf("reason %q", reason)
	}
}

func TestPolicyPlatformRules(t *testing.T) {
	p := DefaultPolicy()
	cases := []struct {
		platform, cmd string
		ok            bool
	}{
		{"vpcs", "quit", false},
		{"vpcs", "q", false},
		{"vpcs", "QUIT", false},
		{"vpcs", "disconnect", false},
		{"vpcs", "!ls /", false},
		{"vpcs", "rlogin 10.0.0.1 23", false},
		{"vpcs", "show ip", true},
		{"vpcs", "dhcp", true},
		{"huawei_vrp", "quit", true},
		{"cisco_ios", "quit", true},
		{"linux", "exit", false},
		{"linux", "logout", false},
		{"linux", "exec sh", false},
		{"linux", "ip addr", true},
		{"cisco_ios", "exit", true},
		{"cisco_ios", "reload", false},
	}
	for _, c := range cases {
		ok, reason := p.CheckPlatform(c.platform, c.cmd)
		if ok != c.ok {
			t.Errorf("%s %q: ok=%v (%s), want %v", c.platform, c.cmd, ok, reason, c.ok)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forbidden_commands.txt")
	content := "# lab rules\n\nclear ip bgp\n  Show Tech-Support  \nping -f\n# debug is already there\nmonitor\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"clear ip bgp *", "show tech-support", "SHOW TECH-SUPPORT detail", "monitor capture", "traceroute x", "sh tech"} {
		if ok, _ := p.Check(cmd); ok {
			t.Errorf("%q should be blocked", cmd)
		}
	}
	for _, cmd := range []string{"clear counters", "show version", "show technical"} {
		if ok, reason := p.Check(cmd); !ok {
			t.Errorf("%q should be allowed: %s", cmd, reason)
		}
	}
	if n := len(p.Forbidden()); n != len(DefaultForbidden)+3 {
		t.Errorf("patterns %q (duplicates must collapse)", p.Forbidden())
	}
	if _, err := LoadPolicy(filepath.Join(t.TempDir(), "missing.txt")); err == nil || !strings.Contains(err.Error(), "forbidden commands file") {
		t.Fatalf("missing file: %v", err)
	}
	if p, err := LoadPolicy(""); err != nil || len(p.Forbidden()) != len(DefaultForbidden) {
		t.Fatalf("empty path: %v", err)
	}
	var nilPolicy *Policy
	if ok, _ := nilPolicy.Check("reload"); ok {
		t.Fatal("a nil policy must still refuse destructive commands")
	}
}
