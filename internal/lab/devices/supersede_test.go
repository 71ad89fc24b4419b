package devices

import (
	"fmt"
	"testing"
)

// The lines every platform's undo sends, and the ones a later line of the same job sets again
// (which the read-back then cannot show, and must not be judged alone).
func TestSuperseded(t *testing.T) {
	for _, tc := range []struct {
		platform string
		lines    []string
		want     string
	}{
		{"vpcs", []string{"clear ip", "ip 10.0.0.1/24 10.0.0.254", "ip dns 8.8.8.8", "set pcname PC1"}, "[true false false false]"},
		{"vpcs", []string{"clear ip", "set pcname PC1"}, "[false false]"},
		{"vpcs", []string{"ip 10.0.0.1/24", "ip 10.0.0.2/24", "ping 10.0.0.9"}, "[true false false]"},
		{"cisco_ios", []string{"interface Gi0/0", "no ip address", "ip address 10.0.0.1 255.255.255.0", "exit",
			"interface Gi0/1", "ip address 10.0.1.1 255.255.255.0", "exit"}, "[false true false false false false false]"},
		{"frr", []string{"interface eth0", "ip address 10.0.0.1/24", "exit", "interface eth1", "no ip address 10.0.0.1/24", "exit"},
			"[false false false false false false]"},
		{"frr", []string{"hostname r1", "hostname R1"}, "[true false]"},
		{"huawei_vrp", []string{"interface GigabitEthernet0/0/0", "undo ip address", "ip address 10.0.0.1 24", "quit"}, "[false true false false]"},
		{"vyos", []string{"delete interfaces ethernet eth0 address", "set interfaces ethernet eth0 address '10.0.0.1/24'",
			"delete system host-name 'b'", "set system host-name 'a'"}, "[true false false false]"},
		{"juniper_junos", []string{"delete interfaces ge-0/0/0 unit 0", "set interfaces ge-0/0/0 unit 0 family inet address 10.0.0.1/24"}, "[true false]"},
		{"openwrt", []string{"uci delete network.lan.dns", "uci add_list network.lan.dns=1.1.1.1", "uci set network.lan.ipaddr=10.0.0.1",
			"uci commit", "reload_config"}, "[true false false false false]"},
		{"mikrotik_routeros", []string{"/ip address add address=10.0.0.1/24 interface=ether1",
			"/ip address remove [ find address=10.0.0.1/24 interface=ether1 ]", "/ip address add address=10.0.0.2/24 interface=ether1"}, "[true false false]"},
		{"linux", []string{"ip address del 10.0.0.5/24 dev eth0", "ip address add 10.0.0.5/24 dev eth0", "ip route del default via 10.0.0.1",
			"ip route add default via 10.0.0.254"}, "[true false true false]"},
	} {
		p, err := ProfileByName(tc.platform)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(p.Superseded(tc.lines)); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.platform, tc.lines, got, tc.want)
		}
	}
}

// Each platform's undo, computed from a job's reads, is judged on its read-back: no line the
// undo sends is left "not in effect" when the device is back to before the job.
func TestUndoLinesTakeEffectTogether(t *testing.T) {
	for _, tc := range []struct {
		platform, before, after string
	}{
		{"vpcs", "NAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254\nDNS         : 8.8.8.8\n",
			"NAME        : web[1]\nIP/MASK     : 10.0.0.77/24\nGATEWAY     : 10.0.0.254\nDNS         : \n"},
		{"vyos", "set interfaces ethernet eth0 address '10.0.0.1/24'\nset system host-name 'a'\n",
			"set interfaces ethernet eth0 address '10.0.0.2/24'\nset system host-name 'b'\n"},
		{"openwrt", "network.lan=interface\nnetwork.lan.ipaddr='10.0.0.1'\nnetwork.lan.dns='1.1.1.1' '8.8.8.8'\n",
			"network.lan=interface\nnetwork.lan.ipaddr='10.0.0.2'\nnetwork.lan.dns='9.9.9.9'\n"},
		{"frr", "hostname R1\n!\ninterface eth0\n ip address 10.0.0.1/24\nexit\n", "hostname R9\n!\ninterface eth0\n ip address 10.0.0.2/24\nexit\n"},
		{"linux", "eth0             UP             10.0.0.5/24\ndefault via 10.0.0.1 dev eth0\n",
			"eth0             UP             10.0.0.6/24\ndefault via 10.0.0.254 dev eth0\n"},
	} {
		p, _ := ProfileByName(tc.platform)
		plan, err := p.UndoLines(tc.before, tc.after)
		if err != nil {
			t.Fatal(err)
		}
		// The device as the undo leaves it: back to before.
		cfg := p.ConfigLines(tc.before)
		replaced := p.Superseded(plan.Lines)
		for i, l := range plan.Lines {
			if !replaced[i] && ChangesConfig(p.Name, l) && p.Verify(l, cfg) == VerdictNotTook {
				t.Errorf("%s: the undo line %q is judged not in effect on the configuration before the job (lines %q)", tc.platform, l, plan.Lines)
			}
		}
	}
}
