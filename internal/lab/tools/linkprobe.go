package tools

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Whether a link carries traffic at its normal latency is told by traffic only: on GNS3 3.0.x a
// link reads no filters while uBridge still delays, and a link whose uBridge bridge died reads
// normal while nothing crosses it. The check pings across the link from a device at one of its
// ends, through that device's console:
//
//   - two ends with addresses in one subnet (VPCS, routers, hosts): one pings the other; where
//     the two share several subnets (parallel links), the addresses on the interfaces the link's
//     ports name decide;
//   - a VPCS whose other end is a switch or hub: a VPCS has one port, so whatever it pings
//     crosses this link: it pings a device linked to that switch in its subnet, else its gateway.
//
// Otherwise (no end that can ping, no addresses, stopped nodes, no console here) nothing is
// measured, and the result says why.

// Console runs read-only commands on a started node's console for a lab tool, under the
// device's lock and recorded like the device tools' commands. commands chooses them once the
// console has told which platform it is; the profile that answered is returned with the results.
type Console func(ctx context.Context, job DeviceJob, commands func(*devices.Profile) []string) (*devices.Profile, []devices.CommandResult, error)

const (
	// probePings is how many echo requests a check sends; the first may go unanswered while ARP
	// resolves.
	probePings = 5
	// normalRTT bounds the median round trip of a link without conditions. Two VPCS on the real
	// GNS3 answer in 0.1–0.2 ms on an idle machine, but in medians of 10–40 ms (single replies
	// up to 80 ms) on a shared 2-core machine under load; a delay left behind adds twice
	// itself. A removed delay longer than this bound is the bound.
	normalRTT = 50 * time.Millisecond
	// maxNeighbours bounds the devices read behind a switch.
	maxNeighbours = 6
)

// trafficCheck is what pinging across a link showed.
type trafficCheck struct {
	// measured: pings were sent and their output read.
	measured bool
	// ok: replies came back at a normal round trip, without loss beyond the first request.
	ok bool
	// noReply: nothing came back.
	noReply bool
	// text says what was pinged and what came back, or why nothing was measured.
	text string
}

// probeEnd is a device at an end of the link, or behind a switch at one end, as the check reads it.
type probeEnd struct {
	node    *gns3.Node
	port    string // the port's name on the link's side
	reason  string // why it cannot take part; "" when it was read
	job     DeviceJob
	profile *devices.Profile
	addr    devices.Addressing
	// via is the link from the switch to this device when it sits behind one.
	via *gns3.Link
}

func (e *probeEnd) vpcs() bool { return e.node.NodeType == "vpcs" }

// linkProbe checks one link of a topology.
type linkProbe struct {
	env  Env
	t    *topology
	link *gns3.Link
	// removed is the delay the link had before (GNS3's record): a round trip that still shows
	// it is a delay left behind.
	removed time.Duration
}

// check pings across the link and judges what came back.
func (p *linkProbe) check(ctx context.Context) trafficCheck {
	if p.env.Console == nil {
		return trafficCheck{text: "consoles cannot be reached from here"}
	}
	if len(p.link.Nodes) != 2 {
		return trafficCheck{text: "the link does not join two nodes"}
	}
	ends := [2]*probeEnd{p.end(p.link.Nodes[0]), p.end(p.link.Nodes[1])}
	for _, e := range ends {
		if e.reason == "" {
			p.read(ctx, e)
		}
	}
	if src, dst, addr, ok := p.pair(ends); ok {
		return p.ping(ctx, src, dst, addr, nil)
	}
	for i, e := range ends {
		if e.reason != "" || !e.vpcs() || len(e.addr.Addresses) == 0 {
			continue
		}
		if other := ends[1-i]; builtinNodeType(other.node.NodeType) {
			if dst, addr, ok := p.behind(ctx, e, other.node); ok {
				return p.ping(ctx, e, dst, addr, dst.via)
			}
		}
		if gw := e.addr.Gateway; gw.IsValid() && e.addr.Addresses[0].Prefix.Contains(gw) {
			return p.ping(ctx, e, &probeEnd{node: &gns3.Node{Name: "its gateway"}}, gw, nil)
		}
	}
	return trafficCheck{text: p.unmeasurable(ends)}
}

// end describes one end of the link and whether it can take part.
func (p *linkProbe) end(le gns3.LinkEnd) *probeEnd {
	n := p.t.byID[le.NodeID]
	if n == nil {
		return &probeEnd{node: &gns3.Node{NodeID: le.NodeID, Name: le.NodeID}, reason: "it is not in the project"}
	}
	e := &probeEnd{node: n, port: portName(n, le.AdapterNumber, le.PortNumber)}
	switch {
	case builtinNodeType(n.NodeType):
		// GNS3's own helper nodes have no console to ping from and no address to ping.
		e.reason = fmt.Sprintf("it is a %s, without a console to ping from or an address", strings.ReplaceAll(n.NodeType, "_", " "))
	case n.Status != gns3.NodeStarted:
		e.reason = "it is " + n.Status
	default:
		e.job, e.reason = deviceJob(n, "", p.env.gns3Host(), ShowCommandsTool)
	}
	return e
}

// read reads a device's addresses with its platform's configuration read.
func (p *linkProbe) read(ctx context.Context, e *probeEnd) {
	profile, res, err := p.env.Console(ctx, e.job, func(pr *devices.Profile) []string {
		if c := pr.ConfigCommand(); c != "" {
			return []string{c}
		}
		return nil
	})
	switch {
	case err != nil:
		e.reason = "its console could not be read: " + err.Error()
	case profile == nil || len(res) == 0:
		e.reason = "its platform has no configuration to read addresses from"
	case res[0].Failed:
		e.reason = fmt.Sprintf("%q failed on it: %s", res[0].Command, res[0].Error)
	default:
		e.profile, e.addr = profile, profile.Addressing(res[0].Output)
		if len(e.addr.Addresses) == 0 {
			e.reason = "it has no IPv4 address"
		}
	}
}

// pair finds the two ends' addresses in one subnet, and which end pings the other: a VPCS, or
// the end whose platform the copilot knows how to ping from.
func (p *linkProbe) pair(ends [2]*probeEnd) (src, dst *probeEnd, addr netip.Addr, ok bool) {
	a, b := ends[0], ends[1]
	if a.reason != "" || b.reason != "" {
		return nil, nil, netip.Addr{}, false
	}
	type match struct{ x, y devices.Address }
	var all, named []match
	for _, x := range a.addr.Addresses {
		for _, y := range b.addr.Addresses {
			if x.Prefix.Addr() != y.Prefix.Addr() && x.Prefix.Contains(y.Prefix.Addr()) && y.Prefix.Contains(x.Prefix.Addr()) {
				m := match{x, y}
				all = append(all, m)
				if (a.vpcs() || x.NamesInterface(a.port)) && (b.vpcs() || y.NamesInterface(b.port)) {
					named = append(named, m)
				}
			}
		}
	}
	chosen := all
	if len(all) > 1 {
		chosen = named
	}
	if len(chosen) != 1 {
		return nil, nil, netip.Addr{}, false
	}
	m := chosen[0]
	switch {
	case b.vpcs() && !a.vpcs(), !a.profile.CanPing() && b.profile.CanPing():
		return b, a, m.x.Prefix.Addr(), true
	}
	return a, b, m.y.Prefix.Addr(), true
}

// behind finds a device linked to a switch at the other end of a VPCS's link with an address in
// the VPCS's subnet: the VPCS's gateway when one holds it, else the first.
func (p *linkProbe) behind(ctx context.Context, from *probeEnd, sw *gns3.Node) (*probeEnd, netip.Addr, bool) {
	subnet := from.addr.Addresses[0].Prefix
	var first *probeEnd
	var firstAddr netip.Addr
	read := 0
	for i := range p.t.links {
		l := &p.t.links[i]
		if l.LinkID == p.link.LinkID || len(l.Nodes) != 2 || (l.Nodes[0].NodeID != sw.NodeID && l.Nodes[1].NodeID != sw.NodeID) {
			continue
		}
		far := l.Nodes[0]
		if far.NodeID == sw.NodeID {
			far = l.Nodes[1]
		}
		e := p.end(far)
		if e.reason != "" || e.node.NodeID == from.node.NodeID || read == maxNeighbours {
			continue
		}
		read++
		p.read(ctx, e)
		if e.reason != "" {
			continue
		}
		for _, a := range e.addr.Addresses {
			if subnet.Contains(a.Prefix.Addr()) && a.Prefix.Addr() != subnet.Addr() {
				e.via = l
				if a.Prefix.Addr() == from.addr.Gateway {
					return e, a.Prefix.Addr(), true
				}
				if first == nil {
					first, firstAddr = e, a.Prefix.Addr()
				}
				break
			}
		}
	}
	return first, firstAddr, first != nil
}

// ping sends the pings from src to addr (dst's) and judges the answer. via is a second link
// the pings cross (behind a switch), whose own delay is allowed for.
func (p *linkProbe) ping(ctx context.Context, src, dst *probeEnd, addr netip.Addr, via *gns3.Link) trafficCheck {
	var cmd string
	profile, res, err := p.env.Console(ctx, src.job, func(pr *devices.Profile) []string {
		if c, ok := pr.PingCommand(addr, probePings); ok {
			cmd = c
			return []string{c}
		}
		return nil
	})
	what := fmt.Sprintf("%s pinged %s (%s)", src.node.Name, addr, dst.node.Name)
	if via != nil {
		what += fmt.Sprintf(" through %s", p.t.linkLine(via))
	}
	switch {
	case err != nil:
		return trafficCheck{text: fmt.Sprintf("%s could not ping: %v", src.node.Name, err)}
	case cmd == "" || len(res) == 0:
		name := "its platform"
		if profile != nil {
			name = profile.Name
		}
		return trafficCheck{text: fmt.Sprintf("the copilot does not know how %s (%s) pings", src.node.Name, name)}
	case res[0].Failed && res[0].Output == "":
		return trafficCheck{text: fmt.Sprintf("%s: %q failed: %s", what, cmd, res[0].Error)}
	}
	got := devices.ParsePing(res[0].Output)
	if !got.Read {
		return trafficCheck{text: fmt.Sprintf("%s, and its output could not be read: %q", what, clip(res[0].Output, 200))}
	}
	threshold := max(p.removed, normalRTT)
	if via != nil {
		threshold += 2 * delayOf(via)
	}
	return judgePing(what, got, threshold, p.removed)
}

// judgePing says whether a ping's replies show a link at its normal latency.
func judgePing(what string, got devices.PingResult, threshold, removed time.Duration) trafficCheck {
	c := trafficCheck{measured: true}
	sent := got.Sent
	if sent == 0 {
		sent = got.Replies
	}
	if got.Replies == 0 {
		c.noReply = true
		c.text = fmt.Sprintf("%s: no reply to %d echo requests", what, max(sent, 1))
		return c
	}
	rtts := got.RTTs
	if len(rtts) >= 3 {
		rtts = rtts[1:] // the first may have waited for ARP
	}
	med := median(rtts)
	c.text = fmt.Sprintf("%s: %d of %d replies", what, got.Replies, sent)
	if len(rtts) > 0 {
		c.text += ", round trip " + roundTrip(med) + " (median)"
	}
	lost := sent - got.Replies
	switch {
	case len(rtts) > 0 && med >= threshold && removed > 0:
		c.text += fmt.Sprintf(": the link still delays packets (its %s delay acted in both directions, adding about %s to a round trip)",
			durationText(removed), durationText(2*removed))
	case len(rtts) > 0 && med >= threshold:
		c.text += fmt.Sprintf(": slower than a link without conditions (%s or more): a delay may still be applied", durationText(threshold))
	case lost > 1:
		c.text += ": the link still loses packets"
	default:
		c.ok = true
	}
	return c
}

// unmeasurable says why no end could ping across the link.
func (p *linkProbe) unmeasurable(ends [2]*probeEnd) string {
	var why []string
	for _, e := range ends {
		if e.reason != "" {
			why = append(why, e.node.Name+": "+e.reason)
		}
	}
	if len(why) == 0 {
		return fmt.Sprintf("%s and %s have no addresses in one subnet to ping across it", ends[0].node.Name, ends[1].node.Name)
	}
	return strings.Join(why, "; ")
}

// delayOf is a link's recorded delay (jitter aside); 0 when it has none or passes nothing.
func delayOf(l *gns3.Link) time.Duration {
	if l.Suspend {
		return 0
	}
	if vals := l.Filters[gns3.FilterDelay]; len(vals) > 0 && numberOf(vals[0]) > 0 {
		return time.Duration(numberOf(vals[0])) * time.Millisecond
	}
	return 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// roundTrip prints a round trip to a tenth of a millisecond.
func roundTrip(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func durationText(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// clip keeps at most n bytes of s, trimmed, never cutting a character in two: the text goes
// into a tool result, which must stay valid UTF-8.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
