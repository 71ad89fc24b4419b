package capture

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func (a *Analyzer) line(p packet, at time.Time) string {
	return fmt.Sprintf("#%d %.6f %s", p.n, at.Sub(a.first).Seconds(), p.info)
}

func (a *Analyzer) has(t gopacket.LayerType) bool {
	for _, d := range a.decoded {
		if d == t {
			return true
		}
	}
	return false
}

// IP protocol numbers the analysis reads beyond the layers gopacket's parser gives it.
const (
	ipProtoOSPF = 89
	ipProtoVRRP = 112
	bgpPort     = 179
)

// classify fills p from the layers just decoded; p.proto stays empty when nothing was.
func (a *Analyzer) classify(p *packet) {
	hasEth := a.has(layers.LayerTypeEthernet)
	if hasEth {
		p.src, p.dst = a.eth.SrcMAC.String(), a.eth.DstMAC.String()
		a.set("eth.src", p.src)
		a.set("eth.dst", p.dst)
	}
	var l3src, l3dst string
	var ipProto uint8
	var ipPayload []byte
	switch {
	case a.has(layers.LayerTypeARP):
		a.onARP(p)
		return
	case a.has(layers.LayerTypeIPv4):
		l3src, l3dst = a.ip4.SrcIP.String(), a.ip4.DstIP.String()
		ipProto, ipPayload = uint8(a.ip4.Protocol), a.ip4.Payload
		a.set("ip.src", l3src)
		a.set("ip.dst", l3dst)
		p.proto = "IPv4"
		if a.describe {
			p.info = fmt.Sprintf("%s → %s IPv4 proto %d", l3src, l3dst, a.ip4.Protocol)
		}
	case a.has(layers.LayerTypeIPv6):
		l3src, l3dst = a.ip6.SrcIP.String(), a.ip6.DstIP.String()
		ipProto, ipPayload = uint8(a.ip6.NextHeader), a.ip6.Payload
		a.set("ipv6.src", l3src)
		a.set("ipv6.dst", l3dst)
		p.proto = "IPv6"
		if a.describe {
			p.info = fmt.Sprintf("%s → %s IPv6 next header %d", l3src, l3dst, a.ip6.NextHeader)
		}
	case hasEth:
		a.onEthernet(p)
		return
	default:
		return
	}
	p.src, p.dst = l3src, l3dst
	switch {
	case a.has(layers.LayerTypeTCP):
		a.onTCP(p, l3src, l3dst)
		if (a.tcp.SrcPort == bgpPort || a.tcp.DstPort == bgpPort) && len(a.tcp.Payload) > 0 {
			a.onBGP(p, l3src, l3dst)
		}
	case a.has(layers.LayerTypeUDP):
		p.proto = "UDP"
		a.set("udp.srcport", strconv.Itoa(int(a.udp.SrcPort)))
		a.set("udp.dstport", strconv.Itoa(int(a.udp.DstPort)))
		if a.describe {
			p.info = fmt.Sprintf("%s → %s UDP len=%d", hostPort(l3src, uint16(a.udp.SrcPort)), hostPort(l3dst, uint16(a.udp.DstPort)), len(a.udp.Payload))
		}
		if isDHCPPort(a.udp.SrcPort) && isDHCPPort(a.udp.DstPort) {
			a.onDHCP(p, l3src, l3dst)
		}
	case a.has(layers.LayerTypeICMPv4):
		a.onICMPv4(p, l3src, l3dst)
	case a.has(layers.LayerTypeICMPv6):
		a.onICMPv6(p, l3src, l3dst)
	case ipProto == ipProtoOSPF:
		a.onOSPF(p, l3src, l3dst, ipPayload)
	case ipProto == ipProtoVRRP:
		a.onVRRP(p, l3src, l3dst, ipPayload)
	}
}

// onEthernet classifies a frame that carries neither ARP nor IP: the discovery and spanning
// tree protocols are decoded, anything else is named by its EtherType.
func (a *Analyzer) onEthernet(p *packet) {
	p.proto = ethernetProtocol(&a.eth)
	if a.describe {
		p.info = fmt.Sprintf("%s → %s %s len=%d", p.src, p.dst, p.proto, len(a.eth.Payload))
	}
	switch p.proto {
	case "STP":
		a.onSTP(p, a.eth.Payload)
	case "LLDP":
		a.onLLDP(p, a.eth.Payload)
	case "CDP":
		a.onCDP(p, a.eth.Payload)
	}
}

// ethernetProtocol names a frame that carries neither ARP nor IP.
func ethernetProtocol(eth *layers.Ethernet) string {
	if eth.EthernetType == layers.EthernetTypeLLC || eth.Length > 0 {
		p := eth.Payload
		switch {
		case len(p) >= 3 && p[0] == 0x42 && p[1] == 0x42:
			return "STP"
		case isSNAP(p, 0x00000c, 0x2000):
			return "CDP"
		case isSNAP(p, 0x00000c, 0x010b):
			return "STP" // Cisco's per-VLAN spanning tree (PVST+)
		}
		return "LLC"
	}
	switch eth.EthernetType {
	case layers.EthernetTypeLinkLayerDiscovery:
		return "LLDP"
	case layers.EthernetTypeCiscoDiscovery:
		return "CDP"
	}
	return fmt.Sprintf("EtherType 0x%04x", uint16(eth.EthernetType))
}

// isSNAP tells an LLC/SNAP header (AA AA 03) with the given organisation code and protocol.
func isSNAP(p []byte, oui uint32, pid uint16) bool {
	return len(p) >= 8 && p[0] == 0xaa && p[1] == 0xaa && p[2] == 0x03 &&
		uint32(p[3])<<16|uint32(p[4])<<8|uint32(p[5]) == oui && uint16(p[6])<<8|uint16(p[7]) == pid
}

func hostPort(ip string, port uint16) string {
	return net.JoinHostPort(ip, fmt.Sprint(port))
}

// safely runs a decoder of protocol bytes: gopacket's decoders index by the lengths a packet
// claims, and a malformed packet must not stop the analysis. It reports whether fn finished.
func safely(fn func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fn()
	return true
}
