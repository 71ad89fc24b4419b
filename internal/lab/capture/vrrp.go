package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"time"
)

// VRRPAdvertiser is a router that sent VRRP advertisements: only a master does.
type VRRPAdvertiser struct {
	Address  string `json:"address"`
	Priority uint8  `json:"priority"`
	// Interval is the advertisement interval in seconds.
	Interval       float64  `json:"interval"`
	Advertisements int      `json:"advertisements"`
	VirtualIPs     []string `json:"virtual_ips"`
	FirstSeconds   float64  `json:"first_seconds"` // since the capture's start
	LastSeconds    float64  `json:"last_seconds"`
}

// VRRPGroup is one virtual router: who advertised as its master.
type VRRPGroup struct {
	VRID    uint8 `json:"vrid"`
	Version int   `json:"version"`
	// Master is the advertiser heard last.
	Master      string           `json:"master"`
	Advertisers []VRRPAdvertiser `json:"advertisers"`
}

type vrrpAdvState struct {
	adv         VRRPAdvertiser
	first, last time.Time
	order       int
}

type vrrpGroupState struct {
	g     VRRPGroup
	order int
	advs  map[string]*vrrpAdvState
	last  string
}

type vrrpState struct {
	groups map[[2]int]*vrrpGroupState // version, VRID
}

// onVRRP reads a VRRPv2 or VRRPv3 advertisement (the field layout is the same up to the
// interval, which v3 gives in centiseconds beside the reserved bits).
func (a *Analyzer) onVRRP(p *packet, src, dst string, b []byte) {
	if len(b) < 8 {
		return
	}
	version, typ := int(b[0]>>4), b[0]&0x0f
	if (version != 2 && version != 3) || typ != 1 {
		return
	}
	vrid, prio, count := b[1], b[2], int(b[3])
	var interval float64
	if version == 2 {
		interval = float64(b[5])
	} else {
		interval = float64(binary.BigEndian.Uint16(b[4:6])&0x0fff) / 100
	}
	addrLen := 4
	if net.ParseIP(src).To4() == nil {
		addrLen = 16 // VRRPv3 for IPv6
	}
	var vips []string
	for i, off := 0, 8; i < count && off+addrLen <= len(b); i, off = i+1, off+addrLen {
		vips = append(vips, net.IP(b[off:off+addrLen]).String())
	}
	p.proto = fmt.Sprintf("VRRPv%d", version)
	a.set("vrrp.version", strconv.Itoa(version))
	a.set("vrrp.type", strconv.Itoa(int(typ)))
	a.set("vrrp.virt_rtr_id", strconv.Itoa(int(vrid)))
	a.set("vrrp.prio", strconv.Itoa(int(prio)))
	if a.describe {
		p.info = fmt.Sprintf("%s → %s %s advertisement VRID %d priority %d interval %gs %v", src, dst, p.proto, vrid, prio, interval, vips)
	}
	g := a.vrrpGroup(version, vrid)
	if g == nil {
		return
	}
	ad := track(&g.advs, src, func(order int) *vrrpAdvState {
		return &vrrpAdvState{adv: VRRPAdvertiser{Address: src}, first: a.now, order: order}
	})
	if ad == nil {
		return
	}
	ad.adv.Priority, ad.adv.Interval, ad.adv.VirtualIPs = prio, interval, vips
	ad.adv.Advertisements++
	ad.last = a.now
	g.last = src
}

func (a *Analyzer) vrrpGroup(version int, vrid uint8) *vrrpGroupState {
	return track(&a.vrrp.groups, [2]int{version, int(vrid)}, func(order int) *vrrpGroupState {
		return &vrrpGroupState{g: VRRPGroup{VRID: vrid, Version: version}, order: order, advs: map[string]*vrrpAdvState{}}
	})
}

// VRRP summarises every virtual router.
func (a *Analyzer) VRRP() []VRRPGroup {
	gs := inOrder(a.vrrp.groups, func(g *vrrpGroupState) int { return g.order })
	out := make([]VRRPGroup, 0, len(gs))
	for _, g := range gs {
		v := g.g
		v.Master = g.last
		for _, ad := range inOrder(g.advs, func(ad *vrrpAdvState) int { return ad.order }) {
			x := ad.adv
			x.FirstSeconds, x.LastSeconds = ad.first.Sub(a.first).Seconds(), ad.last.Sub(a.first).Seconds()
			v.Advertisers = append(v.Advertisers, x)
		}
		out = append(out, v)
	}
	return out
}

// vrrpFindings names each virtual router's master, and two routers that both act as master.
func (a *Analyzer) vrrpFindings() []Finding {
	var out []Finding
	for _, g := range a.VRRP() {
		var who []string
		for _, ad := range g.Advertisers {
			who = append(who, fmt.Sprintf("%s (priority %d, ×%d)", ad.Address, ad.Priority, ad.Advertisements))
		}
		if len(g.Advertisers) == 1 {
			out = append(out, Finding{Severity: SeverityInfo, Protocol: "VRRP", Check: "vrrp_master",
				Text: fmt.Sprintf("VRID %d (VRRPv%d): master %s", g.VRID, g.Version, who[0])})
			continue
		}
		if vrrpOverlap(g.Advertisers) {
			out = append(out, Finding{Severity: SeverityCritical, Protocol: "VRRP", Check: "vrrp_duplicate_master",
				Text: fmt.Sprintf("VRID %d (VRRPv%d): %s all advertise as master at the same time: they do not hear each other (a link or VLAN between them, a filter, or a VRID, version or authentication mismatch)", g.VRID, g.Version, listOf(who))})
			continue
		}
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "VRRP", Check: "vrrp_master_transition",
			Text: fmt.Sprintf("VRID %d (VRRPv%d): the master changed during the capture: %s; master now %s", g.VRID, g.Version, listOf(who), g.Master)})
	}
	return out
}

// vrrpOverlap tells two advertisers that each kept advertising while the other did: a
// takeover has one stop soon after the other starts.
func vrrpOverlap(advs []VRRPAdvertiser) bool {
	for i, x := range advs {
		for _, y := range advs[i+1:] {
			if x.Advertisements < 2 || y.Advertisements < 2 {
				continue
			}
			grace := 3 * max(x.Interval, y.Interval, 1)
			start, end := max(x.FirstSeconds, y.FirstSeconds), min(x.LastSeconds, y.LastSeconds)
			if end-start > grace {
				return true
			}
		}
	}
	return false
}
