// Package capture turns a pcap byte stream (a GNS3 link capture) into a summary a model can
// reason about: protocol counts, conversations, ARP questions nobody answered, ICMP
// unreachables and echoes without reply, TCP resets, retransmissions and handshakes that never
// completed, and the first and last packets as one-line decodes. It is pure Go (gopacket's
// layers and pcapgo, never libpcap or tshark), so it runs wherever the copilot runs.
package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// Limits that keep a summary small enough for a model's context however busy the link was.
const (
	DefaultEdge       = 5  // packets shown at each end of the capture
	MaxEdge           = 50 // most packets a caller may ask for at each end
	maxListed         = 20 // entries in each list of findings
	maxConversations  = 20
	maxEchoKeys       = 1 << 16 // outstanding echo requests tracked
	maxTrackedTCPKeys = 1 << 16
)

// ProtocolCount is how many packets of one protocol were seen.
type ProtocolCount struct {
	Protocol string `json:"protocol"`
	Packets  int    `json:"packets"`
	Bytes    int64  `json:"bytes"`
}

// Conversation is the traffic between two endpoints (IP addresses, or MAC addresses for
// frames without IP), both directions together. A is the endpoint that spoke first.
type Conversation struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	Packets   int      `json:"packets"`
	Bytes     int64    `json:"bytes"`
	Protocols []string `json:"protocols"`
}

// ARPQuestion is an address someone asked for and nobody answered.
type ARPQuestion struct {
	Target   string `json:"target"`
	AskedBy  string `json:"asked_by"`
	Requests int    `json:"requests"`
}

// Unreachable is an ICMP or ICMPv6 destination-unreachable message.
type Unreachable struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Reason   string `json:"reason"`
	Original string `json:"original,omitempty"` // the packet it is about, when it could be read
	Count    int    `json:"count"`
}

// EchoGap counts echo requests from one host to another that got no reply.
type EchoGap struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Requests   int    `json:"requests"`
	Unanswered int    `json:"unanswered"`
}

// TCPEvent is one notable TCP segment: a reset or a retransmission.
type TCPEvent struct {
	Packet int    `json:"packet"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// Handshake is a TCP connection attempt that never completed.
type Handshake struct {
	Client string `json:"client"`
	Server string `json:"server"`
	State  string `json:"state"`
}

// Summary is what a capture showed.
type Summary struct {
	LinkType        string          `json:"link_type"`
	Packets         int             `json:"packets"`
	Bytes           int64           `json:"bytes"`
	DurationSeconds float64         `json:"duration_seconds"`
	Undecoded       int             `json:"undecoded,omitempty"`
	Protocols       []ProtocolCount `json:"protocols"`
	Conversations   []Conversation  `json:"conversations"`
	// MoreConversations counts the conversations left out of Conversations.
	MoreConversations    int           `json:"more_conversations,omitempty"`
	UnansweredARP        []ARPQuestion `json:"unanswered_arp"`
	Unreachables         []Unreachable `json:"icmp_unreachable"`
	EchoWithoutReply     []EchoGap     `json:"echo_without_reply"`
	TCPResets            int           `json:"tcp_resets"`
	TCPResetList         []TCPEvent    `json:"tcp_reset_list,omitempty"`
	TCPRetransmissions   int           `json:"tcp_retransmissions"`
	TCPRetransmitList    []TCPEvent    `json:"tcp_retransmission_list,omitempty"`
	IncompleteHandshakes []Handshake   `json:"incomplete_handshakes"`
	First                []string      `json:"first_packets"`
	Last                 []string      `json:"last_packets"`
}

// Analyzer accumulates packets one at a time; Summary may be called at any point.
type Analyzer struct {
	edge     int
	linkType layers.LinkType

	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	arp     layers.ARP
	ip4     layers.IPv4
	ip6     layers.IPv6
	icmp4   layers.ICMPv4
	icmp6   layers.ICMPv6
	echo6   layers.ICMPv6Echo
	tcp     layers.TCP
	udp     layers.UDP

	packets   int
	bytes     int64
	undecoded int
	first     time.Time
	last      time.Time
	protos    map[string]*ProtocolCount
	convs     map[[2]string]*convState
	convOrder int
	arpAsked  map[string]*arpState // by target IP
	unreach   map[string]*Unreachable
	unOrder   []string
	echoes    map[echoKey]bool // request seen; true once answered
	echoPairs map[[2]string]*EchoGap
	echoOrder [][2]string
	resets    tcpTally
	retrans   tcpTally
	flows     map[flowKey]*flowState
	conns     map[flowKey]*connState // keyed by the client's direction
	connOrder []flowKey
	head      []string
	tail      []rawFrame // ring of the last edge frames, described only when summarised
	tailAt    int
	// describe is set when the packet being classified needs its one-liner.
	describe bool
}

// rawFrame is a copy of a frame kept for the last-packets list: describing every packet as
// it passes would cost more than decoding it.
type rawFrame struct {
	n    int
	at   time.Time
	data []byte
}

type convState struct {
	c      Conversation
	order  int
	protos map[string]bool
}

type arpState struct {
	askedBy  string
	requests int
	order    int
}

// tcpTally counts TCP events of one kind and keeps the first maxListed of them.
type tcpTally struct {
	n      int
	listed []TCPEvent
}

func (t *tcpTally) add(ev TCPEvent) {
	t.n++
	if len(t.listed) < maxListed {
		t.listed = append(t.listed, ev)
	}
}

type echoKey struct {
	src, dst string
	id, seq  uint16
}

type flowKey struct {
	src, dst string // ip:port
}

type flowState struct {
	next    uint32 // next sequence number expected from this side
	started bool
}

type connState struct {
	clientISN, serverISN uint32
	synAck, established  bool
	refused              bool
}

// NewAnalyzer returns an analyzer for packets of the given link type that keeps edge packets
// at each end as one-liners (0 means DefaultEdge).
func NewAnalyzer(linkType layers.LinkType, edge int) *Analyzer {
	if edge <= 0 {
		edge = DefaultEdge
	}
	if edge > MaxEdge {
		edge = MaxEdge
	}
	a := &Analyzer{
		edge: edge, linkType: linkType,
		protos: map[string]*ProtocolCount{}, convs: map[[2]string]*convState{},
		arpAsked: map[string]*arpState{}, unreach: map[string]*Unreachable{},
		echoes: map[echoKey]bool{}, echoPairs: map[[2]string]*EchoGap{},
		flows: map[flowKey]*flowState{}, conns: map[flowKey]*connState{},
	}
	first := layers.LayerTypeEthernet
	switch linkType {
	case layers.LinkTypeEthernet:
	case layers.LinkTypeRaw, layers.LinkTypeIPv4:
		first = layers.LayerTypeIPv4
	case layers.LinkTypeIPv6:
		first = layers.LayerTypeIPv6
	default:
		first = gopacket.LayerTypeZero
	}
	if first != gopacket.LayerTypeZero {
		a.parser = gopacket.NewDecodingLayerParser(first, &a.eth, &a.dot1q, &a.arp, &a.ip4, &a.ip6,
			&a.icmp4, &a.icmp6, &a.echo6, &a.tcp, &a.udp)
		// Application payloads (DNS on port 53, …) are not needed for the summary.
		a.parser.IgnoreUnsupported = true
	}
	return a
}

// Packets is how many packets were added so far.
func (a *Analyzer) Packets() int { return a.packets }

// packet is what one frame decoded to, for the one-liner and the findings.
type packet struct {
	n        int
	proto    string
	src, dst string // endpoints of the conversation
	info     string
}

// Add decodes one captured frame. data is not kept.
func (a *Analyzer) Add(data []byte, ci gopacket.CaptureInfo) {
	a.packets++
	size := int64(ci.Length)
	if size == 0 {
		size = int64(len(data))
	}
	a.bytes += size
	if a.packets == 1 {
		a.first = ci.Timestamp
	}
	a.last = ci.Timestamp

	p := packet{n: a.packets}
	a.describe = len(a.head) < a.edge
	a.decode(&p, data)
	if p.proto == "" {
		a.undecoded++
		p.proto = "undecoded"
		if a.describe {
			p.info = fmt.Sprintf("%d bytes", len(data))
		}
	}

	pc := a.protos[p.proto]
	if pc == nil {
		pc = &ProtocolCount{Protocol: p.proto}
		a.protos[p.proto] = pc
	}
	pc.Packets++
	pc.Bytes += size

	if p.src != "" && p.dst != "" {
		key := [2]string{p.src, p.dst}
		if key[1] < key[0] {
			key[0], key[1] = key[1], key[0]
		}
		cs := a.convs[key]
		if cs == nil {
			a.convOrder++
			cs = &convState{c: Conversation{A: p.src, B: p.dst}, order: a.convOrder, protos: map[string]bool{}}
			a.convs[key] = cs
		}
		cs.c.Packets++
		cs.c.Bytes += size
		cs.protos[p.proto] = true
	}

	if a.describe {
		a.head = append(a.head, a.line(p, ci.Timestamp))
	}
	if len(a.tail) < a.edge {
		a.tail = append(a.tail, rawFrame{n: p.n, at: ci.Timestamp, data: append([]byte(nil), data...)})
	} else {
		f := &a.tail[a.tailAt]
		f.n, f.at, f.data = p.n, ci.Timestamp, append(f.data[:0], data...)
		a.tailAt = (a.tailAt + 1) % a.edge
	}
}

// decode decodes one frame's layers and classifies p from them.
func (a *Analyzer) decode(p *packet, data []byte) {
	a.decoded = a.decoded[:0]
	if a.parser != nil {
		// Errors leave the layers decoded before the failure, which is what is reported.
		_ = a.parser.DecodeLayers(data, &a.decoded)
	}
	a.classify(p)
}

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

func (a *Analyzer) onARP(p *packet) {
	p.proto = "ARP"
	sender, target := net.IP(a.arp.SourceProtAddress).String(), net.IP(a.arp.DstProtAddress).String()
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

func (a *Analyzer) onTCP(p *packet, src, dst string) {
	p.proto = "TCP"
	t := &a.tcp
	from, to := hostPort(src, uint16(t.SrcPort)), hostPort(dst, uint16(t.DstPort))
	payload := uint32(len(t.Payload))
	if a.describe {
		p.info = fmt.Sprintf("%s → %s TCP [%s] seq=%d ack=%d win=%d len=%d", from, to, tcpFlags(t), t.Seq, t.Ack, t.Window, payload)
	}

	fwd, rev := flowKey{from, to}, flowKey{to, from}
	ev := TCPEvent{Packet: p.n, From: from, To: to}
	if t.RST {
		a.resets.add(ev)
		// A reset answering a SYN refuses the connection.
		if c := a.conns[rev]; c != nil && !c.synAck && !c.established {
			c.refused = true
		}
	}

	switch {
	case t.SYN && !t.ACK:
		c := a.conns[fwd]
		if c != nil && !c.established && !c.refused && c.clientISN == t.Seq {
			a.retrans.add(ev)
			return
		}
		if len(a.conns) < maxTrackedTCPKeys || c != nil {
			if c == nil {
				a.connOrder = append(a.connOrder, fwd)
			}
			a.conns[fwd] = &connState{clientISN: t.Seq}
		}
		a.flows[fwd] = &flowState{next: t.Seq + 1, started: true}
		return
	case t.SYN && t.ACK:
		if c := a.conns[rev]; c != nil && t.Ack == c.clientISN+1 {
			if c.synAck && c.serverISN == t.Seq {
				a.retrans.add(ev)
				return
			}
			c.synAck, c.serverISN = true, t.Seq
		}
		a.flows[fwd] = &flowState{next: t.Seq + 1, started: true}
		return
	}
	if c := a.conns[fwd]; c != nil && c.synAck && !c.established && t.ACK && t.Ack == c.serverISN+1 {
		c.established = true
	}

	span := payload
	if t.FIN {
		span++
	}
	if span == 0 || t.RST {
		return
	}
	end := t.Seq + span
	f := a.flows[fwd]
	if f == nil {
		if len(a.flows) >= maxTrackedTCPKeys {
			return
		}
		a.flows[fwd] = &flowState{next: end, started: true}
		return
	}
	// Sequence numbers wrap: compare by signed difference.
	if int32(end-f.next) <= 0 {
		a.retrans.add(ev)
		return
	}
	f.next = end
}

func tcpFlags(t *layers.TCP) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{t.SYN, "SYN"}, {t.FIN, "FIN"}, {t.RST, "RST"}, {t.PSH, "PSH"}, {t.ACK, "ACK"}, {t.URG, "URG"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		return "none"
	}
	return strings.Join(f, ",")
}

// Summary reports what the packets added so far show.
func (a *Analyzer) Summary() Summary {
	s := Summary{
		LinkType: a.linkType.String(), Packets: a.packets, Bytes: a.bytes, Undecoded: a.undecoded,
		Protocols: []ProtocolCount{}, Conversations: []Conversation{}, UnansweredARP: []ARPQuestion{},
		Unreachables: []Unreachable{}, EchoWithoutReply: []EchoGap{}, IncompleteHandshakes: []Handshake{},
		TCPResets: a.resets.n, TCPResetList: a.resets.listed, TCPRetransmissions: a.retrans.n, TCPRetransmitList: a.retrans.listed,
		First: append([]string{}, a.head...), Last: a.lastLines(),
	}
	if a.packets > 1 {
		s.DurationSeconds = float64(a.last.Sub(a.first).Microseconds()) / 1e6
	}
	for _, pc := range a.protos {
		s.Protocols = append(s.Protocols, *pc)
	}
	sort.Slice(s.Protocols, func(i, j int) bool {
		if s.Protocols[i].Packets != s.Protocols[j].Packets {
			return s.Protocols[i].Packets > s.Protocols[j].Packets
		}
		return s.Protocols[i].Protocol < s.Protocols[j].Protocol
	})

	convs := make([]*convState, 0, len(a.convs))
	for _, c := range a.convs {
		convs = append(convs, c)
	}
	sort.Slice(convs, func(i, j int) bool {
		if convs[i].c.Packets != convs[j].c.Packets {
			return convs[i].c.Packets > convs[j].c.Packets
		}
		return convs[i].order < convs[j].order
	})
	for i, c := range convs {
		if i == maxConversations {
			s.MoreConversations = len(convs) - i
			break
		}
		conv := c.c
		for p := range c.protos {
			conv.Protocols = append(conv.Protocols, p)
		}
		sort.Strings(conv.Protocols)
		s.Conversations = append(s.Conversations, conv)
	}

	asked := make([]*arpState, 0, len(a.arpAsked))
	targets := map[*arpState]string{}
	for t, st := range a.arpAsked {
		asked = append(asked, st)
		targets[st] = t
	}
	sort.Slice(asked, func(i, j int) bool { return asked[i].order < asked[j].order })
	for i, st := range asked {
		if i == maxListed {
			break
		}
		s.UnansweredARP = append(s.UnansweredARP, ARPQuestion{Target: targets[st], AskedBy: st.askedBy, Requests: st.requests})
	}

	for i, k := range a.unOrder {
		if i == maxListed {
			break
		}
		s.Unreachables = append(s.Unreachables, *a.unreach[k])
	}

	unanswered := map[[2]string]int{}
	for k, answered := range a.echoes {
		if !answered {
			unanswered[[2]string{k.src, k.dst}]++
		}
	}
	for _, pair := range a.echoOrder {
		if n := unanswered[pair]; n > 0 && len(s.EchoWithoutReply) < maxListed {
			g := *a.echoPairs[pair]
			g.Unanswered = n
			s.EchoWithoutReply = append(s.EchoWithoutReply, g)
		}
	}

	for _, k := range a.connOrder {
		c := a.conns[k]
		if c == nil || c.established || len(s.IncompleteHandshakes) >= maxListed {
			continue
		}
		state := "no SYN-ACK from the server"
		switch {
		case c.refused:
			state = "refused: the server answered the SYN with a reset"
		case c.synAck:
			state = "the client never acknowledged the SYN-ACK"
		}
		s.IncompleteHandshakes = append(s.IncompleteHandshakes, Handshake{Client: k.src, Server: k.dst, State: state})
	}
	return s
}

// lastLines describes the kept last frames with a scratch analyzer, whose findings are
// thrown away: only the one-liners are wanted.
func (a *Analyzer) lastLines() []string {
	frames := a.tail
	if len(frames) == a.edge {
		frames = append(append([]rawFrame(nil), a.tail[a.tailAt:]...), a.tail[:a.tailAt]...)
	}
	scratch := NewAnalyzer(a.linkType, a.edge)
	scratch.first = a.first
	out := make([]string, 0, len(frames))
	for _, f := range frames {
		p := packet{n: f.n}
		scratch.describe = true
		scratch.decode(&p, f.data)
		if p.proto == "" {
			p.info = fmt.Sprintf("%d bytes", len(f.data))
		}
		out = append(out, scratch.line(p, f.at))
	}
	return out
}

// Errors of Read: it stopped at the packet limit, or the stream did not start with a pcap header.
var (
	ErrLimit   = errors.New("packet limit reached")
	ErrNotPcap = errors.New("not a pcap stream")
)

// Read decodes a pcap stream until it ends, fails, or limit packets were read (limit <= 0:
// no limit). onPacket, if set, is called after every packet with the count so far. A stream
// cut in the middle of a record still yields the packets before it: the error says why it
// stopped and is io.EOF for a stream that simply ended.
func Read(r io.Reader, edge, limit int, onPacket func(n int)) (Summary, error) {
	pr, err := pcapgo.NewReader(r)
	if err != nil {
		return Empty(), fmt.Errorf("%w: %v", ErrNotPcap, err)
	}
	a := NewAnalyzer(pr.LinkType(), edge)
	for limit <= 0 || a.packets < limit {
		data, ci, err := pr.ZeroCopyReadPacketData()
		if err != nil {
			return a.Summary(), err
		}
		a.Add(data, ci)
		if onPacket != nil {
			onPacket(a.packets)
		}
	}
	return a.Summary(), ErrLimit
}

// Empty is the summary of a capture in which nothing was seen.
func Empty() Summary {
	s := NewAnalyzer(layers.LinkTypeEthernet, DefaultEdge).Summary()
	s.LinkType = ""
	return s
}

// Text renders the summary compactly for a model: one line per finding, then the packets.
func (s Summary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d packets, %d bytes over %.1f s", s.Packets, s.Bytes, s.DurationSeconds)
	if s.Undecoded > 0 {
		fmt.Fprintf(&b, " (%d not decoded)", s.Undecoded)
	}
	b.WriteString("\nProtocols:")
	if len(s.Protocols) == 0 {
		b.WriteString(" none")
	}
	for i, p := range s.Protocols {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %d", p.Protocol, p.Packets)
	}
	b.WriteString("\nConversations (packets/bytes):")
	if len(s.Conversations) == 0 {
		b.WriteString(" none")
	}
	for _, c := range s.Conversations {
		fmt.Fprintf(&b, "\n  %s <-> %s %d/%d [%s]", c.A, c.B, c.Packets, c.Bytes, strings.Join(c.Protocols, " "))
	}
	if s.MoreConversations > 0 {
		fmt.Fprintf(&b, "\n  … and %d more", s.MoreConversations)
	}
	b.WriteString("\nUnanswered ARP:")
	if len(s.UnansweredARP) == 0 {
		b.WriteString(" none")
	}
	for _, q := range s.UnansweredARP {
		fmt.Fprintf(&b, "\n  who-has %s (asked by %s, %d time(s))", q.Target, q.AskedBy, q.Requests)
	}
	b.WriteString("\nICMP unreachable:")
	if len(s.Unreachables) == 0 {
		b.WriteString(" none")
	}
	for _, u := range s.Unreachables {
		fmt.Fprintf(&b, "\n  %s → %s: %s", u.From, u.To, u.Reason)
		if u.Original != "" {
			fmt.Fprintf(&b, " for %s", u.Original)
		}
		if u.Count > 1 {
			fmt.Fprintf(&b, " (×%d)", u.Count)
		}
	}
	b.WriteString("\nEcho requests without reply:")
	if len(s.EchoWithoutReply) == 0 {
		b.WriteString(" none")
	}
	for _, g := range s.EchoWithoutReply {
		fmt.Fprintf(&b, "\n  %s → %s: %d of %d unanswered", g.From, g.To, g.Unanswered, g.Requests)
	}
	fmt.Fprintf(&b, "\nTCP: %d reset(s), %d retransmission(s), %d incomplete handshake(s)", s.TCPResets, s.TCPRetransmissions, len(s.IncompleteHandshakes))
	for _, e := range s.TCPResetList {
		fmt.Fprintf(&b, "\n  reset #%d %s → %s", e.Packet, e.From, e.To)
	}
	for _, e := range s.TCPRetransmitList {
		fmt.Fprintf(&b, "\n  retransmission #%d %s → %s", e.Packet, e.From, e.To)
	}
	for _, h := range s.IncompleteHandshakes {
		fmt.Fprintf(&b, "\n  %s → %s: %s", h.Client, h.Server, h.State)
	}
	if len(s.First) > 0 {
		fmt.Fprintf(&b, "\nFirst %d packet(s):", len(s.First))
		for _, l := range s.First {
			b.WriteString("\n  " + l)
		}
	}
	// The last packets repeat the first ones when the capture is short.
	if last := s.lastNotShown(); len(last) > 0 {
		fmt.Fprintf(&b, "\nLast %d packet(s):", len(last))
		for _, l := range last {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

func (s Summary) lastNotShown() []string {
	shown := map[string]bool{}
	for _, l := range s.First {
		shown[l] = true
	}
	var out []string
	for _, l := range s.Last {
		if !shown[l] {
			out = append(out, l)
		}
	}
	return out
}
