package devices

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func undoOf(t *testing.T, platform, before, after string) UndoPlan {
	t.Helper()
	p, err := ProfileByName(platform)
	require.NoError(t, err)
	require.True(t, p.Undoable(), platform)
	u, err := p.UndoLines(before, after)
	require.NoError(t, err)
	return u
}

func TestIOSUndoNegatesInSectionsAndPutsBackWhatWasRemoved(t *testing.T) {
	before := "Building configuration...\n\nCurrent configuration : 1834 bytes\n!\n! Last configuration change at 12:00\n!\nhostname R1\n!\n" +
		"interface GigabitEthernet0/0\n no ip address\n shutdown\n!\ninterface GigabitEthernet0/1\n ip address 10.9.0.1 255.255.255.0\n!\n" +
		"router ospf 1\n network 10.9.0.0 0.0.0.255 area 0\n!\nip route 0.0.0.0 0.0.0.0 10.9.0.254\nend\n"
	after := "Building configuration...\n\nCurrent configuration : 1901 bytes\n!\n! Last configuration change at 12:05\n!\nhostname R1-core\n!\n" +
		"interface Loopback0\n ip address 1.1.1.1 255.255.255.255\n!\n" +
		"interface GigabitEthernet0/0\n description uplink to R2\n ip address 10.0.0.1 255.255.255.0\n!\ninterface GigabitEthernet0/1\n ip address 10.9.0.1 255.255.255.0\n!\n" +
		"router ospf 1\n network 10.9.0.0 0.0.0.255 area 0\n network 10.0.0.0 0.0.0.255 area 0\n!\nrouter bgp 65001\n neighbor 10.0.0.2 remote-as 65002\n!\nend\n"
	u := undoOf(t, "cisco_ios", before, after)
	require.Equal(t, []string{
		// The new loopback and BGP go whole; the physical port keeps its section.
		"no interface Loopback0",
		"interface GigabitEthernet0/0",
		"no description",
		"no ip address 10.0.0.1 255.255.255.0",
		"exit",
		"router ospf 1",
		"no network 10.0.0.0 0.0.0.255 area 0",
		"exit",
		"no router bgp 65001",
		// The hostname is set again (IOS refuses "no hostname NAME"), the port's lines come
		// back, and so does the removed route.
		"hostname R1",
		"interface GigabitEthernet0/0",
		"no ip address",
		"shutdown",
		"exit",
		"ip route 0.0.0.0 0.0.0.0 10.9.0.254",
	}, u.Lines)
	require.Empty(t, u.Left)
}

func TestIOSUndoTakesBackANegationByRestoringTheLine(t *testing.T) {
	before := "hostname R1\n!\ninterface GigabitEthernet0/0\n ip address 10.0.0.1 255.255.255.0\n!\nend"
	after := "hostname R1\n!\ninterface GigabitEthernet0/0\n no ip address\n!\nend"
	u := undoOf(t, "cisco_ios", before, after)
	require.Equal(t, []string{"interface GigabitEthernet0/0", "ip address 10.0.0.1 255.255.255.0", "exit"}, u.Lines,
		"a bare \"ip address\" would be refused")
}

func TestIOSUndoLeavesABanner(t *testing.T) {
	before := "hostname R1\n!\nend"
	after := "hostname R1\n!\nbanner motd ^C\nLab of class 3\nNo entry\n^C\n!\nend"
	u := undoOf(t, "cisco_ios", before, after)
	require.Empty(t, u.Lines, "the banner's text is not taken for lines")
	require.Len(t, u.Left, 1)
	require.Contains(t, u.Left[0], "banner motd ^C")
}

func TestFRRUndoEmptiesInterfacesAndRemovesRouters(t *testing.T) {
	// As FRR 8.4 prints it (frrlab, real vtysh), sections closed by "exit".
	before := "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname frr\n" +
		"no ip forwarding\nno ipv6 forwarding\n!\nend\n"
	after := "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname R1\n" +
		"no ip forwarding\nno ipv6 forwarding\n!\nip route 10.9.0.0/16 10.1.0.2\n!\ninterface eth0\n description uplink\n ip address 10.1.0.1/24\n" +
		" ip ospf cost 10\nexit\n!\nrouter ospf\n ospf router-id 1.1.1.1\n network 10.1.0.0/24 area 0\nexit\n!\n" +
		"router bgp 65001\n neighbor 10.1.0.2 remote-as 65002\n !\n address-family ipv4 unicast\n  network 10.1.0.0/24\n exit-address-family\nexit\n!\nend\n"
	u := undoOf(t, "frr", before, after)
	require.Equal(t, []string{
		"no ip route 10.9.0.0/16 10.1.0.2",
		// FRR drops an interface's section with its last line ("no interface" is not needed),
		// and "no description" takes no text.
		"interface eth0",
		"no description",
		"no ip address 10.1.0.1/24",
		"no ip ospf cost 10",
		"exit",
		"no router ospf",
		"no router bgp 65001",
		"hostname frr",
	}, u.Lines)
}

func TestFRRUndoInsideANestedSection(t *testing.T) {
	before := "frr version 10.3\nhostname R1\n!\nrouter bgp 65001\n neighbor 10.1.0.2 remote-as 65002\n !\n address-family ipv4 unicast\n" +
		"  network 10.1.0.0/24\n exit-address-family\nexit\n!\nend\n"
	after := "frr version 10.3\nhostname R1\n!\nrouter bgp 65001\n neighbor 10.1.0.2 remote-as 65002\n !\n address-family ipv4 unicast\n" +
		"  network 10.2.0.0/24\n exit-address-family\nexit\n!\nend\n"
	u := undoOf(t, "frr", before, after)
	require.Equal(t, []string{
		"router bgp 65001", "address-family ipv4 unicast", "no network 10.2.0.0/24", "network 10.1.0.0/24", "exit", "exit",
	}, u.Lines, "each line in its own sub-section, left level by level")
}

func TestHuaweiUndoUsesUndoAndQuit(t *testing.T) {
	before := "#\nsysname HUAWEI\n#\ninterface GigabitEthernet0/0/0\n ip address 10.0.0.1 255.255.255.0\n#\nreturn"
	after := "#\nsysname R1\n#\ninterface GigabitEthernet0/0/0\n description to-R2\n ip address 10.0.0.9 255.255.255.0\n#\n" +
		"interface LoopBack0\n ip address 1.1.1.1 255.255.255.255\n#\nospf 1 router-id 1.1.1.1\n area 0.0.0.0\n  network 10.0.0.0 0.0.0.255\n#\nreturn"
	u := undoOf(t, "huawei_vrp", before, after)
	require.Equal(t, []string{
		"interface GigabitEthernet0/0/0", "undo description", "undo ip address 10.0.0.9 255.255.255.0", "quit",
		"undo interface LoopBack0", "undo ospf 1 router-id 1.1.1.1",
		"sysname HUAWEI",
		"interface GigabitEthernet0/0/0", "ip address 10.0.0.1 255.255.255.0", "quit",
	}, u.Lines)
}

func TestJunosUndoDeletesWhatItCreatedWhole(t *testing.T) {
	before := "## Last commit: 2026-01-01 10:00:00 UTC by root\nset version 21.2R1\nset system host-name vmx1\n" +
		"set interfaces ge-0/0/0 unit 0 family inet address 10.0.0.1/24\nset protocols ospf area 0.0.0.0 interface ge-0/0/0.0 passive\n"
	after := "## Last commit: 2026-01-01 10:05:00 UTC by root\nset version 21.2R1\nset system host-name R1\n" +
		"set interfaces ge-0/0/0 unit 0 family inet address 10.0.0.1/24\nset interfaces ge-0/0/0 unit 0 family inet address 10.0.1.1/24\n" +
		"set interfaces ge-0/0/1 unit 0 family inet address 10.1.0.1/24\nset interfaces ge-0/0/1 description \"to R3\"\n" +
		"set protocols ospf area 0.0.0.0 interface ge-0/0/0.0 passive\ndeactivate protocols ospf area 0.0.0.0 interface ge-0/0/0.0\n"
	u := undoOf(t, "juniper_junos", before, after)
	require.Equal(t, []string{
		"delete system host-name R1",
		"delete interfaces ge-0/0/0 unit 0 family inet address 10.0.1.1/24",
		"delete interfaces ge-0/0/1", // ge-0/0/1 was not configured before: all of it goes
		"activate protocols ospf area 0.0.0.0 interface ge-0/0/0.0",
		"set system host-name vmx1",
	}, u.Lines)
}

func TestVyOSUndoKeepsQuotedValues(t *testing.T) {
	before := "set interfaces ethernet eth0 hw-id '0c:aa:bb:cc:dd:00'\nset system host-name 'vyos'\n"
	after := "set interfaces ethernet eth0 address '10.1.0.1/24'\nset interfaces ethernet eth0 description 'to core'\n" +
		"set interfaces ethernet eth0 hw-id '0c:aa:bb:cc:dd:00'\nset system host-name 'R1'\n"
	u := undoOf(t, "vyos", before, after)
	require.Equal(t, []string{
		"delete interfaces ethernet eth0 address",
		"delete interfaces ethernet eth0 description",
		"delete system host-name 'R1'",
		"set system host-name 'vyos'",
	}, u.Lines)
}

func TestRouterOSUndoRemovesAddedItemsAndLeavesUnknownDefaults(t *testing.T) {
	before := "# 2026-01-01 10:00:00 by RouterOS 7.14\n# software id =\n/interface ethernet set [ find default-name=ether1 ] disable-running-check=no\n" +
		"/system identity set name=MikroTik\n"
	after := "# 2026-01-01 10:05:00 by RouterOS 7.14\n# software id =\n/interface ethernet set [ find default-name=ether1 ] disable-running-check=no\n" +
		"/ip address add address=10.1.0.1/24 interface=ether1 network=10.1.0.0\n/ip dns set servers=1.1.1.1\n/system identity set name=R1\n"
	u := undoOf(t, "mikrotik_routeros", before, after)
	require.Equal(t, []string{
		"/ip address remove [ find address=10.1.0.1/24 interface=ether1 network=10.1.0.0 ]",
		"/system identity set name=MikroTik",
	}, u.Lines)
	require.Len(t, u.Left, 1)
	require.Contains(t, u.Left[0], "/ip dns set servers=1.1.1.1")
	require.Contains(t, u.Left[0], "default")
}

func TestOpenWrtUndoDeletesAndSetsUCIKeysThenCommits(t *testing.T) {
	before := "network.lan=interface\nnetwork.lan.proto='static'\nnetwork.lan.ipaddr='192.168.1.1'\nnetwork.lan.dns='1.1.1.1' '8.8.8.8'\n"
	after := "network.lan=interface\nnetwork.lan.proto='static'\nnetwork.lan.ipaddr='10.1.0.1'\nnetwork.lan.dns='9.9.9.9'\n" +
		"network.wan2=interface\nnetwork.wan2.proto='dhcp'\nnetwork.lan.mtu='1400'\nfirewall.@zone[3]=zone\nfirewall.@zone[4]=zone\n"
	u := undoOf(t, "openwrt", before, after)
	require.Equal(t, []string{
		"uci delete network.wan2",
		"uci delete network.lan.mtu",
		"uci delete firewall.@zone[4]", // the later unnamed section first, so [3] still names its own
		"uci delete firewall.@zone[3]",
		"uci set network.lan.ipaddr='192.168.1.1'",
		"uci delete network.lan.dns",
		"uci add_list network.lan.dns='1.1.1.1'",
		"uci add_list network.lan.dns='8.8.8.8'",
		"uci commit",
		"reload_config",
	}, u.Lines)
}

func TestVPCSUndoSetsAddressGatewayDNSAndName(t *testing.T) {
	fresh := "NAME        : PC1[1]\nIP/MASK     : 0.0.0.0/0\nGATEWAY     : 0.0.0.0\nDNS         :\nMAC         : 00:50:79:66:68:01\n" +
		"LPORT       : 27410\nRHOST:PORT  : 127.0.0.1:27411\nMTU:        : 0\n"
	web := "NAME        : web[1]\nIP/MASK     : 10.1.0.5/16\nGATEWAY     : 10.1.0.1\nDNS         : 8.8.8.8\nMAC         : 00:50:79:66:68:01\n" +
		"LPORT       : 27410\nRHOST:PORT  : 127.0.0.1:27411\nMTU:        : 1500\n"
	require.Equal(t, []string{"clear ip", "set pcname PC1"}, undoOf(t, "vpcs", fresh, web).Lines)
	require.Equal(t, []string{"clear ip", "ip 10.1.0.5/16 10.1.0.1", "ip dns 8.8.8.8", "set pcname web"}, undoOf(t, "vpcs", web, fresh).Lines)
	require.Empty(t, undoOf(t, "vpcs", web, web).Lines)

	p, _ := ProfileByName("vpcs")
	moved := web + "LPORT       : 30001\n"
	added, removed := p.SameState(web, moved)
	require.Empty(t, added, "a port GNS3 gave is not the PC's configuration")
	require.Empty(t, removed)
	added, removed = p.SameState(fresh, web)
	require.Equal(t, []string{"NAME : web[1]", "IP/MASK : 10.1.0.5/16", "GATEWAY : 10.1.0.1", "DNS : 8.8.8.8"}, added)
	require.Len(t, removed, 4)
}

func TestUndoNeedsAReadBack(t *testing.T) {
	for _, p := range Profiles() {
		require.True(t, p.ConfigCommand() != "" && p.Undoable(), "%s reads its configuration back, so its jobs can be undone", p.Name)
	}
	_, err := (&Profile{Name: "unknown"}).UndoLines("a", "b")
	require.ErrorIs(t, err, ErrNoUndo, "a platform without an undoer")
}

// A Linux host's job is taken back with ip commands, from its address listing and route table
// (as iproute2's brief listing and BusyBox's one-line one print them): what the job added goes
// first, then what it removed comes back, addresses before the routes through them; the
// kernel's own routes and link-local addresses follow by themselves.
func TestLinuxUndoPutsBackAddressesAndRoutes(t *testing.T) {
	before := "lo               UNKNOWN        127.0.0.1/8 ::1/128\n" +
		"eth0@if12        UP             10.0.0.10/24 fe80::a8c1:abff:fe4e:1/64\n" +
		"eth1@if14        DOWN           \n" +
		"default via 10.0.0.1 dev eth0\n" +
		"10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.10\n" +
		"192.168.5.0/24 via 10.0.0.2 dev eth0 metric 20\n"
	after := "lo               UNKNOWN        127.0.0.1/8 ::1/128\n" +
		"eth0@if12        UP             10.0.0.11/24 fe80::a8c1:abff:fe4e:1/64\n" +
		"eth1@if14        UP             172.16.0.1/30\n" +
		"default via 10.0.0.254 dev eth0\n" +
		"10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.11\n" +
		"172.16.0.0/30 dev eth1 proto kernel scope link src 172.16.0.1\n"
	u := undoOf(t, "linux", before, after)
	require.Equal(t, []string{
		"ip route del default via 10.0.0.254 dev eth0",
		"ip address del 10.0.0.11/24 dev eth0",
		"ip address del 172.16.0.1/30 dev eth1",
		"ip link set dev eth1 down",
		"ip address add 10.0.0.10/24 dev eth0",
		"ip route add default via 10.0.0.1 dev eth0",
		"ip route add 192.168.5.0/24 via 10.0.0.2 dev eth0 metric 20",
	}, u.Lines)
	require.Empty(t, u.Left)

	// BusyBox's listing has no link state; an interface the host lost is said, not written.
	busyBefore := "1: lo    inet 127.0.0.1/8 scope host lo\n" +
		"5: eth0    inet 10.0.0.10/24 brd 10.0.0.255 scope global eth0\n" +
		"7: eth9    inet 10.9.0.1/24 scope global eth9\n"
	busyAfter := "1: lo    inet 127.0.0.1/8 scope host lo\n" +
		"5: eth0    inet 10.0.0.10/24 brd 10.0.0.255 scope global eth0\n" +
		"5: eth0    inet 10.0.0.99/24 scope global secondary eth0\n"
	u = undoOf(t, "linux", busyBefore, busyAfter)
	require.Equal(t, []string{"ip address del 10.0.0.99/24 dev eth0"}, u.Lines)
	require.Equal(t, []string{"address 10.9.0.1/24 was on eth9, which the host no longer has"}, u.Left)

	// Nothing changed: nothing to send.
	require.Empty(t, undoOf(t, "linux", before, before).Lines)
}
