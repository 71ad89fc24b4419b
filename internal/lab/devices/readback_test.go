package devices

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const vpcsShowIP = "NAME        : PC1[1]\r\nIP/MASK     : 10.0.0.1/24\r\nGATEWAY     : 10.0.0.254\r\nDNS         : \r\n" +
	"MAC         : 00:50:79:66:68:01\r\nLPORT       : 10100\r\nRHOST:PORT  : 127.0.0.1:10110\r\nMTU:        : 1500\r\n"

func TestVPCSReadBackJudgesAddressAndName(t *testing.T) {
	p, err := ProfileByName("vpcs")
	require.NoError(t, err)
	require.Equal(t, "show ip", p.ConfigCommand())
	cfg := p.ConfigLines(vpcsShowIP)
	require.Contains(t, cfg, "IP/MASK : 10.0.0.1/24")
	for line, want := range map[string]Verdict{
		"ip 10.0.0.1/24":                       VerdictTook,
		"ip 10.0.0.1/24 10.0.0.254":            VerdictTook,
		"ip 10.0.0.1 10.0.0.254 24":            VerdictTook,
		"ip 10.0.0.1 255.255.255.0 10.0.0.254": VerdictTook,
		"ip 10.0.0.1/24 10.0.0.1":              VerdictNotTook, // another gateway
		"ip 10.0.0.2/24":                       VerdictNotTook,
		"ip 10.0.0.1/16":                       VerdictNotTook,
		"ip dhcp":                              VerdictUnknown,
		"set pcname PC1":                       VerdictTook,
		"set pcname web":                       VerdictNotTook,
		"clear ip":                             VerdictNotTook,
		"save":                                 VerdictUnknown,
	} {
		require.Equal(t, want, p.Verify(line, cfg), line)
	}
}

func TestIOSConfigLinesKeepSectionsAndDropNoise(t *testing.T) {
	p, err := ProfileByName("cisco_ios")
	require.NoError(t, err)
	before := "Building configuration...\n\nCurrent configuration : 1834 bytes\n!\n! Last configuration change at 12:00\n!\nhostname R1\n!\n" +
		"interface GigabitEthernet0/0\n no ip address\n shutdown\n!\ninterface GigabitEthernet0/1\n no ip address\n shutdown\n!\nend\n"
	after := "Building configuration...\n\nCurrent configuration : 1901 bytes\n!\n! Last configuration change at 12:05\n!\nhostname R1\n!\n" +
		"interface GigabitEthernet0/0\n ip address 10.0.0.1 255.255.255.0\n!\ninterface GigabitEthernet0/1\n no ip address\n shutdown\n!\nend\n"
	bl, al := p.ConfigLines(before), p.ConfigLines(after)
	added, removed := DiffConfig(bl, al)
	require.Equal(t, []string{"interface GigabitEthernet0/0 | ip address 10.0.0.1 255.255.255.0"}, added)
	require.Equal(t, []string{"interface GigabitEthernet0/0 | no ip address", "interface GigabitEthernet0/0 | shutdown"}, removed,
		"the same line under another interface is another line; timestamps and sizes are not changes")
	require.Equal(t, VerdictTook, p.Verify("ip address 10.0.0.1 255.255.255.0", al))
	require.Equal(t, VerdictUnknown, p.Verify("ip add 10.0.0.1 255.255.255.0", al), "an abbreviation proves nothing")
	require.Equal(t, VerdictUnknown, p.Verify("no shutdown", al), "Gi0/1 is still shut: cannot tell which section")

	ctx, ok := p.ResumeContext([]string{"interface GigabitEthernet0/0", "ip address 10.0.0.1 255.255.255.0"})
	require.True(t, ok)
	require.Equal(t, "interface GigabitEthernet0/0", ctx)
	vpcs, _ := ProfileByName("vpcs")
	_, ok = vpcs.ResumeContext([]string{"ip 10.0.0.1/24"})
	require.False(t, ok, "VPCS has no configuration mode")
}

func TestChangesConfigTellsLookingFromChanging(t *testing.T) {
	require.False(t, ChangesConfig("vpcs", "ping 10.0.0.2 -c 2"))
	require.False(t, ChangesConfig("vpcs", "show ip"))
	require.True(t, ChangesConfig("vpcs", "ip 10.0.0.1/24"))
	require.True(t, ChangesConfig("vpcs", "set pcname web"))
	require.True(t, ChangesConfig("cisco_ios", "hostname R9"))
}

func TestFRRConfigLinesClosedByExitOrBang(t *testing.T) {
	p, _ := ProfileByName("frr")
	for _, closer := range []string{"exit", "!"} {
		out := "Building configuration...\n\nCurrent configuration:\n!\nfrr version 10.3\nfrr defaults traditional\nhostname R1\n!\n" +
			"interface eth0\n ip address 10.1.0.1/24\n ip ospf area 0\n" + closer + "\n!\nrouter ospf\n ospf router-id 1.1.1.1\n" + closer + "\nip forwarding\n!\nend"
		got := p.ConfigLines(out)
		want := []string{"hostname R1", "interface eth0", "interface eth0 | ip address 10.1.0.1/24", "interface eth0 | ip ospf area 0",
			"router ospf", "router ospf | ospf router-id 1.1.1.1", "ip forwarding"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("closed by %q: %q", closer, got)
		}
		if v := p.Verify("ip address 10.9.0.1/24", got); v != VerdictNotTook {
			t.Errorf("an address nowhere in the configuration: %s", v)
		}
		if v := p.Verify("ip ospf cost 7", got); v != VerdictUnknown {
			t.Errorf("a line FRR may have rewritten: %s", v)
		}
		if ctx, ok := p.ResumeContext([]string{"interface eth0", "ip address 10.1.0.1/24"}); !ok || ctx != "interface eth0" {
			t.Errorf("resume context %q %v", ctx, ok)
		}
	}
}

func TestReadByTellsPlatformsThatShareAShowCommand(t *testing.T) {
	frr := "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname R1\n!\nend"
	ios := "Building configuration...\n\nCurrent configuration : 1024 bytes\n!\nversion 15.9\nhostname R1\n!\nend"
	for _, c := range []struct{ cmd, out, want string }{
		{"show running-config", frr, "frr"},
		{"show running-config", ios, "arista_eos"}, // the IOS family reads alike: any of them judges the same
		{"show ip", "IP/MASK : 10.0.0.1/24", "vpcs"},
		{"uci show", "network.lan.proto='static'", "openwrt"},
	} {
		if p := ReadBy(c.cmd, c.out); p == nil || p.Name != c.want {
			t.Errorf("%s: %v, want %s", c.cmd, p, c.want)
		}
	}
	if p := ReadBy("show nothing", ""); p != nil {
		t.Errorf("no profile reads with that: %s", p.Name)
	}
}

// A Linux host's "configuration" is its addresses and routes, in iproute2's brief listing or
// BusyBox's one-line one; "ip address" and "ip route" changes are judged against it.
func TestShellReadBackJudgesAddressesAndRoutes(t *testing.T) {
	p, err := ProfileByName("linux")
	require.NoError(t, err)
	require.Equal(t, "(ip -br addr 2>/dev/null || ip -o addr) && ip route", p.ConfigCommand())
	brief := "lo               UNKNOWN        127.0.0.1/8 ::1/128\neth0@if7         UP             10.2.0.10/24 fe80::1/64\n" +
		"default via 10.2.0.1 dev eth0\n10.2.0.0/24 dev eth0 proto kernel scope link src 10.2.0.10\n"
	busybox := "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n" +
		"2: eth0    inet 10.2.0.10/24 brd 10.2.0.255 scope global dynamic eth0\\       valid_lft 86391sec preferred_lft 86391sec\n" +
		"default via 10.2.0.1 dev eth0\n"
	for name, out := range map[string]string{"brief": brief, "busybox": busybox} {
		cfg := p.ConfigLines(out)
		for line, want := range map[string]Verdict{
			"ip addr add 10.2.0.10/24 dev eth0":          VerdictTook,
			"ip address add 10.2.0.11/24 dev eth0":       VerdictNotTook,
			"ip a del 10.2.0.11/24 dev eth0":             VerdictTook,
			"ip addr del 10.2.0.10/24 dev eth0":          VerdictNotTook,
			"ip addr add 10.2.0.10/24 dev eth1":          VerdictNotTook,
			"ip route add default via 10.2.0.1":          VerdictTook,
			"ip route add default via 10.2.0.254":        VerdictNotTook,
			"ip r add 10.9.0.0/24 via 10.2.0.1":          VerdictNotTook,
			"ip route del 10.9.0.0/24":                   VerdictTook,
			"ip link set eth0 up":                        VerdictUnknown,
			"echo nameserver 1.1.1.1 > /etc/resolv.conf": VerdictUnknown,
		} {
			require.Equal(t, want, p.Verify(line, cfg), "%s: %q in %q", name, line, cfg)
		}
	}
	// A DHCP lease counting down is no change.
	later := strings.ReplaceAll(busybox, "86391sec", "86000sec")
	added, removed := DiffConfig(p.ConfigLines(busybox), p.ConfigLines(later))
	require.Empty(t, added)
	require.Empty(t, removed)
	added, removed = DiffConfig(p.ConfigLines(brief), p.ConfigLines(strings.Replace(brief, "default via 10.2.0.1", "default via 10.2.0.254", 1)))
	require.Equal(t, []string{"default via 10.2.0.254 dev eth0"}, added)
	require.Equal(t, []string{"default via 10.2.0.1 dev eth0"}, removed)
}

// The exit status follows a shell command in a way the shell accepts, whatever ends the command.
func TestShellStatusFollowsTheCommand(t *testing.T) {
	p, err := ProfileByName("linux")
	require.NoError(t, err)
	for cmd, want := range map[string]string{
		"false":                    "false; echo __rc=$?",
		"cd /tmp;":                 "cd /tmp; echo __rc=$?",
		"sleep 30 &":               "sleep 30 & echo __rc=$?",
		"true && ls":               "true && ls; echo __rc=$?",
		"  ":                       "  ",
		"ip -br addr && ip route ": "ip -br addr && ip route ; echo __rc=$?",
	} {
		require.Equal(t, want, p.withStatus(cmd, false), cmd)
	}
	require.Equal(t, "banner text", p.withStatus("banner text", true), "free text is sent as it is")
	vpcs, err := ProfileByName("vpcs")
	require.NoError(t, err)
	require.Equal(t, "show ip", vpcs.withStatus("show ip", false), "only shells are asked")
	out, status, ok := p.exitStatus("a\n__rc=3\nb")
	require.True(t, ok)
	require.Equal(t, 3, status)
	require.Equal(t, "a\nb", out)
}
