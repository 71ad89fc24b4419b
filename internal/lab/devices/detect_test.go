package devices

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDetectPlatform(t *testing.T) {
	cases := []struct {
		name string
		t    Target
		want string
	}{
		{"device_type tag wins", Target{NodeType: "vpcs", Tags: []string{"device_type:cisco_ios_telnet"}}, "cisco_ios"},
		{"platform tag", Target{NodeType: "qemu", Tags: []string{"owner:lab", "Platform: huawei"}}, "huawei_vrp"},
		{"builtin vpcs template tag", Target{Tags: []string{"device_type:gns3_vpcs_telnet"}}, "vpcs"},
		{"device_type before platform", Target{Tags: []string{"platform:juniper", "device_type:ruijie_os"}}, "ruijie"},
		{"vpcs node type", Target{NodeType: "vpcs"}, "vpcs"},
		{"docker is a shell", Target{NodeType: "docker", Image: "alpine:latest"}, "linux"},
		{"dynamips", Target{NodeType: "dynamips", Image: "c7200-adventerprisek9-mz.124-24.T5.image"}, "cisco_ios"},
		{"iou", Target{NodeType: "iou", Image: "i86bi_linux-adventerprisek9-ms.156-2.T"}, "cisco_ios"},
		{"iosv template", Target{NodeType: "qemu", TemplateName: "Cisco IOSv 15.9(3)M6"}, "cisco_ios"},
		{"iosv image", Target{NodeType: "qemu", Image: "vios-adventerprisek9-m.spa.159-3.m6.qcow2"}, "cisco_ios"},
		{"iosv-l2", Target{NodeType: "qemu", Image: "vios_l2-adventerprisek9-m.ssa.high_iron_20200929.qcow2"}, "cisco_ios"},
		{"csr1000v", Target{NodeType: "qemu", TemplateName: "Cisco CSR1000v 17.3.4a"}, "cisco_ios"},
		{"cat8000v", Target{NodeType: "qemu", Image: "c8000v-universalk9_8G_serial.17.09.01a.qcow2"}, "cisco_ios"},
		{"huawei ce", Target{NodeType: "qemu", TemplateName: "Huawei CE12800"}, "huawei_vrp"},
		{"huawei ne40", Target{NodeType: "qemu", Image: "ne40e-v800r011.qcow2"}, "huawei_vrp"},
		{"huawei ar", Target{NodeType: "qemu", TemplateName: "AR1000V"}, "huawei_vrp"},
		{"ruijie", Target{NodeType: "qemu", TemplateName: "Ruijie RG-S6000"}, "ruijie"},
		{"arista veos", Target{NodeType: "qemu", Image: "vEOS-lab-4.28.0F.vmdk"}, "arista_eos"},
		{"arista ceos container", Target{NodeType: "docker", TemplateName: "Arista cEOS"}, "arista_eos"},
		{"docker toolbox", Target{NodeType: "docker", Image: "gns3/ipterm:latest"}, "linux"},
		{"junos vmx", Target{NodeType: "qemu", TemplateName: "Juniper vMX vCP"}, "juniper_junos"},
		{"junos vsrx image", Target{NodeType: "qemu", Image: "junos-vsrx3-x86-64-20.4R1.10.qcow2"}, "juniper_junos"},
		{"ubuntu vm", Target{NodeType: "qemu", TemplateName: "Ubuntu Server 22.04"}, "linux"},
		{"case and spacing", Target{NodeType: "  VPCS "}, "vpcs"},
		{"frr template", Target{NodeType: "qemu", TemplateName: "FRR"}, "frr"},
		{"frr marketplace image", Target{NodeType: "qemu", Image: "frr-8.2.2.qcow2"}, "frr"},
		{"frr docker image beats the docker shell", Target{NodeType: "docker", Image: "frrouting/frr:v8.4.0"}, "frr"},
		{"template before image", Target{NodeType: "qemu", TemplateName: "VyOS 1.4", Image: "debian-12.qcow2"}, "vyos"},
		{"second image name", Target{NodeType: "qemu", Image: "empty30G.qcow2 vyos-1.3.8-amd64.iso"}, "vyos"},
		{"mikrotik chr", Target{NodeType: "qemu", TemplateName: "MikroTik CHR 7.14"}, "mikrotik_routeros"},
		{"chr image", Target{NodeType: "qemu", Image: "chr-7.14.2.img"}, "mikrotik_routeros"},
		{"openwrt", Target{NodeType: "qemu", Image: "openwrt-23.05.3-x86-64-generic-ext4-combined.img"}, "openwrt"},
		{"node type last", Target{NodeType: "docker", TemplateName: "Toolbox", Image: "gns3/toolbox"}, "linux"},
		{"image before node type", Target{NodeType: "dynamips", Image: "frr.qcow2"}, "frr"},
		{"debian vm image", Target{NodeType: "qemu", Image: "debian-12-genericcloud-amd64.qcow2"}, "linux"},
		{"busybox container", Target{NodeType: "docker", Image: "busybox:1.36"}, "linux"},
		{"a linux tag overrides an FRR template", Target{NodeType: "qemu", TemplateName: "FRR", Tags: []string{"device_type:linux"}}, "linux"},
		{"an untagged docker node is a shell", Target{NodeType: "docker", Image: "mycorp/webserver:2"}, "linux"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := DetectPlatform(c.t)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if p.Name != c.want {
				t.Fatalf("got %s, want %s", p.Name, c.want)
			}
		})
	}
}

func TestDetectPlatformErrors(t *testing.T) {
	_, err := DetectPlatform(Target{Name: "R1", Tags: []string{"device_type:nokia_sros"}})
	if err == nil || !strings.Contains(err.Error(), `"device_type:nokia_sros"`) || !strings.Contains(err.Error(), "supported:") {
		t.Fatalf("unsupported tag: %v", err)
	}
	_, err = DetectPlatform(Target{Name: "SW1", NodeType: "ethernet_switch"})
	if !errors.Is(err, ErrUnsupportedConsole) {
		t.Fatalf("switch: %v", err)
	}
	_, err = DetectPlatform(Target{Name: "X1", NodeType: "qemu", TemplateName: "Mystery OS", Image: "mystery.qcow2"})
	var derr *DetectError
	if !errors.As(err, &derr) || !errors.Is(err, ErrPlatformUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	for _, want := range []string{`"X1"`, `node type "qemu"`, `template "Mystery OS"`, `image "mystery.qcow2"`, "device_type:<platform>"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %s", err, want)
		}
	}
	// The documented order: tags, template, image, node type.
	msg := err.Error()
	if i, j, k, l := strings.Index(msg, "tags"), strings.Index(msg, "template"), strings.Index(msg, "image"), strings.Index(msg, "node type"); !(i < j && j < k && k < l) {
		t.Errorf("clues not in detection order: %s", msg)
	}
}

func TestDetectFromPrompt(t *testing.T) {
	cases := map[string]string{
		"PC1> ":                       "vpcs",
		"VPCS> ":                      "vpcs",
		"VPCS[1]> ":                   "vpcs",
		"R1>":                         "cisco_ios",
		"R1#":                         "cisco_ios",
		"R1(config)#":                 "cisco_ios",
		"Switch(config-if)#":          "cisco_ios",
		"<HUAWEI>":                    "huawei_vrp",
		"[~HUAWEI]":                   "huawei_vrp",
		"[*CE1-GE1/0/0]":              "huawei_vrp",
		"[R1-ospf-1]":                 "huawei_vrp",
		"root@vMX> ":                  "juniper_junos",
		"admin@srx1# ":                "juniper_junos",
		"root@4f2a9c:/# ":             "linux",
		"user@host:~$ ":               "linux",
		"/ # ":                        "linux",
		"~ # ":                        "linux",
		"bash-5.1# ":                  "linux",
		"[root@centos ~]# ":           "linux",
		"# ":                          "linux",
		"Press RETURN to get started": "",
		"Username: ":                  "",
		"[admin@MikroTik] > ":         "mikrotik_routeros",
		"[admin@R1] /ip address> ":    "mikrotik_routeros",
		"frr# ":                       "frr",
		"frr(config-if)# ":            "frr",
		"R1(config-router)# ":         "frr",
		"vyos@vyos:~$ ":               "vyos",
		"vyos@R1# ":                   "vyos",
		"root@OpenWrt:~# ":            "openwrt",
		"root@frr:~# ":                "linux",
	}
	for line, want := range cases {
		p := detectFromPrompt(line)
		got := ""
		if p != nil {
			got = p.Name
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}

func TestProfileModes(t *testing.T) {
	cases := []struct {
		profile, line string
		want          Mode
	}{
		{"vpcs", "PC1> ", ModeUser},
		{"vpcs", "PC1 : 10.0.0.1 255.255.255.0", ModeUnknown},
		{"cisco_ios", "R1>", ModeUser},
		{"cisco_ios", "R1#", ModePrivileged},
		{"cisco_ios", "R1(config-router)#", ModeConfig},
		{"cisco_ios", "Building configuration...", ModeUnknown},
		{"arista_eos", "leaf1(config-if-Et1)#", ModeConfig},
		{"ruijie", "Ruijie(config)#", ModeConfig},
		{"huawei_vrp", "<HUAWEI>", ModeUser},
		{"huawei_vrp", "[~HUAWEI-GigabitEthernet1/0/0]", ModeConfig},
		{"juniper_junos", "root@vMX> ", ModeUser},
		{"juniper_junos", "root@vMX# ", ModeConfig},
		{"linux", "root@abc:/# ", ModeUser},
		{"linux", "total 0", ModeUnknown},
	}
	for _, c := range cases {
		p, err := ProfileByName(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.ModeOf(c.line); got != c.want {
			t.Errorf("%s %q: got %s, want %s", c.profile, c.line, got, c.want)
		}
	}
}

func TestProfileTimeouts(t *testing.T) {
	cases := []struct {
		profile, cmd string
		want         time.Duration
	}{
		{"vpcs", "ip 10.0.0.1/24 10.0.0.254", 8 * time.Second},
		{"vpcs", "ip dhcp", 20 * time.Second},
		{"vpcs", "ping 10.0.0.2 -c 3", 3*2*time.Second + 5*time.Second},
		{"vpcs", "ping 10.0.0.2", 5*2*time.Second + 5*time.Second},
		{"vpcs", "ping 10.0.0.2 -c 2 -w 3000", 2*4*time.Second + 5*time.Second},
		{"vpcs", "show ip", 10 * time.Second},
		{"cisco_ios", "ping 10.0.0.2 repeat 10", 25 * time.Second},
		{"cisco_ios", "sh run", 60 * time.Second},
		{"cisco_ios", "show version", 30 * time.Second},
		{"linux", "ping -c 4 10.0.0.1", 10 * time.Second},
		{"huawei_vrp", "ping -c 3 10.0.0.1", 11 * time.Second},
		{"juniper_junos", "ping 10.0.0.1 count 3", 11 * time.Second},
		// Commands that only end when interrupted run for OpenEndedRun.
		{"linux", "ping 10.0.0.1", OpenEndedRun},
		{"linux", "ping -w 3 10.0.0.1", 8 * time.Second},
		{"linux", "tail -f /var/log/messages", OpenEndedRun},
		{"juniper_junos", "ping 10.0.0.1", OpenEndedRun},
		{"juniper_junos", "show interfaces terse | refresh 2", OpenEndedRun},
		{"frr", "ping 10.1.0.2", OpenEndedRun},
		{"frr", "show running-config", 60 * time.Second},
		{"vyos", "ping 10.0.0.1", OpenEndedRun},
		{"vyos", "ping 10.0.0.1 count 3", 11 * time.Second},
		{"mikrotik_routeros", "/ping 10.0.0.1", OpenEndedRun},
		{"mikrotik_routeros", "/ping 10.0.0.1 count=3", 8 * time.Second},
		{"openwrt", "logread -f", OpenEndedRun},
		{"vpcs", "ping 10.0.0.2 -t", OpenEndedRun},
	}
	for _, c := range cases {
		p, _ := ProfileByName(c.profile)
		if got := p.TimeoutFor(c.cmd); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.profile, c.cmd, got, c.want)
		}
	}
}

func TestConsoleAddr(t *testing.T) {
	cases := []struct {
		t       Target
		gns3    string
		want    string
		wantErr error
	}{
		{Target{ConsoleType: "telnet", ConsoleHost: "192.0.2.10", ConsolePort: 5000}, "gns3.local", "192.0.2.10:5000", nil},
		{Target{ConsoleType: "telnet", ConsoleHost: "0.0.0.0", ConsolePort: 5001}, "gns3.local", "gns3.local:5001", nil},
		{Target{ConsoleType: "telnet", ConsoleHost: "::", ConsolePort: 5002}, "10.1.1.1", "10.1.1.1:5002", nil},
		{Target{ConsoleType: "telnet", ConsoleHost: "", ConsolePort: 5003}, "::1", "[::1]:5003", nil},
		{Target{ConsoleType: "TELNET", ConsoleHost: "fe80::1", ConsolePort: 5004}, "", "[fe80::1]:5004", nil},
		{Target{ConsoleType: "vnc", ConsoleHost: "127.0.0.1", ConsolePort: 5900}, "", "", ErrUnsupportedConsole},
		{Target{ConsoleType: "spice", ConsolePort: 5900}, "", "", ErrUnsupportedConsole},
		{Target{ConsoleType: "none"}, "", "", ErrUnsupportedConsole},
		{Target{ConsoleType: "telnet"}, "h", "", ErrUnsupportedConsole},
	}
	for _, c := range cases {
		got, err := c.t.ConsoleAddr(c.gns3)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%+v: want %v, got %v", c.t, c.wantErr, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q %v, want %q", c.t, got, err, c.want)
		}
	}
	if _, err := (Target{ConsoleType: "telnet", ConsoleHost: "0.0.0.0", ConsolePort: 1}).ConsoleAddr(""); err == nil {
		t.Error("wildcard host without a GNS3 host must fail")
	}
	// The console type picks the transport; an empty one is telnet, as GNS3 2.x nodes report.
	for ct, want := range map[string]Endpoint{
		"ssh": {Addr: "gns3.local:5005", Type: ConsoleSSH}, " SSH ": {Addr: "gns3.local:5005", Type: ConsoleSSH},
		"telnet": {Addr: "gns3.local:5005", Type: ConsoleTelnet}, "": {Addr: "gns3.local:5005", Type: ConsoleTelnet},
	} {
		got, err := Target{ConsoleType: ct, ConsoleHost: "0.0.0.0", ConsolePort: 5005}.Endpoint("gns3.local")
		if err != nil || got != want {
			t.Errorf("%q: got %+v %v, want %+v", ct, got, err, want)
		}
	}
	// Every other type is refused with its name and what to change.
	for ct, says := range map[string]string{"vnc": "a remote screen", "spice": "a remote screen", "http": "a web page", "none": "no console"} {
		_, err := Target{Name: "PC1", ConsoleType: ct, ConsoleHost: "127.0.0.1", ConsolePort: 5900}.Endpoint("")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("console type is %q", ct)) || !strings.Contains(err.Error(), says) ||
			!strings.Contains(err.Error(), "set the node's console type to telnet or ssh") {
			t.Errorf("%s: %v", ct, err)
		}
	}
}

func TestProfileByNameAliases(t *testing.T) {
	for alias, want := range map[string]string{
		"cisco_ios_telnet": "cisco_ios", "cisco_xe": "cisco_ios", "gns3_vpcs_telnet": "vpcs", "huawei_vrpv8": "huawei_vrp",
		"gns3_huawei_telnet_ce": "huawei_vrp", "gns3_ruijie_telnet": "ruijie", "arista_eos_telnet": "arista_eos",
		"juniper_junos": "juniper_junos", "linux": "linux", " Cisco_IOS ": "cisco_ios",
	} {
		p, err := ProfileByName(alias)
		if err != nil || p.Name != want {
			t.Errorf("%q: %v %v", alias, p, err)
		}
	}
}

// The package comment lists the profiles by name, and only those the package defines: it fails
// as soon as a profile is added without it or removed from the code alone.
func TestPackageDocListsEveryProfile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\s+- (\w+):`).FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]] = true
	}
	for _, name := range ProfileNames() {
		if !listed[name] {
			t.Errorf("doc.go does not list the %q profile", name)
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("doc.go lists %q, which is no profile", name)
	}
}
