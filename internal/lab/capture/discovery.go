package capture

import (
	"fmt"
	"strconv"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Neighbor is a device that announced itself on the link with LLDP or CDP.
type Neighbor struct {
	Protocol string `json:"protocol"` // LLDP or CDP
	// Device is LLDP's system name (or chassis ID) or CDP's device ID.
	Device   string `json:"device"`
	Port     string `json:"port"`
	TTL      uint16 `json:"ttl"`
	Platform string `json:"platform,omitempty"`
	// NativeVLAN and Duplex are CDP's ("" and 0 when not announced).
	NativeVLAN uint16 `json:"native_vlan,omitempty"`
	Duplex     string `json:"duplex,omitempty"`
	Announces  int    `json:"announcements"`
}

type neighborState struct {
	n     Neighbor
	order int
}

type discoveryState struct {
	neighbors map[string]*neighborState // by protocol and device
}

// onLLDP reads an LLDP frame's chassis, port, TTL and system name.
func (a *Analyzer) onLLDP(p *packet, payload []byte) {
	pkt := gopacket.NewPacket(payload, layers.LayerTypeLinkLayerDiscovery, gopacket.NoCopy)
	l, _ := pkt.Layer(layers.LayerTypeLinkLayerDiscovery).(*layers.LinkLayerDiscovery)
	if l == nil {
		return
	}
	device := chassisText(l.ChassisID)
	if info, _ := pkt.Layer(layers.LayerTypeLinkLayerDiscoveryInfo).(*layers.LinkLayerDiscoveryInfo); info != nil && info.SysName != "" {
		device = info.SysName
	}
	port := portText(l.PortID)
	a.set("lldp.tlv.system.name", device)
	a.set("lldp.port.id", port)
	a.set("lldp.time_to_live", strconv.Itoa(int(l.TTL)))
	if a.describe {
		p.info = fmt.Sprintf("%s → %s LLDP %s port %s ttl %d", p.src, p.dst, device, port, l.TTL)
	}
	if n := a.neighbor("LLDP", device); n != nil {
		n.n.Port, n.n.TTL = port, l.TTL
		n.n.Announces++
	}
}

func chassisText(c layers.LLDPChassisID) string {
	switch c.Subtype {
	case layers.LLDPChassisIDSubTypeMACAddr:
		if len(c.ID) == 6 {
			return fmt.Sprintf("%x:%x:%x:%x:%x:%x", c.ID[0], c.ID[1], c.ID[2], c.ID[3], c.ID[4], c.ID[5])
		}
	case layers.LLDPChassisIDSubTypeLocal, layers.LLDPChassisIDSubtypeIfaceName, layers.LLDPChassisIDSubTypeChassisComp:
		return string(c.ID)
	}
	return fmt.Sprintf("%x", c.ID)
}

func portText(pid layers.LLDPPortID) string {
	if pid.Subtype == layers.LLDPPortIDSubtypeMACAddr && len(pid.ID) == 6 {
		return fmt.Sprintf("%x:%x:%x:%x:%x:%x", pid.ID[0], pid.ID[1], pid.ID[2], pid.ID[3], pid.ID[4], pid.ID[5])
	}
	return string(pid.ID)
}

// onCDP reads a CDP frame after its SNAP header.
func (a *Analyzer) onCDP(p *packet, payload []byte) {
	if len(payload) < 8 {
		return
	}
	pkt := gopacket.NewPacket(payload[8:], layers.LayerTypeCiscoDiscovery, gopacket.NoCopy)
	info, _ := pkt.Layer(layers.LayerTypeCiscoDiscoveryInfo).(*layers.CiscoDiscoveryInfo)
	cdp, _ := pkt.Layer(layers.LayerTypeCiscoDiscovery).(*layers.CiscoDiscovery)
	if info == nil || cdp == nil {
		return
	}
	duplex := ""
	if hasCDPDuplex(cdp) {
		duplex = "half"
		if info.FullDuplex {
			duplex = "full"
		}
	}
	a.set("cdp.deviceid", info.DeviceID)
	a.set("cdp.portid", info.PortID)
	a.set("cdp.platform", info.Platform)
	if info.NativeVLAN != 0 {
		a.set("cdp.native_vlan", strconv.Itoa(int(info.NativeVLAN)))
	}
	if duplex != "" {
		a.set("cdp.duplex", duplex)
	}
	if a.describe {
		p.info = fmt.Sprintf("%s → %s CDP %s port %s platform %s ttl %d", p.src, p.dst, info.DeviceID, info.PortID, info.Platform, cdp.TTL)
	}
	if n := a.neighbor("CDP", info.DeviceID); n != nil {
		n.n.Port, n.n.TTL, n.n.Platform, n.n.NativeVLAN, n.n.Duplex = info.PortID, uint16(cdp.TTL), info.Platform, info.NativeVLAN, duplex
		n.n.Announces++
	}
}

func hasCDPDuplex(c *layers.CiscoDiscovery) bool {
	for _, v := range c.Values {
		if v.Type == layers.CDPTLVFullDuplex {
			return true
		}
	}
	return false
}

func (a *Analyzer) neighbor(proto, device string) *neighborState {
	return track(&a.nbrs.neighbors, proto+"|"+device, func(order int) *neighborState {
		return &neighborState{n: Neighbor{Protocol: proto, Device: device}, order: order}
	})
}

// Neighbors lists the devices that announced themselves, in the order they first did.
func (a *Analyzer) Neighbors() []Neighbor {
	ns := inOrder(a.nbrs.neighbors, func(n *neighborState) int { return n.order })
	out := make([]Neighbor, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.n)
	}
	return out
}

// discoveryFindings lists the neighbours, and what two CDP neighbours on the same link
// disagree on (native VLAN, duplex).
func (a *Analyzer) discoveryFindings() []Finding {
	var out []Finding
	var cdp []Neighbor
	for _, n := range a.Neighbors() {
		text := fmt.Sprintf("%s neighbour %s on port %s (TTL %d s", n.Protocol, n.Device, n.Port, n.TTL)
		if n.Platform != "" {
			text += ", " + n.Platform
		}
		text += ")"
		if n.TTL == 0 {
			text += ": TTL 0, the device is leaving"
		}
		out = append(out, Finding{Severity: SeverityInfo, Protocol: n.Protocol, Check: "neighbor", Text: text})
		if n.Protocol == "CDP" {
			cdp = append(cdp, n)
		}
	}
	for i, x := range cdp {
		for _, y := range cdp[i+1:] {
			if x.NativeVLAN != 0 && y.NativeVLAN != 0 && x.NativeVLAN != y.NativeVLAN {
				out = append(out, Finding{Severity: SeverityCritical, Protocol: "CDP", Check: "cdp_native_vlan_mismatch",
					Text: fmt.Sprintf("native VLAN mismatch: %s %s has VLAN %d, %s %s has VLAN %d — untagged traffic lands in different VLANs at each end", x.Device, x.Port, x.NativeVLAN, y.Device, y.Port, y.NativeVLAN)})
			}
			if x.Duplex != "" && y.Duplex != "" && x.Duplex != y.Duplex {
				out = append(out, Finding{Severity: SeverityMajor, Protocol: "CDP", Check: "cdp_duplex_mismatch",
					Text: fmt.Sprintf("duplex mismatch: %s %s is %s duplex, %s %s is %s duplex — expect late collisions and loss", x.Device, x.Port, x.Duplex, y.Device, y.Port, y.Duplex)})
			}
		}
	}
	return out
}
