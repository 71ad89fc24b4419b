package capture

import (
	"fmt"
	"net"
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

// classify fills p from the layers just decoded; p.proto stays empty when nothing was.
func (a *Analyzer) classify(p *packet) {
	hasEth := a.has(layers.LayerTypeEthernet)
	if hasEth {
		p.src, p.dst = a.eth.SrcMAC.String(), a.eth.DstMAC.String()
	}
	var l3src, l3dst string
	switch {
	case a.has(layers.LayerTypeARP):
		a.onARP(p)
		return
	case a.has(layers.LayerTypeIPv4):
		l3src, l3dst = a.ip4.SrcIP.String(), a.ip4.DstIP.String()
		p.proto = "IPv4"
		if a.describe {
			p.info = fmt.Sprintf("%s → %s IPv4 proto %d", l3src, l3dst, a.ip4.Protocol)
		}
	case a.has(layers.LayerTypeIPv6):
		l3src, l3dst = a.ip6.SrcIP.String(), a.ip6.DstIP.String()
		p.proto = "IPv6"
		if a.describe {
			p.info = fmt.Sprintf("%s → %s IPv6 next header %d", l3src, l3dst, a.ip6.NextHeader)
		}
	case hasEth:
		p.proto = ethernetProtocol(&a.eth)
		if a.describe {
			p.info = fmt.Sprintf("%s → %s %s len=%d", p.src, p.dst, p.proto, len(a.eth.Payload))
		}
		return
	default:
		return
	}
	p.src, p.dst = l3src, l3dst
	switch {
	case a.has(layers.LayerTypeTCP):
		a.onTCP(p, l3src, l3dst)
	case a.has(layers.LayerTypeUDP):
		p.proto = "UDP"
		if a.describe {
			p.info = fmt.Sprintf("%s → %s UDP len=%d", hostPort(l3src, uint16(a.udp.SrcPort)), hostPort(l3dst, uint16(a.udp.DstPort)), len(a.udp.Payload))
		}
	case a.has(layers.LayerTypeICMPv4):
		a.onICMPv4(p, l3src, l3dst)
	case a.has(layers.LayerTypeICMPv6):
		a.onICMPv6(p, l3src, l3dst)
	}
}

// ethernetProtocol names a frame that carries neither ARP nor IP.
func ethernetProtocol(eth *layers.Ethernet) string {
	if eth.EthernetType == layers.EthernetTypeLLC || eth.Length > 0 {
		p := eth.Payload
		switch {
		case len(p) >= 3 && p[0] == 0x42 && p[1] == 0x42:
			return "STP"
		case len(p) >= 8 && p[0] == 0xaa && p[1] == 0xaa && p[6] == 0x20 && p[7] == 0x00:
			return "CDP"
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

func hostPort(ip string, port uint16) string {
	return net.JoinHostPort(ip, fmt.Sprint(port))
}
