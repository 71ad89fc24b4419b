package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// Protocols frrlab does not run are checked on frames built here, byte by byte as the
// standards lay them out.

var stpMulticast = net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0}

// bpdu is a configuration BPDU (802.1D) of the given version, root and bridge.
func bpdu(version byte, flags byte, rootPrio uint16, root net.HardwareAddr, cost uint32, bridgePrio uint16, bridge net.HardwareAddr) []byte {
	b := make([]byte, 35)
	b[2], b[3], b[4] = version, 0, flags
	if version == 2 {
		b[3] = 2
	}
	binary.BigEndian.PutUint16(b[5:], rootPrio)
	copy(b[7:], root)
	binary.BigEndian.PutUint32(b[13:], cost)
	binary.BigEndian.PutUint16(b[17:], bridgePrio)
	copy(b[19:], bridge)
	binary.BigEndian.PutUint16(b[25:], 0x8001)
	for off, secs := range map[int]uint16{29: 20, 31: 2, 33: 15} {
		binary.BigEndian.PutUint16(b[off:], secs*256)
	}
	return b
}

func (b *builder) llc(src net.HardwareAddr, dst net.HardwareAddr, payload []byte) {
	b.frame(&layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeLLC},
		&layers.LLC{DSAP: 0x42, SSAP: 0x42, Control: 3}, gopacket.Payload(payload))
}

func TestSpanningTreeRootAndTopologyChanges(t *testing.T) {
	b := newBuilder(t)
	rootMAC := net.HardwareAddr{0, 0x11, 0, 0, 0, 1}
	// Two bridges agree that 4096.rootMAC is the root; the second sends topology changes.
	b.llc(macA, stpMulticast, bpdu(2, 0, 4096, rootMAC, 0, 4096, rootMAC))
	b.llc(macB, stpMulticast, bpdu(2, 0x01, 4096, rootMAC, 4, 32768, macB))
	b.llc(macB, stpMulticast, bpdu(2, 0x01, 4096, rootMAC, 4, 32768, macB))
	// A TCN BPDU from a third bridge.
	b.llc(macA, stpMulticast, []byte{0, 0, 0, 0x80})
	s := readBuilt(t, b)
	if s.STP == nil || s.STP.Root != "4096.00:11:00:00:00:01" || s.STP.TopologyChanges != 3 {
		t.Fatalf("stp: %+v", s.STP)
	}
	if len(s.STP.Bridges) != 3 || s.STP.Bridges[1].Hello != 2 || s.STP.Bridges[1].MaxAge != 20 || s.STP.Bridges[1].ForwardDelay != 15 || s.STP.Bridges[1].Protocol != "RSTP" {
		t.Errorf("bridges: %+v", s.STP.Bridges)
	}
	textHas(t, finding(t, s, "stp_root").Text, "root bridge 4096.00:11:00:00:00:01")
	textHas(t, finding(t, s, "stp_topology_change").Text, "3 topology change BPDU(s)", "32768.00:50:79:66:68:02 ×2")
	noFinding(t, s, "stp_root_disagreement")
	if s.Protocols[0].Protocol != "STP" {
		t.Errorf("protocols: %+v", s.Protocols)
	}

	// A bridge that claims to be root itself while the other names another: not converged.
	b = newBuilder(t)
	b.llc(macA, stpMulticast, bpdu(0, 0, 4096, rootMAC, 0, 4096, rootMAC))
	b.llc(macB, stpMulticast, bpdu(0, 0, 32768, macB, 0, 32768, macB))
	s = readBuilt(t, b)
	textHas(t, finding(t, s, "stp_root_disagreement").Text, "disagree on the root")
}

// dhcp sends one DHCP message from a client (or to it, from server).
func (b *builder) dhcp(typ layers.DHCPMsgType, client net.HardwareAddr, xid uint32, server, yours string) {
	d := &layers.DHCPv4{Operation: layers.DHCPOpRequest, HardwareType: layers.LinkTypeEthernet, HardwareLen: 6, Xid: xid,
		ClientHWAddr: client, ClientIP: net.IPv4zero, YourClientIP: net.IPv4zero, NextServerIP: net.IPv4zero, RelayAgentIP: net.IPv4zero,
		Options: layers.DHCPOptions{layers.NewDHCPOption(layers.DHCPOptMessageType, []byte{byte(typ)})}}
	src, dst, sport, dport := "0.0.0.0", "255.255.255.255", 68, 67
	if server != "" {
		d.Operation = layers.DHCPOpReply
		d.YourClientIP = net.ParseIP(yours).To4()
		d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptServerID, net.ParseIP(server).To4()),
			layers.NewDHCPOption(layers.DHCPOptLeaseTime, []byte{0, 0, 0x0e, 0x10}))
		src, sport, dport = server, 67, 68
	}
	d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptEnd, nil))
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	b.ip4(src, dst, layers.IPProtocolUDP, udp, d)
}

func TestDHCPExchanges(t *testing.T) {
	b := newBuilder(t)
	pc1, pc2, pc3 := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}, net.HardwareAddr{2, 0, 0, 0, 0, 3}
	// PC1 completes DORA.
	b.dhcp(layers.DHCPMsgTypeDiscover, pc1, 1, "", "")
	b.dhcp(layers.DHCPMsgTypeOffer, pc1, 1, "10.0.0.1", "10.0.0.50")
	b.dhcp(layers.DHCPMsgTypeRequest, pc1, 1, "", "")
	b.dhcp(layers.DHCPMsgTypeAck, pc1, 1, "10.0.0.1", "10.0.0.50")
	// PC2 asks three times and nobody answers.
	for i := 0; i < 3; i++ {
		b.dhcp(layers.DHCPMsgTypeDiscover, pc2, 2, "", "")
	}
	// PC3 is refused.
	b.dhcp(layers.DHCPMsgTypeRequest, pc3, 3, "", "")
	b.dhcp(layers.DHCPMsgTypeNak, pc3, 3, "10.0.0.1", "0.0.0.0")
	s := readBuilt(t, b)
	if len(s.DHCP) != 3 {
		t.Fatalf("clients: %+v", s.DHCP)
	}
	if c := s.DHCP[0]; c.State != "complete" || c.Assigned != "10.0.0.50" || c.Lease != 3600 || len(c.Servers) != 1 {
		t.Errorf("PC1: %+v", c)
	}
	textHas(t, finding(t, s, "dhcp_complete").Text, "client 02:00:00:00:00:01 got 10.0.0.50 from 10.0.0.1")
	var texts []string
	for _, f := range s.Findings {
		if f.Check == "dhcp_incomplete" {
			texts = append(texts, f.Text)
		}
	}
	all := strings.Join(texts, "\n")
	textHas(t, all, "02:00:00:00:00:02: Discover without Offer", "DISCOVER ×3", "02:00:00:00:00:03: refused (NAK)")
	if s.Findings[0].Severity != SeverityCritical {
		t.Errorf("an exchange that never completed leads: %+v", s.Findings[0])
	}
}

// vrrp is a VRRP advertisement (v2: interval in seconds; v3: centiseconds).
func vrrp(version byte, vrid, prio byte, vip string) []byte {
	b := []byte{version<<4 | 1, vrid, prio, 1, 0, 1, 0, 0}
	if version == 3 {
		binary.BigEndian.PutUint16(b[4:], 100)
	}
	return append(b, net.ParseIP(vip).To4()...)
}

func TestVRRPMasters(t *testing.T) {
	b := newBuilder(t)
	// VRID 1: one master. VRID 2: two routers advertise side by side for a while.
	for i := 0; i < 4; i++ {
		b.ip4("10.0.0.2", "224.0.0.18", layers.IPProtocolVRRP, gopacket.Payload(vrrp(3, 1, 120, "10.0.0.254")))
		b.ip4("10.0.1.2", "224.0.0.18", layers.IPProtocolVRRP, gopacket.Payload(vrrp(2, 2, 110, "10.0.1.254")))
		b.ip4("10.0.1.3", "224.0.0.18", layers.IPProtocolVRRP, gopacket.Payload(vrrp(2, 2, 100, "10.0.1.254")))
		b.at = b.at.Add(1e9)
	}
	s := readBuilt(t, b)
	if len(s.VRRP) != 2 || s.VRRP[0].Master != "10.0.0.2" || s.VRRP[0].Advertisers[0].Interval != 1 || s.VRRP[0].Advertisers[0].VirtualIPs[0] != "10.0.0.254" {
		t.Fatalf("vrrp: %+v", s.VRRP)
	}
	textHas(t, finding(t, s, "vrrp_master").Text, "VRID 1 (VRRPv3): master 10.0.0.2 (priority 120")
	f := finding(t, s, "vrrp_duplicate_master")
	if f.Severity != SeverityCritical {
		t.Errorf("severity %s", f.Severity)
	}
	textHas(t, f.Text, "VRID 2", "10.0.1.2 (priority 110", "10.0.1.3 (priority 100", "at the same time")

	// A takeover: the old master stops, the backup starts.
	b = newBuilder(t)
	for i := 0; i < 3; i++ {
		b.ip4("10.0.1.2", "224.0.0.18", layers.IPProtocolVRRP, gopacket.Payload(vrrp(2, 2, 110, "10.0.1.254")))
		b.at = b.at.Add(1e9)
	}
	b.at = b.at.Add(3e9)
	for i := 0; i < 3; i++ {
		b.ip4("10.0.1.3", "224.0.0.18", layers.IPProtocolVRRP, gopacket.Payload(vrrp(2, 2, 100, "10.0.1.254")))
		b.at = b.at.Add(1e9)
	}
	s = readBuilt(t, b)
	textHas(t, finding(t, s, "vrrp_master_transition").Text, "master changed", "master now 10.0.1.3")
	noFinding(t, s, "vrrp_duplicate_master")
}

// cdp is a CDPv2 frame's payload after the Ethernet header: SNAP, then the TLVs.
func cdp(device, port string, nativeVLAN uint16, full bool) []byte {
	b := []byte{0xaa, 0xaa, 0x03, 0, 0, 0x0c, 0x20, 0x00, 2, 180, 0, 0}
	tlv := func(typ uint16, v []byte) {
		h := make([]byte, 4)
		binary.BigEndian.PutUint16(h, typ)
		binary.BigEndian.PutUint16(h[2:], uint16(4+len(v)))
		b = append(append(b, h...), v...)
	}
	tlv(0x0001, []byte(device))
	tlv(0x0003, []byte(port))
	tlv(0x0006, []byte("Cisco IOSv"))
	tlv(0x000a, []byte{byte(nativeVLAN >> 8), byte(nativeVLAN)})
	duplex := byte(0)
	if full {
		duplex = 1
	}
	tlv(0x000b, []byte{duplex})
	return b
}

func TestDiscoveryNeighbours(t *testing.T) {
	b := newBuilder(t)
	cdpMulticast := net.HardwareAddr{0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc}
	b.frame(&layers.Ethernet{SrcMAC: macA, DstMAC: cdpMulticast, EthernetType: layers.EthernetTypeLLC}, gopacket.Payload(cdp("SW1", "GigabitEthernet0/1", 1, true)))
	b.frame(&layers.Ethernet{SrcMAC: macB, DstMAC: cdpMulticast, EthernetType: layers.EthernetTypeLLC}, gopacket.Payload(cdp("SW2", "GigabitEthernet0/2", 10, false)))
	lldp := &layers.LinkLayerDiscovery{
		ChassisID: layers.LLDPChassisID{Subtype: layers.LLDPChassisIDSubTypeMACAddr, ID: macA},
		PortID:    layers.LLDPPortID{Subtype: layers.LLDPPortIDSubtypeIfaceName, ID: []byte("eth0")},
		TTL:       120,
		Values:    []layers.LinkLayerDiscoveryValue{{Type: layers.LLDPTLVSysName, Length: 2, Value: []byte("R1")}},
	}
	b.frame(&layers.Ethernet{SrcMAC: macA, DstMAC: net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, EthernetType: layers.EthernetTypeLinkLayerDiscovery}, lldp)
	s := readBuilt(t, b)
	if len(s.Neighbors) != 3 {
		t.Fatalf("neighbours: %+v", s.Neighbors)
	}
	if n := s.Neighbors[0]; n.Device != "SW1" || n.Port != "GigabitEthernet0/1" || n.TTL != 180 || n.NativeVLAN != 1 || n.Duplex != "full" || n.Platform != "Cisco IOSv" {
		t.Errorf("SW1: %+v", n)
	}
	if n := s.Neighbors[2]; n.Protocol != "LLDP" || n.Device != "R1" || n.Port != "eth0" || n.TTL != 120 {
		t.Errorf("R1: %+v", n)
	}
	textHas(t, finding(t, s, "cdp_native_vlan_mismatch").Text, "SW1 GigabitEthernet0/1 has VLAN 1", "SW2 GigabitEthernet0/2 has VLAN 10")
	textHas(t, finding(t, s, "cdp_duplex_mismatch").Text, "full duplex", "half duplex")
}

// A skills directory's checks are evaluated where their fields are decoded; the others are
// set aside with the reason.
func TestSkillChecks(t *testing.T) {
	checks := []Check{
		{Source: "packet_analysis/icmp.yaml", Name: "icmp_redirect", Severity: "major", Condition: "icmp.type == 5",
			Message: "ICMP redirect from {ip.src} to {ip.dst}"},
		{Source: "packet_analysis/arp.yaml", Name: "gratuitous_arp", Severity: "minor", Condition: "arp.opcode == 2 and arp.src.proto_ipv4 == arp.dst.proto_ipv4",
			Message: "Gratuitous ARP from {arp.src.proto_ipv4}: {count} seen"},
		{Source: "packet_analysis/icmp.yaml", Name: "ping_timeout", Condition: "icmp.type == 8", Message: "x"},
		{Source: "packet_analysis/vrrp.yaml", Name: "vrrp_checksum", Condition: "vrrp.checksum.status != 0", Message: "x"},
		{Source: "packet_analysis/stp.yaml", Name: "stp_storm", Condition: "null", Message: "x"},
		{Source: "packet_analysis/vrrp.yaml", Name: "vrrp_master_transition", Condition: "vrrp.prio >", Message: "x"},
		{Source: "packet_analysis/ospf.yaml", Name: "lsa_aged", Condition: "ospf.lsa.age > 3500", Message: "{ospf.lsa.id}"},
	}
	usable, skipped := CompileChecks(checks)
	if len(usable) != 2 || len(skipped) != 5 {
		t.Fatalf("usable %+v, skipped %+v", usable, skipped)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Check.Name] = s.Reason
	}
	for name, want := range map[string]string{"ping_timeout": "ordinary traffic", "vrrp_checksum": "vrrp.checksum.status",
		"stp_storm": "no condition", "vrrp_master_transition": "does not parse", "lsa_aged": "ospf.lsa.age"} {
		if !strings.Contains(reasons[name], want) {
			t.Errorf("%s skipped for %q, want %q", name, reasons[name], want)
		}
	}

	b := newBuilder(t)
	b.ip4("10.0.0.1", "10.0.0.9", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(5, 1)}, gopacket.Payload(make([]byte, 28)))
	for i := 0; i < 2; i++ {
		b.frame(&layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeARP}, &layers.ARP{AddrType: layers.LinkTypeEthernet,
			Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPReply,
			SourceHwAddress: macA, SourceProtAddress: []byte{10, 0, 0, 7}, DstHwAddress: macB, DstProtAddress: []byte{10, 0, 0, 7}})
	}
	b.ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 1, Seq: 1})
	s, err := Read(&b.buf, 0, 0, nil, WithChecks(checks))
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	f := finding(t, s, "packet_analysis/icmp.yaml:icmp_redirect")
	if f.Severity != SeverityMajor || f.Text != "ICMP redirect from 10.0.0.1 to 10.0.0.9" || f.Protocol != "ICMP" {
		t.Errorf("redirect: %+v", f)
	}
	if f := finding(t, s, "packet_analysis/arp.yaml:gratuitous_arp"); f.Text != "Gratuitous ARP from 10.0.0.7: 2 seen" {
		t.Errorf("gratuitous: %+v", f)
	}
	noFinding(t, s, "packet_analysis/icmp.yaml:ping_timeout")
}

// Truncated and corrupted copies of every recorded frame go through the decoders without a
// panic: a capture may be cut anywhere by its snap length.
func TestDecodersSurviveCutFrames(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pcap"))
	if len(files) == 0 {
		t.Fatal("no recorded captures")
	}
	a := NewAnalyzer(layers.LinkTypeEthernet, 0, WithChecks([]Check{{Name: "x", Condition: "ospf.hello.hello_interval != 10", Message: "{ip.src}"}}))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcapgo.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			frame, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			for n := 0; n <= len(frame); n++ {
				cut := append([]byte(nil), frame[:n]...)
				a.Add(cut, ci)
				if n > 34 {
					cut[n-1] ^= 0xff
					a.Add(cut, ci)
				}
			}
		}
	}
	_ = a.Summary().Text()
}

func readBuilt(t *testing.T, b *builder) Summary {
	t.Helper()
	s, err := Read(&b.buf, 0, 0, nil)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return s
}
