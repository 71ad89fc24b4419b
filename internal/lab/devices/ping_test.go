package devices

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

func TestPingCommands(t *testing.T) {
	addr := netip.MustParseAddr("10.0.0.2")
	for name, want := range map[string]string{
		"vpcs": "ping 10.0.0.2 -c 5", "cisco_ios": "ping 10.0.0.2 repeat 5", "frr": "ping 10.0.0.2",
		"linux": "ping -c 5 10.0.0.2", "vyos": "ping 10.0.0.2 count 5", "mikrotik_routeros": "/ping 10.0.0.2 count=5",
	} {
		p, err := ProfileByName(name)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.PingCommand(addr, 5)
		if !ok || got != want {
			t.Errorf("%s: %q %v, want %q", name, got, ok, want)
		}
		// Every ping the check sends ends by itself or is stopped by the driver, and passes the
		// default policy.
		if ok, reason := DefaultPolicy().Check(got); !ok {
			t.Errorf("%s: %q is refused: %s", name, got, reason)
		}
		if p.TimeoutFor(got) <= 0 {
			t.Errorf("%s: no time bound for %q", name, got)
		}
	}
	ruijie, _ := ProfileByName("ruijie")
	if _, ok := ruijie.PingCommand(addr, 5); ok || ruijie.CanPing() {
		t.Error("a platform whose ping is not known is not pinged from")
	}
}

func TestParsePing(t *testing.T) {
	for _, tc := range []struct {
		name, output  string
		sent, replies int
		rtts          string
		read          bool
	}{
		// Measured on the real GNS3 v3.0.6 (VPCS 0.8.3), 200 ms delay on the link.
		{"vpcs", "\r\n84 bytes from 10.9.0.2 icmp_seq=1 ttl=64 time=400.380 ms\r\n84 bytes from 10.9.0.2 icmp_seq=2 ttl=64 time=400.393 ms\r\n" +
			"10.9.0.2 icmp_seq=3 timeout\r\n", 3, 2, "[400.38ms 400.393ms]", true},
		{"vpcs timeouts", "10.9.0.2 icmp_seq=1 timeout\r\n10.9.0.2 icmp_seq=2 timeout\r\n", 2, 0, "[]", true},
		{"iputils", "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.512 ms\n" +
			"64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time<1 ms\n\n--- 10.0.0.2 ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss",
			2, 2, "[512µs 1ms]", true},
		{"iputils lost", "--- 10.0.0.2 ping statistics ---\n5 packets transmitted, 0 received, 100% packet loss, time 4100ms", 5, 0, "[]", true},
		{"ios", "Type escape sequence to abort.\nSending 5, 100-byte ICMP Echos to 10.0.0.2, timeout is 2 seconds:\n.!!!!\n" +
			"Success rate is 80 percent (4/5), round-trip min/avg/max = 401/404/410 ms", 5, 4, "[404ms]", true},
		{"ios none", "Success rate is 0 percent (0/5)", 5, 0, "[]", true},
		{"routeros", "  SEQ HOST                                     SIZE TTL TIME       STATUS\n    0 10.0.0.2                                   56  64 1ms403us\n" +
			"    1 10.0.0.2                                              timeout\n    2 10.0.0.2                                   56  64 403ms\n", 0, 2, "[1.403ms 403ms]", true},
		{"not a ping", "% Unknown command", 0, 0, "[]", false},
	} {
		got := ParsePing(tc.output)
		if got.Sent != tc.sent || got.Replies != tc.replies || fmt.Sprint(got.RTTs) != tc.rtts || got.Read != tc.read {
			t.Errorf("%s: %+v, want %d sent %d replies %s read=%v", tc.name, got, tc.sent, tc.replies, tc.rtts, tc.read)
		}
	}
	if d := ParsePing("time=0.2 ms").RTTs[0]; d != 200*time.Microsecond {
		t.Errorf("%v", d)
	}
}

func TestAddressing(t *testing.T) {
	for _, tc := range []struct {
		platform, output string
		want             string
	}{
		{"vpcs", "\r\nNAME        : PC1[1]\r\nIP/MASK     : 10.9.0.1/24\r\nGATEWAY     : 10.9.0.254\r\nDNS         : \r\nMAC         : 00:50:79:66:68:00\r\n",
			"[10.9.0.1/24 (IP/MASK : 10.9.0.1/24)] gw 10.9.0.254"},
		{"vpcs", "NAME        : PC1[1]\nIP/MASK     : 0.0.0.0/0\nGATEWAY     : 0.0.0.0\n", "[] gw invalid IP"},
		{"cisco_ios", "hostname R1\n!\ninterface FastEthernet0/0\n ip address 10.0.0.1 255.255.255.252\n ip helper-address 10.9.9.9\n!\n" +
			"interface Loopback0\n ip address 1.1.1.1 255.255.255.255\n!\nip route 10.1.0.0 255.255.255.0 10.0.0.2\nend\n",
			"[10.0.0.1/30 (interface FastEthernet0/0 | ip address 10.0.0.1 255.255.255.252) 1.1.1.1/32 (interface Loopback0 | ip address 1.1.1.1 255.255.255.255)] gw invalid IP"},
		{"frr", "frr version 10.3\nfrr defaults traditional\nhostname R1\n!\ninterface eth0\n ip address 10.0.12.1/24\nexit\n!\nrouter ospf\n network 10.0.12.0/24 area 0\nexit\n",
			"[10.0.12.1/24 (interface eth0 | ip address 10.0.12.1/24)] gw invalid IP"},
		{"vyos", "set interfaces ethernet eth0 address '10.0.0.1/24'\nset interfaces ethernet eth1 address 'dhcp'\nset protocols static route 0.0.0.0/0 next-hop 10.0.0.254\n",
			"[10.0.0.1/24 (set interfaces ethernet eth0 address '10.0.0.1/24')] gw invalid IP"},
		{"huawei_vrp", "#\ninterface GigabitEthernet0/0/0\n ip address 10.0.0.1 24\n#\nreturn\n",
			"[10.0.0.1/24 (interface GigabitEthernet0/0/0 | ip address 10.0.0.1 24)] gw invalid IP"},
		{"linux", "lo               UNKNOWN        127.0.0.1/8 ::1/128\neth0             UP             10.0.0.5/24 fe80::1/64\ndefault via 10.0.0.1 dev eth0\n10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.5\n",
			"[127.0.0.1/8 (lo UNKNOWN 127.0.0.1/8 ::1/128) 10.0.0.5/24 (eth0 UP 10.0.0.5/24 fe80::1/64)] gw invalid IP"},
		{"openwrt", "network.lan=interface\nnetwork.lan.ipaddr='192.168.1.1'\nnetwork.lan.netmask='255.255.255.0'\nnetwork.wan.proto='dhcp'\n",
			"[192.168.1.1/24 (network.lan.ipaddr=192.168.1.1)] gw invalid IP"},
	} {
		p, _ := ProfileByName(tc.platform)
		a := p.Addressing(tc.output)
		var got []string
		for _, x := range a.Addresses {
			got = append(got, fmt.Sprintf("%s (%s)", x.Prefix, x.Line))
		}
		if s := fmt.Sprintf("%s gw %s", fmt.Sprint(got), a.Gateway); s != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.platform, s, tc.want)
		}
	}
	a := Address{Line: "interface eth0 | ip address 10.0.0.1/24"}
	if !a.NamesInterface("eth0") || a.NamesInterface("eth1") || (Address{Line: "interface eth0.10 | ip address 10.0.0.1/24"}).NamesInterface("eth0") {
		t.Error("NamesInterface")
	}
}
