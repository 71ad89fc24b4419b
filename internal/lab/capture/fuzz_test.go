package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
)

// Bounds of one fuzz input. The time is far above what any seed takes (milliseconds, even under
// the race detector); the memory is what a capture's own limits allow (the BGP buffers, the
// tracked keys, the last frames) plus a multiple of the input, and far below what a length
// field read as an allocation size would cost.
const (
	fuzzDeadline = 10 * time.Second
	fuzzMemory   = 64 << 20
)

// recordedCaptures are the pcaps recorded on real FRR routers and the real GNS3 capture of the
// fake GNS3: the seeds of every capture target.
func recordedCaptures(f *testing.F) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "*.pcap"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no recorded captures in testdata: %v", err)
	}
	out := [][]byte{fakegns3.SampleCapture()}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// fuzzChecks are skill checks of the kinds a teacher's packet_analysis files hold, so that
// the checks' evaluation reads fuzzed fields too.
var fuzzChecks = []Check{
	{Name: "hello", Condition: "ospf.hello.hello_interval != 10", Message: "{ip.src} hello {ospf.hello.hello_interval}"},
	{Name: "bgp", Condition: "bgp.open.holdtime < 9", Message: "{ip.src} AS {bgp.open.myas}"},
	{Name: "arp", Condition: "arp.opcode == 2", Message: "{eth.src}"},
}

// FuzzCapture reads a pcap stream as a link's capture is read: any bytes, from the header on.
// It must not panic, must end, and must not allocate what a record's or the header's length
// fields claim (a snap length of 4 GB is four bytes away from a real header). The summary is
// rendered the two ways it leaves the package: as text for the model and as JSON for the card.
// Then the round trip: the records read are written again as a pcap of their own, and reading
// that gives the same summary.
func FuzzCapture(f *testing.F) {
	for _, b := range recordedCaptures(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var sum, again Summary
		var err, againErr error
		var text string
		var card, cardAgain []byte
		var jerr error
		var roundTrip bool
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+64*uint64(len(data)), func() {
			checks, _ := CompileChecks(fuzzChecks)
			sum, err = Read(bytes.NewReader(data), 0, 0, nil, WithChecks(checks))
			text = sum.Text()
			if card, jerr = json.Marshal(sum); jerr != nil {
				return
			}
			var rewritten []byte
			if rewritten, roundTrip = rewritePcap(data); roundTrip {
				again, againErr = Read(bytes.NewReader(rewritten), 0, 0, nil, WithChecks(checks))
				cardAgain, _ = json.Marshal(again)
			}
		})
		if err == nil || errors.Is(err, ErrLimit) {
			t.Fatalf("an unlimited read of a finite stream ended with %v", err)
		}
		if jerr != nil {
			t.Fatalf("summary does not marshal: %v", jerr)
		}
		if text == "" || len(card) == 0 {
			t.Fatal("empty summary")
		}
		if sum.Packets > len(data)/16 {
			t.Fatalf("%d packets from %d bytes: every record has a 16-byte header", sum.Packets, len(data))
		}
		counted := 0
		for _, p := range sum.Protocols {
			counted += p.Packets
		}
		if counted != sum.Packets {
			t.Fatalf("%d packets, %d counted by protocol", sum.Packets, counted)
		}
		if !roundTrip {
			return
		}
		if !errors.Is(againErr, io.EOF) {
			t.Fatalf("the rewritten capture did not read to its end: %v", againErr)
		}
		if !bytes.Equal(card, cardAgain) {
			t.Fatalf("the records written again read differently:\n%s\n%s", card, cardAgain)
		}
	})
}

// rewritePcap writes the records a reader takes from data into a new pcap (nanosecond
// timestamps, so none is rounded). It reports false for a stream that is no pcap, and for
// records the format cannot hold again: a timestamp the reader normalised beyond 32-bit seconds
// (a nanosecond field above a billion), which is the reader's arithmetic, not the analyzer's.
func rewritePcap(data []byte) ([]byte, bool) {
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, false
	}
	// As Read does, so that the records read here are the ones it reads.
	r.SetSnaplen(min(r.Snaplen(), maxSnaplen))
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		return nil, false
	}
	for {
		frame, ci, err := r.ReadPacketData()
		if err != nil {
			return out.Bytes(), true
		}
		if s := ci.Timestamp.Unix(); s < 0 || s > 0xffffffff {
			return nil, false
		}
		if err := w.WritePacket(ci, frame); err != nil {
			return nil, false
		}
	}
}

// bgpSegment is one TCP segment of a BGP session, as FuzzBGP's input lays them out.
type bgpSegment struct {
	fromB   bool // sent by B (the side on port 179)
	resend  bool // sent again, as TCP retransmits
	lost    bool // never captured: the stream has a gap
	payload []byte
}

// Segment flags in FuzzBGP's input.
const (
	segFromB  = 1 << 0
	segResend = 1 << 1
	segLost   = 1 << 2
)

// encodeSegments lays segments out as FuzzBGP reads them: a flags byte, a 2-byte length, the
// payload.
func encodeSegments(segs []bgpSegment) []byte {
	var out []byte
	for _, s := range segs {
		var flags byte
		if s.fromB {
			flags |= segFromB
		}
		if s.resend {
			flags |= segResend
		}
		if s.lost {
			flags |= segLost
		}
		out = append(out, flags)
		out = binary.BigEndian.AppendUint16(out, uint16(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out
}

// decodeSegments reads FuzzBGP's input; a length beyond the input takes what is left.
func decodeSegments(b []byte) []bgpSegment {
	var segs []bgpSegment
	for len(b) >= 3 {
		flags, n := b[0], int(binary.BigEndian.Uint16(b[1:3]))
		b = b[3:]
		n = min(n, len(b))
		segs = append(segs, bgpSegment{fromB: flags&segFromB != 0, resend: flags&segResend != 0, lost: flags&segLost != 0, payload: b[:n]})
		b = b[n:]
	}
	return segs
}

// bgpSegmentsOf takes the BGP payloads of a recorded capture, in order, as FuzzBGP's segments.
func bgpSegmentsOf(f *testing.F, pcap []byte) []bgpSegment {
	r, err := pcapgo.NewReader(bytes.NewReader(pcap))
	if err != nil {
		f.Fatal(err)
	}
	var segs []bgpSegment
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			return segs
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if !ok || len(tcp.Payload) == 0 || tcp.SrcPort != bgpPort && tcp.DstPort != bgpPort {
			continue
		}
		segs = append(segs, bgpSegment{fromB: tcp.SrcPort == bgpPort, payload: tcp.Payload})
	}
}

// bgpLink is a TCP connection between two BGP speakers whose segments are turned into frames.
type bgpLink struct {
	a, b       net.IP
	aPort      uint16
	aSeq, bSeq uint32
	at         time.Time
}

func (l *bgpLink) frame(s bgpSegment) ([]byte, gopacket.CaptureInfo) {
	src, dst, sport, dport, seq := l.a, l.b, l.aPort, uint16(bgpPort), &l.aSeq
	if s.fromB {
		src, dst, sport, dport, seq = l.b, l.a, bgpPort, l.aPort, &l.bSeq
	}
	at := *seq
	if s.resend {
		at -= uint32(len(s.payload))
	} else {
		*seq += uint32(len(s.payload))
	}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 1, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: at, Ack: 1, ACK: true, PSH: true, Window: 65535, DataOffset: 5}
	_ = tcp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	// Serializing these layers fails only for a payload longer than an IPv4 packet holds, which
	// a 2-byte length cannot give.
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, tcp, gopacket.Payload(s.payload)); err != nil {
		panic(err)
	}
	l.at = l.at.Add(time.Millisecond)
	return buf.Bytes(), gopacket.CaptureInfo{Timestamp: l.at, CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
}

// bgpMessage builds one BGP message of the given type around body.
func bgpMessageBytes(typ byte, body []byte) []byte {
	m := bytes.Repeat([]byte{0xff}, 16)
	m = binary.BigEndian.AppendUint16(m, uint16(bgpHeaderLen+len(body)))
	m = append(m, typ)
	return append(m, body...)
}

// bgpOpenBytes encodes an OPEN as a speaker sends it: an AS beyond 16 bits goes in the 4-octet
// AS capability (RFC 6793), with AS_TRANS in the 2-octet field.
func bgpOpenBytes(o BGPOpen) []byte {
	as2 := uint16(o.AS)
	if o.AS > 0xffff {
		as2 = bgpASTrans
	}
	body := []byte{4}
	body = binary.BigEndian.AppendUint16(body, as2)
	body = binary.BigEndian.AppendUint16(body, o.HoldTime)
	body = append(body, net.ParseIP(o.RouterID).To4()...)
	capability := []byte{bgpAS4Cap, 4}
	capability = binary.BigEndian.AppendUint32(capability, o.AS)
	params := append([]byte{2, byte(len(capability))}, capability...)
	body = append(body, byte(len(params)))
	return bgpMessageBytes(bgpOpen, append(body, params...))
}

// bgpUpdateBytes encodes an UPDATE that withdraws and announces the given numbers of /24s.
func bgpUpdateBytes(announced, withdrawn int) []byte {
	var wd, nlri []byte
	for i := range withdrawn {
		wd = append(wd, 24, 198, 51, byte(i))
	}
	for i := range announced {
		nlri = append(nlri, 24, 203, 0, byte(i))
	}
	body := binary.BigEndian.AppendUint16(nil, uint16(len(wd)))
	body = append(body, wd...)
	body = binary.BigEndian.AppendUint16(body, 0) // no path attributes: the decoder counts prefixes only
	return bgpMessageBytes(bgpUpdate, append(body, nlri...))
}

// FuzzBGP feeds TCP segments of one BGP connection, in both directions, with retransmissions
// and gaps, to the analyzer: the stream reassembly and the message decoder read them. It must
// not panic or hang, its buffers stay bounded whatever lengths the headers claim, and a
// session that is then opened on another connection with an OPEN and an UPDATE encoded here
// decodes to what was encoded: the AS (2- or 4-octet), the hold time, the router ID, and the
// prefixes announced and withdrawn.
func FuzzBGP(f *testing.F) {
	for _, pcap := range recordedCaptures(f) {
		if segs := bgpSegmentsOf(f, pcap); len(segs) > 0 {
			f.Add(encodeSegments(segs), uint32(65001), uint16(9), uint32(0x01010101), uint8(1), uint8(0))
		}
	}
	f.Add(encodeSegments([]bgpSegment{{payload: bgpOpenBytes(BGPOpen{AS: 4200000000, HoldTime: 3, RouterID: "10.0.0.1"})},
		{fromB: true, payload: bgpMessageBytes(bgpNotification, []byte{2, 2})}}), uint32(23456), uint16(0), uint32(0), uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, as uint32, hold uint16, id uint32, announced, withdrawn uint8) {
		open := BGPOpen{From: "192.0.2.2", AS: as, HoldTime: hold, RouterID: ipv4(id)}
		ann, wd := int(announced%64), int(withdrawn%64)
		var fuzzed, trip []BGPSession
		var text string
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+64*uint64(len(stream)), func() {
			a := NewAnalyzer(layers.LinkTypeEthernet, 0)
			link := &bgpLink{a: net.IP{10, 1, 0, 2}, b: net.IP{10, 1, 0, 1}, aPort: 40000, aSeq: 1000, bSeq: 5000, at: time.Unix(1700000000, 0)}
			for _, s := range decodeSegments(stream) {
				data, ci := link.frame(s)
				if !s.lost {
					a.Add(data, ci)
				}
			}
			fuzzed = a.BGP()
			text = a.Summary().Text()

			// The round trip, on an analyzer of its own so the fuzzed stream cannot change it.
			r := NewAnalyzer(layers.LinkTypeEthernet, 0)
			rt := &bgpLink{a: net.IP{192, 0, 2, 2}, b: net.IP{192, 0, 2, 1}, aPort: 50000, at: time.Unix(1700000000, 0)}
			for _, s := range []bgpSegment{{payload: bgpOpenBytes(open)}, {payload: bgpUpdateBytes(ann, wd)}} {
				r.Add(rt.frame(s))
			}
			trip = r.BGP()
		})
		if len(fuzzed) > 1 || text == "" {
			t.Fatalf("one connection gave %d sessions", len(fuzzed))
		}
		if len(trip) != 1 || len(trip[0].Opens) != 1 {
			t.Fatalf("the encoded OPEN was not read: %+v", trip)
		}
		if got := trip[0].Opens[0]; got != open {
			t.Errorf("OPEN round trip: encoded %+v, decoded %+v", open, got)
		}
		if trip[0].Announced != ann || trip[0].Withdrawn != wd {
			t.Errorf("UPDATE round trip: encoded %d announced, %d withdrawn; decoded %d, %d", ann, wd, trip[0].Announced, trip[0].Withdrawn)
		}
	})
}
