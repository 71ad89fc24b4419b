package devices

import (
	"slices"
	"testing"
)

// A VPCS read after a restart differs from the one before in its ports and MAC only; those are
// left out, what was configured stays.
func TestKeptLinesLeaveOutWhatARestartChanges(t *testing.T) {
	p, _ := ProfileByName("vpcs")
	before := "NAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254\nDNS         : \nMAC         : 00:50:79:66:68:00\n" +
		"LPORT       : 20000\nRHOST:PORT  : 127.0.0.1:20001\nMTU         : 1500\n"
	after := "NAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254\nDNS         : \nMAC         : 00:50:79:66:68:01\n" +
		"LPORT       : 20004\nRHOST:PORT  : 127.0.0.1:20005\nMTU         : 1500\n"
	if !slices.Equal(p.KeptLines(before), p.KeptLines(after)) {
		t.Fatalf("%q\n%q", p.KeptLines(before), p.KeptLines(after))
	}
	want := []string{"NAME : PC1[1]", "IP/MASK : 10.0.0.1/24", "GATEWAY : 10.0.0.254", "DNS :", "MTU : 1500"}
	if got := p.KeptLines(before); !slices.Equal(got, want) {
		t.Fatalf("%q", got)
	}
	frr, _ := ProfileByName("frr")
	if got := frr.KeptLines("frr version 10.3\nhostname R1\ninterface eth0\n ip address 10.1.0.1/24\nexit\n"); !slices.Equal(got,
		[]string{"hostname R1", "interface eth0", "interface eth0 | ip address 10.1.0.1/24"}) {
		t.Fatalf("frr: %q", got)
	}
}
