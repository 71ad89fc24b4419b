package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
)

// STPBridge is what one bridge's BPDUs on the link said.
type STPBridge struct {
	Bridge   string `json:"bridge"` // priority.MAC
	Root     string `json:"root"`
	RootCost uint32 `json:"root_cost"`
	Port     string `json:"port"`
	Protocol string `json:"protocol"` // STP, RSTP, MSTP, PVST+
	// Timers are the root's, as this bridge relays them (seconds).
	Hello        float64 `json:"hello"`
	MaxAge       float64 `json:"max_age"`
	ForwardDelay float64 `json:"forward_delay"`
	BPDUs        int     `json:"bpdus"`
	// TopologyChanges counts BPDUs with the topology-change flag and TCN BPDUs it sent.
	TopologyChanges int `json:"topology_changes"`
	// RootChanges counts the times the root it announced changed during the capture.
	RootChanges int `json:"root_changes"`
}

// STPSummary is the spanning tree as the link saw it.
type STPSummary struct {
	// Root is the root bridge most bridges announce ("" when no configuration BPDU was seen).
	Root            string      `json:"root"`
	TopologyChanges int         `json:"topology_changes"`
	Bridges         []STPBridge `json:"bridges"`
}

type stpBridgeState struct {
	b     STPBridge
	order int
}

type stpState struct {
	bridges map[string]*stpBridgeState // by the sending bridge, or the source MAC for TCNs
}

var stpProtocols = map[byte]string{0: "STP", 2: "RSTP", 3: "MSTP"}

// onSTP reads a BPDU after its LLC (or, for PVST+, SNAP) header.
func (a *Analyzer) onSTP(p *packet, llc []byte) {
	var bpdu []byte
	pvst := false
	switch {
	case len(llc) >= 3 && llc[0] == 0x42:
		bpdu = llc[3:]
	case len(llc) >= 8:
		bpdu, pvst = llc[8:], true
	}
	if len(bpdu) < 4 || binary.BigEndian.Uint16(bpdu[0:2]) != 0 {
		return
	}
	version, typ := bpdu[2], bpdu[3]
	proto := stpProtocols[version]
	if proto == "" {
		proto = fmt.Sprintf("STP version %d", version)
	}
	if pvst {
		proto = "PVST+"
	}
	a.set("stp.type", strconv.Itoa(int(typ)))
	a.set("stp.version", strconv.Itoa(int(version)))
	if typ == 0x80 { // a topology change notification: no fields beyond the type
		b := a.stpBridge(p.src)
		if b != nil {
			b.b.BPDUs++
			b.b.TopologyChanges++
			b.b.Protocol = proto
		}
		a.set("stp.flags.tc", "1")
		if a.describe {
			p.info = fmt.Sprintf("%s → %s %s topology change notification", p.src, p.dst, proto)
		}
		return
	}
	if len(bpdu) < 35 {
		return
	}
	flags := bpdu[4]
	root, bridge := bridgeID(bpdu[5:13]), bridgeID(bpdu[17:25])
	cost := binary.BigEndian.Uint32(bpdu[13:17])
	timer := func(off int) float64 { return float64(binary.BigEndian.Uint16(bpdu[off:off+2])) / 256 }
	tc := flags&0x01 != 0
	a.set("stp.flags.tc", boolField(tc))
	a.set("stp.root.hw", net.HardwareAddr(bpdu[7:13]).String())
	a.set("stp.root.prio", strconv.Itoa(int(binary.BigEndian.Uint16(bpdu[5:7])&0xf000)))
	a.set("stp.root.cost", strconv.FormatUint(uint64(cost), 10))
	a.set("stp.bridge.hw", net.HardwareAddr(bpdu[19:25]).String())
	a.set("stp.bridge.prio", strconv.Itoa(int(binary.BigEndian.Uint16(bpdu[17:19])&0xf000)))
	a.set("stp.hello", strconv.FormatFloat(timer(31), 'f', -1, 64))
	a.set("stp.max_age", strconv.FormatFloat(timer(29), 'f', -1, 64))
	a.set("stp.forward", strconv.FormatFloat(timer(33), 'f', -1, 64))
	b := a.stpBridge(bridge)
	if b == nil {
		return
	}
	if b.b.Root != "" && b.b.Root != root {
		b.b.RootChanges++
	}
	b.b.Root, b.b.RootCost, b.b.Protocol = root, cost, proto
	b.b.Port = fmt.Sprintf("0x%04x", binary.BigEndian.Uint16(bpdu[25:27]))
	b.b.Hello, b.b.MaxAge, b.b.ForwardDelay = timer(31), timer(29), timer(33)
	b.b.BPDUs++
	if tc {
		b.b.TopologyChanges++
	}
	if a.describe {
		tcNote := ""
		if tc {
			tcNote = " TC"
		}
		p.info = fmt.Sprintf("%s → %s %s root %s cost %d bridge %s port %s%s", p.src, p.dst, proto, root, cost, bridge, b.b.Port, tcNote)
	}
}

// bridgeID renders an 8-byte bridge identifier as priority.MAC (the priority without the
// VLAN that extended system IDs add to it).
func bridgeID(b []byte) string {
	prio := binary.BigEndian.Uint16(b[0:2])
	return fmt.Sprintf("%d.%s", prio&0xf000, net.HardwareAddr(b[2:8]))
}

func boolField(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

func (a *Analyzer) stpBridge(id string) *stpBridgeState {
	return track(&a.stp.bridges, id, func(order int) *stpBridgeState {
		return &stpBridgeState{b: STPBridge{Bridge: id}, order: order}
	})
}

// STP summarises the spanning tree; nil when no BPDU was seen.
func (a *Analyzer) STP() *STPSummary {
	if len(a.stp.bridges) == 0 {
		return nil
	}
	bs := inOrder(a.stp.bridges, func(b *stpBridgeState) int { return b.order })
	s := &STPSummary{Bridges: []STPBridge{}}
	votes := map[string]int{}
	for _, b := range bs {
		s.Bridges = append(s.Bridges, b.b)
		s.TopologyChanges += b.b.TopologyChanges
		if b.b.Root != "" {
			votes[b.b.Root]++
			if votes[b.b.Root] > votes[s.Root] {
				s.Root = b.b.Root
			}
		}
	}
	return s
}

// stpFindings names the root, disagreement about it, and topology changes.
func (a *Analyzer) stpFindings() []Finding {
	s := a.STP()
	if s == nil {
		return nil
	}
	var out []Finding
	roots := map[string][]string{}
	var order []string
	for _, b := range s.Bridges {
		if b.Root == "" {
			continue
		}
		if roots[b.Root] == nil {
			order = append(order, b.Root)
		}
		roots[b.Root] = append(roots[b.Root], b.Bridge)
	}
	if len(order) > 1 {
		var says []string
		for _, r := range order {
			says = append(says, fmt.Sprintf("%s says %s", listOf(roots[r]), r))
		}
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "STP", Check: "stp_root_disagreement",
			Text: "the bridges disagree on the root: " + listOf(says) + " (the tree has not converged, or BPDUs are lost or filtered one way)"})
	} else if s.Root != "" {
		out = append(out, Finding{Severity: SeverityInfo, Protocol: "STP", Check: "stp_root",
			Text: fmt.Sprintf("root bridge %s, announced by %s", s.Root, listOf(roots[s.Root]))})
	}
	for _, b := range s.Bridges {
		if b.RootChanges > 0 {
			out = append(out, Finding{Severity: SeverityMajor, Protocol: "STP", Check: "stp_root_change",
				Text: fmt.Sprintf("bridge %s changed the root it announces %d time(s) during the capture (now %s): a new bridge with a better priority, or a flapping link", b.Bridge, b.RootChanges, b.Root)})
		}
	}
	if s.TopologyChanges > 0 {
		sev := SeverityMinor
		if s.TopologyChanges >= 10 {
			sev = SeverityMajor
		}
		var from []string
		for _, b := range s.Bridges {
			if b.TopologyChanges > 0 {
				from = append(from, fmt.Sprintf("%s ×%d", b.Bridge, b.TopologyChanges))
			}
		}
		out = append(out, Finding{Severity: sev, Protocol: "STP", Check: "stp_topology_change",
			Text: fmt.Sprintf("%d topology change BPDU(s) (TC flag or TCN) from %s: ports are going up and down, or an edge port is not configured as one", s.TopologyChanges, listOf(from))})
	}
	return out
}
