// Package capture turns a pcap byte stream (a GNS3 link capture) into a summary a model can
// reason about. It leads with findings: what the routing, redundancy and discovery protocols on
// the link disagree about (OSPF timers, areas, masks, authentication and MTU between the two
// ends; BGP sessions and the NOTIFICATION that closed them; the spanning tree's root and its
// topology changes; DHCP exchanges that never completed; VRRP masters; LLDP and CDP
// neighbours), ARP questions nobody answered, ICMP unreachables and echoes without reply, TCP
// resets, retransmissions and handshakes that never completed. Then come the counts
// (protocols, conversations) and the first and last packets as one-line decodes. It is pure Go
// (gopacket's layers and pcapgo, and a small BGP decoder of its own; never libpcap or tshark),
// so it runs wherever the copilot runs.
package capture

import (
	"errors"
	"fmt"
	"io"
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
	maxFindings       = 40
	maxProtocolPeers  = 64 // routers, sessions, clients… tracked per protocol
	// maxSnaplen is libpcap's own ceiling on a snap length (MAXIMUM_SNAPLEN), the most any
	// capture tool writes in a header: dumpcap, and so GNS3, write 262144.
	maxSnaplen = 262144
)

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
	// now is when the packet being classified was captured.
	now time.Time

	// What the routing, redundancy and discovery protocols said, read from their packets.
	ospf   ospfState
	bgp    bgpState
	stp    stpState
	dhcp   dhcpState
	vrrp   vrrpState
	nbrs   discoveryState
	checks checkState
}

// Option adds to what an analyzer looks for.
type Option func(*Analyzer)

// WithChecks makes the analyzer evaluate checks (from a skills directory's packet-analysis
// files) on every packet; checks that cannot be evaluated (see CompileChecks) are left out.
func WithChecks(checks []Check) Option {
	return func(a *Analyzer) { a.checks.use(checks) }
}

// rawFrame is a copy of a frame kept for the last-packets list: describing every packet as
// it passes would cost more than decoding it.
type rawFrame struct {
	n    int
	at   time.Time
	data []byte
}

// NewAnalyzer returns an analyzer for packets of the given link type that keeps edge packets
// at each end as one-liners (0 means DefaultEdge).
func NewAnalyzer(linkType layers.LinkType, edge int, opts ...Option) *Analyzer {
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
	for _, o := range opts {
		o(a)
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
	a.now = ci.Timestamp
	a.checks.begin()
	a.decode(&p, data)
	a.checks.evaluate(p)
	if p.proto == "" {
		a.undecoded++
		p.proto = "undecoded"
		if a.describe {
			p.info = fmt.Sprintf("%d bytes", len(data))
		}
	}
	a.countProtocol(p.proto, size)
	a.countConversation(p, size)

	if a.describe {
		a.head = append(a.head, a.line(p, ci.Timestamp))
	}
	a.keepLast(p.n, ci.Timestamp, data)
}

// keepLast copies a frame into the ring of the last edge frames.
func (a *Analyzer) keepLast(n int, at time.Time, data []byte) {
	if len(a.tail) < a.edge {
		a.tail = append(a.tail, rawFrame{n: n, at: at, data: append([]byte(nil), data...)})
		return
	}
	f := &a.tail[a.tailAt]
	f.n, f.at, f.data = n, at, append(f.data[:0], data...)
	a.tailAt = (a.tailAt + 1) % a.edge
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

// Errors of Read: it stopped at the packet limit, or the stream did not start with a pcap header.
var (
	ErrLimit   = errors.New("packet limit reached")
	ErrNotPcap = errors.New("not a pcap stream")
)

// Read decodes a pcap stream until it ends, fails, or limit packets were read (limit <= 0:
// no limit). onPacket, if set, is called after every packet with the count so far. A stream
// cut in the middle of a record still yields the packets before it: the error says why it
// stopped and is io.EOF for a stream that simply ended.
func Read(r io.Reader, edge, limit int, onPacket func(n int), opts ...Option) (Summary, error) {
	pr, err := pcapgo.NewReader(r)
	if err != nil {
		return Empty(), fmt.Errorf("%w: %v", ErrNotPcap, err)
	}
	// pcapgo allocates a buffer of the header's snap length for the first record, however small
	// the record is: four bytes of a hostile or corrupted header would cost up to 4 GB. No real
	// capture has a larger snap length than libpcap's ceiling, and a record beyond it is then
	// refused as longer than the snap length, as pcapgo refuses any.
	if pr.Snaplen() > maxSnaplen {
		pr.SetSnaplen(maxSnaplen)
	}
	a := NewAnalyzer(pr.LinkType(), edge, opts...)
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
