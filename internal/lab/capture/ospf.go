package capture

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/gopacket/layers"
)

// OSPFRouter is what one OSPF router's packets on the link said about it.
type OSPFRouter struct {
	RouterID string `json:"router_id"`
	Address  string `json:"address"`
	Version  int    `json:"version"`
	Area     string `json:"area"`
	// HelloInterval and DeadInterval are in seconds, as the last hello gave them.
	HelloInterval uint16 `json:"hello_interval"`
	DeadInterval  uint32 `json:"dead_interval"`
	// NetworkMask is OSPFv2's (OSPFv3 hellos carry none).
	NetworkMask string `json:"network_mask,omitempty"`
	// AuthType is OSPFv2's: "none", "simple password" or "cryptographic".
	AuthType string `json:"auth_type,omitempty"`
	// DBDMTU is the interface MTU its Database Description packets gave (0: none seen).
	DBDMTU    uint16   `json:"dbd_mtu,omitempty"`
	Neighbors []string `json:"neighbors"` // router IDs in its last hello
	Hellos    int      `json:"hellos"`
	DBDs      int      `json:"dbds"`
	LSUs      int      `json:"lsus"`
	// Sources lists every address that sent packets with this router ID (more than one is a
	// router ID conflict).
	Sources []string `json:"sources,omitempty"`
}

// OSPFPair is two routers on the link as the other would see them: whether they agree on what
// must match, and how far their adjacency got.
type OSPFPair struct {
	A          string   `json:"a"` // router IDs
	B          string   `json:"b"`
	Mismatches []string `json:"mismatches,omitempty"`
	State      string   `json:"state"`
}

// ospfRouterState keys a router by protocol version and router ID.
type ospfRouterKey struct {
	version  int
	routerID uint32
}

type ospfRouterState struct {
	r       OSPFRouter
	order   int
	sources map[string]bool
	acks    int
}

type ospfState struct {
	routers map[ospfRouterKey]*ospfRouterState
}

var ospfTypeNames = map[layers.OSPFType]string{layers.OSPFHello: "Hello", layers.OSPFDatabaseDescription: "DBD",
	layers.OSPFLinkStateRequest: "LSR", layers.OSPFLinkStateUpdate: "LSU", layers.OSPFLinkStateAcknowledgment: "LSAck"}

var ospfAuthNames = map[uint16]string{0: "none", 1: "simple password", 2: "cryptographic"}

// ospfMinLength is the shortest packet of each type gopacket can read without indexing past
// the data it was given.
var ospfMinLength = map[int]map[layers.OSPFType]int{
	2: {layers.OSPFHello: 44, layers.OSPFDatabaseDescription: 32, layers.OSPFLinkStateRequest: 24, layers.OSPFLinkStateUpdate: 28, layers.OSPFLinkStateAcknowledgment: 24},
	3: {layers.OSPFHello: 36, layers.OSPFDatabaseDescription: 28, layers.OSPFLinkStateRequest: 16, layers.OSPFLinkStateUpdate: 20, layers.OSPFLinkStateAcknowledgment: 16},
}

// onOSPF reads an OSPFv2 or OSPFv3 packet.
func (a *Analyzer) onOSPF(p *packet, src, dst string, data []byte) {
	if len(data) < 16 || (data[0] != 2 && data[0] != 3) {
		return
	}
	version := int(data[0])
	typ := layers.OSPFType(data[1])
	length := int(binary.BigEndian.Uint16(data[2:4]))
	if length > len(data) || length < ospfMinLength[version][typ] {
		return // cut by the capture's snap length, or not OSPF after all
	}
	data = data[:length]
	var hdr layers.OSPF
	var auType uint16
	ok := false
	if version == 2 {
		var o layers.OSPFv2
		ok = safely(func() { _ = o.DecodeFromBytes(data, nil) })
		hdr, auType = o.OSPF, o.AuType
	} else {
		var o layers.OSPFv3
		ok = safely(func() { _ = o.DecodeFromBytes(data, nil) })
		hdr = o.OSPF
	}
	if !ok {
		return
	}
	p.proto = fmt.Sprintf("OSPFv%d", version)
	name := ospfTypeNames[typ]
	if name == "" {
		name = fmt.Sprintf("type %d", typ)
	}
	a.set("ospf.msg", strconv.Itoa(int(typ)))
	a.set("ospf.version", strconv.Itoa(version))
	a.set("ospf.srcrouter", ipv4(hdr.RouterID))
	a.set("ospf.area_id", ipv4(hdr.AreaID))
	if version == 2 {
		a.set("ospf.auth.type", strconv.Itoa(int(auType)))
	}
	r := a.ospfRouter(version, hdr.RouterID, src)
	if r == nil {
		return
	}
	r.r.Area = ipv4(hdr.AreaID)
	info := ""
	switch c := hdr.Content.(type) {
	case layers.HelloPkgV2:
		r.r.NetworkMask = ipv4(c.NetworkMask)
		r.r.AuthType = authName(auType)
		a.set("ospf.hello.network_mask", r.r.NetworkMask)
		info = a.ospfHello(r, c.HelloPkg)
	case layers.HelloPkg:
		info = a.ospfHello(r, c)
	case layers.DbDescPkg:
		r.r.DBDs++
		r.r.DBDMTU = c.InterfaceMTU
		a.set("ospf.db.interface_mtu", strconv.Itoa(int(c.InterfaceMTU)))
		info = fmt.Sprintf(" mtu=%d seq=%d", c.InterfaceMTU, c.DDSeqNumber)
	case layers.LSUpdate:
		r.r.LSUs++
		info = fmt.Sprintf(" %d LSA(s)", c.NumOfLSAs)
	}
	if typ == layers.OSPFLinkStateAcknowledgment {
		r.acks++
	}
	if a.describe {
		p.info = fmt.Sprintf("%s → %s %s %s router %s area %s%s", src, dst, p.proto, name, ipv4(hdr.RouterID), ipv4(hdr.AreaID), info)
	}
}

func (a *Analyzer) ospfHello(r *ospfRouterState, h layers.HelloPkg) string {
	r.r.Hellos++
	r.r.HelloInterval, r.r.DeadInterval = h.HelloInterval, h.RouterDeadInterval
	r.r.Neighbors = r.r.Neighbors[:0]
	for _, n := range h.NeighborID {
		r.r.Neighbors = append(r.r.Neighbors, ipv4(n))
	}
	a.set("ospf.hello.hello_interval", strconv.Itoa(int(h.HelloInterval)))
	a.set("ospf.hello.router_dead_interval", strconv.Itoa(int(h.RouterDeadInterval)))
	if len(r.r.Neighbors) > 0 {
		a.set("ospf.hello.active_neighbor", r.r.Neighbors[0])
	}
	return fmt.Sprintf(" hello=%d dead=%d neighbors=%d", h.HelloInterval, h.RouterDeadInterval, len(h.NeighborID))
}

func authName(t uint16) string {
	if n, ok := ospfAuthNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

// ospfRouter finds or starts the record of a router; nil once too many are tracked.
func (a *Analyzer) ospfRouter(version int, id uint32, src string) *ospfRouterState {
	r := track(&a.ospf.routers, ospfRouterKey{version, id}, func(order int) *ospfRouterState {
		return &ospfRouterState{r: OSPFRouter{RouterID: ipv4(id), Address: src, Version: version, Neighbors: []string{}},
			order: order, sources: map[string]bool{}}
	})
	if r != nil && !r.sources[src] {
		r.sources[src] = true
		r.r.Sources = append(r.r.Sources, src)
	}
	return r
}

// ospfRouters lists the routers in the order they first spoke.
func (a *Analyzer) ospfRouters() []*ospfRouterState {
	return inOrder(a.ospf.routers, func(r *ospfRouterState) int { return r.order })
}

// OSPF summarises the routers and, for every two of the same version, what they disagree on.
func (a *Analyzer) OSPF() ([]OSPFRouter, []OSPFPair) {
	routers := a.ospfRouters()
	var rs []OSPFRouter
	var pairs []OSPFPair
	for i, x := range routers {
		rs = append(rs, x.r)
		for _, y := range routers[i+1:] {
			if x.r.Version == y.r.Version {
				pairs = append(pairs, ospfPair(x, y))
			}
		}
	}
	return rs, pairs
}

// ospfPair compares what two routers must agree on to become neighbours, and reads how far
// their adjacency got from the packets both sent.
func ospfPair(x, y *ospfRouterState) OSPFPair {
	a, b := &x.r, &y.r
	pair := OSPFPair{A: a.RouterID, B: b.RouterID}
	if a.Hellos > 0 && b.Hellos > 0 {
		if a.HelloInterval != b.HelloInterval {
			pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("hello interval %d s vs %d s", a.HelloInterval, b.HelloInterval))
		}
		if a.DeadInterval != b.DeadInterval {
			pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("dead interval %d s vs %d s", a.DeadInterval, b.DeadInterval))
		}
		if a.NetworkMask != b.NetworkMask {
			pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("network mask %s vs %s", a.NetworkMask, b.NetworkMask))
		}
		if a.AuthType != b.AuthType {
			pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("authentication %s vs %s", a.AuthType, b.AuthType))
		}
	}
	if a.Area != b.Area {
		pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("area %s vs %s", a.Area, b.Area))
	}
	if a.DBDMTU != 0 && b.DBDMTU != 0 && a.DBDMTU != b.DBDMTU {
		pair.Mismatches = append(pair.Mismatches, fmt.Sprintf("MTU %d vs %d in DBD", a.DBDMTU, b.DBDMTU))
	}
	aSeesB, bSeesA := contains(a.Neighbors, b.RouterID), contains(b.Neighbors, a.RouterID)
	switch {
	case a.Hellos == 0 || b.Hellos == 0:
		pair.State = "no hellos from both in the capture"
	case !aSeesB && !bSeesA:
		pair.State = "no adjacency: neither lists the other in its hellos"
	case !aSeesB || !bSeesA:
		hears, deaf := a.RouterID, b.RouterID
		if !aSeesB {
			hears, deaf = b.RouterID, a.RouterID
		}
		pair.State = fmt.Sprintf("one-way (Init): %s lists %s, but %s does not list %s", hears, deaf, deaf, hears)
	case a.DBDs > 0 && b.DBDs > 0 && a.LSUs+b.LSUs+x.acks+y.acks > 0 && (a.DBDMTU == b.DBDMTU || a.DBDMTU == 0 || b.DBDMTU == 0):
		pair.State = "databases exchanged (Loading/Full)"
	case a.DBDs > 0 || b.DBDs > 0:
		pair.State = "exchanging databases (ExStart/Exchange)"
	default:
		pair.State = "2-Way: each lists the other"
	}
	return pair
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ospfFindings names what keeps OSPF routers on the link from becoming neighbours.
func (a *Analyzer) ospfFindings() []Finding {
	routers, pairs := a.OSPF()
	var out []Finding
	for _, r := range routers {
		if len(r.Sources) > 1 {
			out = append(out, Finding{Severity: SeverityCritical, Protocol: "OSPF", Check: "ospf_router_id_conflict",
				Text: fmt.Sprintf("router ID %s is used by %s: two routers share it, so neither forms adjacencies reliably", r.RouterID, listOf(r.Sources))})
		}
	}
	byID := map[string]OSPFRouter{}
	for _, r := range routers {
		byID[r.RouterID] = r
	}
	for _, pr := range pairs {
		a, b := byID[pr.A], byID[pr.B]
		who := fmt.Sprintf("%s (%s) and %s (%s)", a.RouterID, a.Address, b.RouterID, b.Address)
		for _, m := range pr.Mismatches {
			check, what, why := ospfMismatchCheck(m)
			out = append(out, Finding{Severity: SeverityCritical, Protocol: "OSPF", Check: check,
				Text: fmt.Sprintf("%s mismatch between %s: %s; %s — the likely fault. Adjacency: %s", what, who, m, why, pr.State)})
		}
		if len(pr.Mismatches) == 0 && strings.HasPrefix(pr.State, "one-way") {
			out = append(out, Finding{Severity: SeverityMajor, Protocol: "OSPF", Check: "ospf_stuck_init",
				Text: fmt.Sprintf("%s: %s; the hellos agree, so one of them drops the other's packets (an ACL, a passive interface, or a one-way link)", who, pr.State)})
		}
		if len(pr.Mismatches) == 0 && !strings.HasPrefix(pr.State, "one-way") {
			out = append(out, Finding{Severity: SeverityInfo, Protocol: "OSPF", Check: "ospf_adjacency",
				Text: fmt.Sprintf("%s agree on area %s, hello %d s, dead %d s: %s", who, a.Area, a.HelloInterval, a.DeadInterval, pr.State)})
		}
	}
	if len(routers) == 1 && routers[0].Hellos > 0 {
		r := routers[0]
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "OSPF", Check: "ospf_single_speaker",
			Text: fmt.Sprintf("only %s (%s) sends OSPF hellos on this link (area %s, hello %d s): the other end runs no OSPF on it, is passive, or its hellos do not arrive",
				r.RouterID, r.Address, r.Area, r.HelloInterval)})
	}
	return out
}

// ospfMismatchCheck names the check of a mismatch, what differs, and why it matters.
func ospfMismatchCheck(m string) (check, what, why string) {
	switch {
	case strings.HasPrefix(m, "hello"):
		return "ospf_hello_mismatch", "OSPF hello interval", "routers only become neighbours when their hello intervals match"
	case strings.HasPrefix(m, "dead"):
		return "ospf_dead_mismatch", "OSPF dead interval", "routers only become neighbours when their dead intervals match"
	case strings.HasPrefix(m, "network"):
		return "ospf_mask_mismatch", "OSPF network mask", "on a broadcast link both ends need the same mask (only point-to-point links ignore it)"
	case strings.HasPrefix(m, "authentication"):
		return "ospf_authentication_mismatch", "OSPF authentication type", "each end drops the other's packets"
	case strings.HasPrefix(m, "area"):
		return "ospf_area_mismatch", "OSPF area", "both ends of a link must be in the same area"
	}
	return "ospf_mtu_mismatch", "OSPF MTU", "the end with the smaller MTU refuses the other's DBD, so the adjacency sticks in ExStart/Exchange"
}
