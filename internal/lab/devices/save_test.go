package devices_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// Every platform whose running configuration a stop would lose, and that has a way to keep it,
// names that way: a save point runs it before GNS3 stops the node.
func TestSaveCommandPerPlatform(t *testing.T) {
	want := map[string]string{
		"vpcs": "save", "cisco_ios": "write memory", "arista_eos": "write memory", "ruijie": "write memory",
		"frr": "write memory", "huawei_vrp": "save", "vyos": "save (in configuration mode)",
		// These keep every change as it is made (a Junos commit, RouterOS), or have nothing a
		// command could keep (a shell's addresses; OpenWrt's files change only by uci commit).
		"juniper_junos": "", "mikrotik_routeros": "", "linux": "", "openwrt": "",
	}
	for _, p := range devices.Profiles() {
		cmd, inConfig := p.SaveCommand()
		got := cmd
		if inConfig {
			got += " (in configuration mode)"
		}
		w, known := want[p.Name]
		if !known {
			t.Errorf("profile %s: say whether it has a save command", p.Name)
			continue
		}
		if got != w {
			t.Errorf("%s saves with %q, want %q", p.Name, got, w)
		}
	}
}

// VPCS "save" writes startup.vpc in its working directory, which it replays when it starts:
// the address set on the console survives a stop.
func TestVPCSSaveKeepsTheAddressAcrossARestart(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	n := lab.Nodes[0]
	s := openVPCS(t, n, nil, devices.Options{})
	if r := mustRun(t, s, "ip 10.31.0.1/24 10.31.0.254"); r.Failed {
		t.Fatalf("%+v", r)
	}
	r, err := s.SaveConfig(context.Background())
	if err != nil || r.Failed || !strings.Contains(r.Output, "done") {
		t.Fatalf("save: %+v %v", r, err)
	}
	s.Close()
	saved, err := os.ReadFile(filepath.Join(n.Dir, "startup.vpc"))
	if err != nil || !strings.Contains(string(saved), "ip 10.31.0.1 10.31.0.254 24") {
		t.Fatalf("startup.vpc: %q %v", saved, err)
	}
	lab.Restart(0)
	s = openVPCS(t, n, nil, devices.Options{})
	if r := mustRun(t, s, "show ip"); !strings.Contains(r.Output, "10.31.0.1/24") || !strings.Contains(r.Output, "10.31.0.254") {
		t.Fatalf("after a restart:\n%s", r.Output)
	}
}

// Huawei asks before it overwrites the next-startup file; saving is what was asked, so the
// question is answered, and only for save.
func TestHuaweiSaveAnswersItsQuestion(t *testing.T) {
	saved := false
	c := startScripted(t, "<HUAWEI>", func(c *scriptedConsole, l string) string {
		switch l {
		case "screen-length 0 temporary", "undo terminal monitor":
			return ""
		case "save":
			c.setPrompt("Warning: The current configuration will be written to the device. Continue? [Y/N]:")
			return ""
		case "y":
			saved = true
			c.setPrompt("<HUAWEI>")
			return "Now saving the current configuration to the slot 1\nInfo: Save the configuration successfully."
		}
		return "Error: Unrecognized command found at '^' position."
	})
	s := openScripted(t, c)
	r, err := s.SaveConfig(context.Background())
	if err != nil || r.Failed || !saved || !strings.Contains(r.Output, "successfully") {
		t.Fatalf("%+v %v (saved %v)", r, err, saved)
	}
}

// VyOS saves from configuration mode.
func TestVyOSSavesInConfigurationMode(t *testing.T) {
	editing, saved := false, false
	c := startGreeting(t, "Welcome to VyOS!\n", "vyos@vyos:~$ ", func(c *scriptedConsole, l string) string {
		switch {
		case strings.HasPrefix(l, "set terminal "):
			return ""
		case l == "configure":
			editing = true
			c.setPrompt("vyos@vyos# ")
			return "[edit]"
		case editing && l == "save":
			saved = true
			return "Saving configuration to '/config/config.boot'...\nDone\n[edit]"
		case editing && l == "commit":
			return "No configuration changes to commit\n[edit]"
		case editing && l == "exit":
			editing = false
			c.setPrompt("vyos@vyos:~$ ")
			return "exit"
		}
		return "\n  Invalid command: [" + l + "]\n"
	})
	s := connectTarget(t, c, devices.Target{Name: "V1", NodeType: "qemu", Tags: []string{"device_type:vyos"}}, devices.Options{})
	r, err := s.SaveConfig(context.Background())
	if err != nil || r.Failed || !saved || !strings.Contains(r.Output, "config.boot") || s.Mode() != devices.ModeUser {
		t.Fatalf("%+v %v (saved %v, mode %s)", r, err, saved, s.Mode())
	}
	if i := slices.Index(c.sent(), "save"); i < 1 || c.sent()[i-1] != "configure" {
		t.Fatalf("save not sent in configuration mode: %q", c.sent())
	}
}

// A platform without a save command says so and sends nothing.
func TestSaveWithoutASaveCommand(t *testing.T) {
	c := startScripted(t, "root@box:/# ", func(c *scriptedConsole, l string) string { return "" })
	s := connectTarget(t, c, devices.Target{Name: "box", NodeType: "docker", Image: "alpine"}, devices.Options{})
	before := len(c.sent())
	if _, err := s.SaveConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "no command that saves") {
		t.Fatalf("%v", err)
	}
	if len(c.sent()) != before {
		t.Fatalf("sent %q", c.sent()[before:])
	}
}
