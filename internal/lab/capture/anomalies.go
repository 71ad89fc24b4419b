package capture

import (
	"fmt"
	"net"
	"sort"
	"strconv"

	"github.com/google/gopacket/layers"
)

// arpState is an address asked for and not answered yet; a reply forgets it.
type arpState struct {
	askedBy  string
	requests int
	order    int
}

type echoKey struct {
	src, dst string
	id, seq  uint16
}

func (a *Analyzer) onARP(p *packet) {
	p.proto = "ARP"
	sender, target := net.IP(a.arp.SourceProtAddress).String(), net.IP(a.arp.DstProtAddress).String()
	a.set("arp.opcode", strconv.Itoa(int(a.arp.Operation)))
	a.set("arp.src.proto_ipv4", sender)
	a.set("arp.dst.proto_ipv4", target)
	a.set("arp.src.hw_mac", net.HardwareAddr(a.arp.SourceHwAddress).String())
	a.set("arp.dst.hw_mac", net.HardwareAddr(a.arp.DstHwAddress).String())
	switch a.arp.Operation {
	case layers.ARPRequest:
		if sender == target {
			if a.describe {
				p.info = fmt.Sprintf("ARP announcement %s is at %s", sender, net.HardwareAddr(a.arp.SourceHwAddress))
			}
			return
		}
		if a.describe {
			p.info = fmt.Sprintf("ARP who-has %s tell %s", target, sender)
		}
		st := a.arpAsked[target]
		if st == nil {
			st = &arpState{askedBy: sender, order: a.packets}
			a.arpAsked[target] = st
		}
		st.requests++
	case layers.ARPReply:
		if a.describe {
			p.info = fmt.Sprintf("ARP %s is at %s", sender, net.HardwareAddr(a.arp.SourceHwAddress))
		}
		delete(a.arpAsked, sender)
	default:
		if a.describe {
			p.info = fmt.Sprintf("ARP operation %d", a.arp.Operation)
		}
	}
}

func (a *Analyzer) onICMPv4(p *packet, src, dst string) {
	p.proto = "ICMP"
	typ, code := a.icmp4.TypeCode.Type(), a.icmp4.TypeCode.Code()
	a.set("icmp.type", strconv.Itoa(int(typ)))
	a.set("icmp.code", strconv.Itoa(int(code)))
	a.set("icmp.seq", strconv.Itoa(int(a.icmp4.Seq)))
	a.set("icmp.ident", strconv.Itoa(int(a.icmp4.Id)))
	switch typ {
	case layers.ICMPv4TypeEchoRequest:
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMP echo request id=%d seq=%d ttl=%d", src, dst, a.icmp4.Id, a.icmp4.Seq, a.ip4.TTL)
		}
		a.echoRequest(src, dst, a.icmp4.Id, a.icmp4.Seq)
	case layers.ICMPv4TypeEchoReply:
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMP echo reply id=%d seq=%d ttl=%d", src, dst, a.icmp4.Id, a.icmp4.Seq, a.ip4.TTL)
		}
		a.echoReply(src, dst, a.icmp4.Id, a.icmp4.Seq)
	case layers.ICMPv4TypeDestinationUnreachable:
		a.unreachable(p, src, dst, "ICMP", unreachableReason(unreachableV4, code), originalIPv4(a.icmp4.Payload))
	default:
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMP %s", src, dst, a.icmp4.TypeCode)
		}
	}
}

func (a *Analyzer) onICMPv6(p *packet, src, dst string) {
	p.proto = "ICMPv6"
	typ, code := a.icmp6.TypeCode.Type(), a.icmp6.TypeCode.Code()
	a.set("icmpv6.type", strconv.Itoa(int(typ)))
	a.set("icmpv6.code", strconv.Itoa(int(code)))
	switch {
	case typ == layers.ICMPv6TypeEchoRequest && a.has(layers.LayerTypeICMPv6Echo):
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMPv6 echo request id=%d seq=%d", src, dst, a.echo6.Identifier, a.echo6.SeqNumber)
		}
		a.echoRequest(src, dst, a.echo6.Identifier, a.echo6.SeqNumber)
	case typ == layers.ICMPv6TypeEchoReply && a.has(layers.LayerTypeICMPv6Echo):
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMPv6 echo reply id=%d seq=%d", src, dst, a.echo6.Identifier, a.echo6.SeqNumber)
		}
		a.echoReply(src, dst, a.echo6.Identifier, a.echo6.SeqNumber)
	case typ == layers.ICMPv6TypeDestinationUnreachable:
		// The ICMPv6 payload starts with 4 unused bytes, then the original packet.
		orig := ""
		if pl := a.icmp6.Payload; len(pl) > 4 {
			orig = originalIPv6(pl[4:])
		}
		a.unreachable(p, src, dst, "ICMPv6", unreachableReason(unreachableV6, code), orig)
	default:
		if a.describe {
			p.info = fmt.Sprintf("%s → %s ICMPv6 %s", src, dst, a.icmp6.TypeCode)
		}
	}
}

var unreachableV4 = map[uint8]string{
	0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable", 3: "port unreachable",
	4: "fragmentation needed", 5: "source route failed", 6: "network unknown", 7: "host unknown",
	9: "network administratively prohibited", 10: "host administratively prohibited",
	13: "communication administratively prohibited",
}

var unreachableV6 = map[uint8]string{
	0: "no route to destination", 1: "administratively prohibited", 2: "beyond scope of source address",
	3: "address unreachable", 4: "port unreachable", 5: "source address failed policy", 6: "reject route",
}

// unreachableReason names a destination unreachable code from names, or gives its number.
func unreachableReason(names map[uint8]string, code uint8) string {
	if reason := names[code]; reason != "" {
		return reason
	}
	return fmt.Sprintf("code %d", code)
}

// originalIPv4 describes the packet an ICMP error quotes (its IP header and 8 bytes).
func originalIPv4(b []byte) string {
	if len(b) < 20 || b[0]>>4 != 4 {
		return ""
	}
	ihl := int(b[0]&0x0f) * 4
	src, dst := net.IP(b[12:16]).String(), net.IP(b[16:20]).String()
	return describeQuoted(src, dst, b[9], b, ihl)
}

// originalIPv6 describes the packet an ICMPv6 error quotes.
func originalIPv6(b []byte) string {
	if len(b) < 40 || b[0]>>4 != 6 {
		return ""
	}
	src, dst := net.IP(b[8:24]).String(), net.IP(b[24:40]).String()
	return describeQuoted(src, dst, b[6], b, 40)
}

func describeQuoted(src, dst string, proto byte, b []byte, l4 int) string {
	name := map[byte]string{1: "ICMP", 6: "TCP", 17: "UDP", 58: "ICMPv6"}[proto]
	if name == "" {
		name = fmt.Sprintf("protocol %d", proto)
	}
	if (proto == 6 || proto == 17) && len(b) >= l4+4 {
		sp, dp := uint16(b[l4])<<8|uint16(b[l4+1]), uint16(b[l4+2])<<8|uint16(b[l4+3])
		return fmt.Sprintf("%s → %s %s", hostPort(src, sp), hostPort(dst, dp), name)
	}
	return fmt.Sprintf("%s → %s %s", src, dst, name)
}

// unreachable describes an ICMP (family "ICMP" or "ICMPv6") destination unreachable from → to
// about the quoted packet orig, and counts it.
func (a *Analyzer) unreachable(p *packet, from, to, family, reason, orig string) {
	if a.describe {
		p.info = fmt.Sprintf("%s → %s %s destination unreachable (%s)", from, to, family, reason)
		if orig != "" {
			p.info += " for " + orig
		}
	}
	key := from + "|" + to + "|" + reason + "|" + orig
	u := a.unreach[key]
	if u == nil {
		if len(a.unreach) >= maxEchoKeys {
			return
		}
		u = &Unreachable{From: from, To: to, Reason: reason, Original: orig}
		a.unreach[key] = u
		a.unOrder = append(a.unOrder, key)
	}
	u.Count++
}

func (a *Analyzer) echoRequest(src, dst string, id, seq uint16) {
	pair := [2]string{src, dst}
	g := a.echoPairs[pair]
	if g == nil {
		g = &EchoGap{From: src, To: dst}
		a.echoPairs[pair] = g
		a.echoOrder = append(a.echoOrder, pair)
	}
	g.Requests++
	k := echoKey{src, dst, id, seq}
	if _, seen := a.echoes[k]; !seen && len(a.echoes) < maxEchoKeys {
		a.echoes[k] = false
	}
}

func (a *Analyzer) echoReply(src, dst string, id, seq uint16) {
	k := echoKey{dst, src, id, seq}
	if _, asked := a.echoes[k]; asked {
		a.echoes[k] = true
	}
}

// unansweredARP lists the addresses asked for and never answered, in the order first asked.
func (a *Analyzer) unansweredARP() []ARPQuestion {
	asked := make([]*arpState, 0, len(a.arpAsked))
	targets := map[*arpState]string{}
	for t, st := range a.arpAsked {
		asked = append(asked, st)
		targets[st] = t
	}
	sort.Slice(asked, func(i, j int) bool { return asked[i].order < asked[j].order })
	out := []ARPQuestion{}
	for i, st := range asked {
		if i == maxListed {
			break
		}
		out = append(out, ARPQuestion{Target: targets[st], AskedBy: st.askedBy, Requests: st.requests})
	}
	return out
}

// unreachables lists the first maxListed distinct destination unreachable messages.
func (a *Analyzer) unreachables() []Unreachable {
	out := []Unreachable{}
	for i, k := range a.unOrder {
		if i == maxListed {
			break
		}
		out = append(out, *a.unreach[k])
	}
	return out
}

// echoesWithoutReply lists, per pair of hosts, the echo requests that got no reply.
func (a *Analyzer) echoesWithoutReply() []EchoGap {
	unanswered := map[[2]string]int{}
	for k, answered := range a.echoes {
		if !answered {
			unanswered[[2]string{k.src, k.dst}]++
		}
	}
	out := []EchoGap{}
	for _, pair := range a.echoOrder {
		if n := unanswered[pair]; n > 0 && len(out) < maxListed {
			g := *a.echoPairs[pair]
			g.Unanswered = n
			out = append(out, g)
		}
	}
	return out
}
