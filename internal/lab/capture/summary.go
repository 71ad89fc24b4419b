package capture

import (
	"fmt"
	"sort"
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

	// Findings lead: what the protocols on the link disagree about and what went unanswered,
	// the most serious first.
	Findings    []Finding    `json:"findings"`
	OSPFRouters []OSPFRouter `json:"ospf_routers,omitempty"`
	OSPFPairs   []OSPFPair   `json:"ospf_pairs,omitempty"`
	BGP         []BGPSession `json:"bgp_sessions,omitempty"`
	STP         *STPSummary  `json:"stp,omitempty"`
	DHCP        []DHCPClient `json:"dhcp_clients,omitempty"`
	VRRP        []VRRPGroup  `json:"vrrp_groups,omitempty"`
	Neighbors   []Neighbor   `json:"neighbors,omitempty"`
}

// Summary reports what the packets added so far show.
func (a *Analyzer) Summary() Summary {
	s := Summary{
		LinkType: a.linkType.String(), Packets: a.packets, Bytes: a.bytes, Undecoded: a.undecoded,
		Protocols: a.protocols(), UnansweredARP: a.unansweredARP(), Unreachables: a.unreachables(),
		EchoWithoutReply: a.echoesWithoutReply(), IncompleteHandshakes: a.incompleteHandshakes(),
		TCPResets: a.resets.n, TCPResetList: a.resets.listed, TCPRetransmissions: a.retrans.n, TCPRetransmitList: a.retrans.listed,
		First: append([]string{}, a.head...), Last: a.lastLines(),
	}
	s.Conversations, s.MoreConversations = a.conversations()
	s.Findings = a.findings()
	s.OSPFRouters, s.OSPFPairs = a.OSPF()
	s.BGP, s.STP, s.DHCP, s.VRRP, s.Neighbors = a.BGP(), a.STP(), a.DHCP(), a.VRRP(), a.Neighbors()
	if a.packets > 1 {
		s.DurationSeconds = float64(a.last.Sub(a.first).Microseconds()) / 1e6
	}
	return s
}

func (a *Analyzer) countProtocol(proto string, size int64) {
	pc := a.protos[proto]
	if pc == nil {
		pc = &ProtocolCount{Protocol: proto}
		a.protos[proto] = pc
	}
	pc.Packets++
	pc.Bytes += size
}

// protocols lists the protocols seen, the busiest first.
func (a *Analyzer) protocols() []ProtocolCount {
	out := []ProtocolCount{}
	for _, pc := range a.protos {
		out = append(out, *pc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Packets != out[j].Packets {
			return out[i].Packets > out[j].Packets
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
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
