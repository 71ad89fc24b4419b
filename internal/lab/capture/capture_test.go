package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// sample is the real GNS3 capture of shared/gns3/samples (a copy is embedded in the fake GNS3).
func sample(testing.TB) []byte { return fakegns3.SampleCapture() }

// rawCounts walks a little-endian Ethernet pcap by hand, without gopacket, so the summary is
// checked against numbers it did not compute itself.
type rawCounts struct {
	packets int
	bytes   int64
	protos  map[string]int
	convs   map[string][2]int64 // "a|b" (sorted) → packets, bytes
	arpAsk  map[string]int      // target IP → requests never answered
}

func countRaw(t *testing.T, b []byte) rawCounts {
	t.Helper()
	if binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 || binary.LittleEndian.Uint32(b[20:]) != 1 {
		t.Fatalf("sample is not a little-endian Ethernet pcap")
	}
	rc := rawCounts{protos: map[string]int{}, convs: map[string][2]int64{}, arpAsk: map[string]int{}}
	ip := func(p []byte) string { return net.IP(p).String() }
	mac := func(p []byte) string { return net.HardwareAddr(p).String() }
	for off := 24; off+16 <= len(b); {
		incl := int(binary.LittleEndian.Uint32(b[off+8:]))
		orig := int64(binary.LittleEndian.Uint32(b[off+12:]))
		f := b[off+16 : off+16+incl]
		off += 16 + incl
		rc.packets++
		rc.bytes += orig
		var proto, src, dst string
		switch binary.BigEndian.Uint16(f[12:]) {
		case 0x0806:
			proto, src, dst = "ARP", mac(f[6:12]), mac(f[0:6])
			sender, target := ip(f[28:32]), ip(f[38:42])
			switch binary.BigEndian.Uint16(f[20:]) {
			case 1:
				if sender != target {
					rc.arpAsk[target]++
				}
			case 2:
				delete(rc.arpAsk, sender)
			}
		case 0x0800:
			src, dst = ip(f[26:30]), ip(f[30:34])
			proto = map[byte]string{1: "ICMP", 6: "TCP", 17: "UDP"}[f[23]]
		case 0x86dd:
			src, dst = ip(f[22:38]), ip(f[38:54])
			proto = map[byte]string{58: "ICMPv6", 6: "TCP", 17: "UDP"}[f[20]]
		}
		if proto == "" {
			t.Fatalf("packet %d: the sample holds a protocol this test does not count", rc.packets)
		}
		rc.protos[proto]++
		if dst < src {
			src, dst = dst, src
		}
		c := rc.convs[src+"|"+dst]
		rc.convs[src+"|"+dst] = [2]int64{c[0] + 1, c[1] + orig}
	}
	return rc
}

func TestSampleSummaryMatchesIndependentCounts(t *testing.T) {
	b := sample(t)
	want := countRaw(t, b)
	var seen []int
	s, err := Read(bytes.NewReader(b), 3, 0, func(n int) { seen = append(seen, n) })
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Read ended with %v, want io.EOF at the end of the stream", err)
	}
	if s.Packets != want.packets || s.Bytes != want.bytes {
		t.Errorf("packets/bytes = %d/%d, want %d/%d", s.Packets, s.Bytes, want.packets, want.bytes)
	}
	if len(seen) != want.packets || seen[len(seen)-1] != want.packets {
		t.Errorf("progress callback saw %d calls ending at %v, want one per packet", len(seen), seen[len(seen)-1:])
	}
	if s.LinkType != "Ethernet" {
		t.Errorf("link type %q", s.LinkType)
	}
	got := map[string]int{}
	total := 0
	for _, p := range s.Protocols {
		got[p.Protocol] = p.Packets
		total += p.Packets
	}
	if fmt.Sprint(got) != fmt.Sprint(want.protos) || total != want.packets {
		t.Errorf("protocols = %v, want %v", got, want.protos)
	}
	for i := 1; i < len(s.Protocols); i++ {
		if s.Protocols[i].Packets > s.Protocols[i-1].Packets {
			t.Errorf("protocols not sorted by packets: %+v", s.Protocols)
		}
	}
	gotConv := map[string][2]int64{}
	for _, c := range s.Conversations {
		a, z := c.A, c.B
		if z < a {
			a, z = z, a
		}
		gotConv[a+"|"+z] = [2]int64{int64(c.Packets), c.Bytes}
	}
	if fmt.Sprint(gotConv) != fmt.Sprint(want.convs) {
		t.Errorf("conversations = %v\nwant %v", gotConv, want.convs)
	}
	if s.Conversations[0].A != "10.5.0.1" || s.Conversations[0].B != "10.5.0.2" {
		t.Errorf("busiest conversation first, from the endpoint that spoke first: %+v", s.Conversations[0])
	}
	if len(s.UnansweredARP) != len(want.arpAsk) {
		t.Fatalf("unanswered ARP = %+v, want targets %v", s.UnansweredARP, want.arpAsk)
	}
	for _, q := range s.UnansweredARP {
		if want.arpAsk[q.Target] != q.Requests {
			t.Errorf("unanswered ARP for %s: %d requests, want %d", q.Target, q.Requests, want.arpAsk[q.Target])
		}
	}
	// The sample's pings were all answered and its TCP probes completed cleanly.
	if len(s.EchoWithoutReply) != 0 || len(s.Unreachables) != 0 || s.TCPResets != 0 || s.TCPRetransmissions != 0 || len(s.IncompleteHandshakes) != 0 {
		t.Errorf("findings in a clean capture: %+v", s)
	}
	if len(s.First) != 3 || len(s.Last) != 3 || !strings.HasPrefix(s.First[0], "#1 0.000000 ") || !strings.HasPrefix(s.Last[2], fmt.Sprintf("#%d ", want.packets)) {
		t.Errorf("first/last one-liners: %q / %q", s.First, s.Last)
	}
	if !strings.Contains(s.Last[2], "UDP") || !strings.Contains(s.First[2], "ARP") {
		t.Errorf("one-liners do not name the protocol: %q / %q", s.First, s.Last)
	}
	text := s.Text()
	for _, want := range []string{"41 packets", "who-has 10.5.0.9 (asked by 10.5.0.1, 3 time(s))", "10.5.0.1 <-> 10.5.0.2 28/", "TCP: 0 reset(s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestReadStopsAtTheLimitAndAtACutRecord(t *testing.T) {
	b := sample(t)
	s, err := Read(bytes.NewReader(b), 0, 10, nil)
	if !errors.Is(err, ErrLimit) || s.Packets != 10 {
		t.Errorf("limit 10: %d packets, err %v", s.Packets, err)
	}
	// The first record is 16 + 62 bytes; cut the second in the middle of its data.
	s, err = Read(bytes.NewReader(b[:24+78+16+20]), 0, 0, nil)
	if err == nil || s.Packets != 1 {
		t.Errorf("cut stream: %d packets, err %v; want the first packet and an error", s.Packets, err)
	}
	if _, err := Read(strings.NewReader("not a capture at all"), 0, 0, nil); err == nil || !strings.Contains(err.Error(), "not a pcap stream") {
		t.Errorf("garbage: %v", err)
	}
}

// builder writes synthetic frames into a pcap, for findings the real sample does not hold.
type builder struct {
	t   *testing.T
	buf bytes.Buffer
	w   *pcapgo.Writer
	at  time.Time
}

func newBuilder(t *testing.T) *builder {
	b := &builder{t: t, at: time.Unix(1700000000, 0)}
	b.w = pcapgo.NewWriter(&b.buf)
	if err := b.w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	macA = net.HardwareAddr{0, 0x50, 0x79, 0x66, 0x68, 1}
	macB = net.HardwareAddr{0, 0x50, 0x79, 0x66, 0x68, 2}
)

func (b *builder) frame(ls ...gopacket.SerializableLayer) {
	b.t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		b.t.Fatal(err)
	}
	b.at = b.at.Add(10 * time.Millisecond)
	data := buf.Bytes()
	if err := b.w.WritePacket(gopacket.CaptureInfo{Timestamp: b.at, CaptureLength: len(data), Length: len(data)}, data); err != nil {
		b.t.Fatal(err)
	}
}

func (b *builder) ip4(src, dst string, proto layers.IPProtocol, l4 ...gopacket.SerializableLayer) {
	eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: net.ParseIP(src).To4(), DstIP: net.ParseIP(dst).To4()}
	for _, l := range l4 {
		if nl, ok := l.(interface {
			SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
		}); ok {
			_ = nl.SetNetworkLayerForChecksum(ip)
		}
	}
	b.frame(append([]gopacket.SerializableLayer{eth, ip}, l4...)...)
}

func (b *builder) tcp(src string, sport uint16, dst string, dport uint16, seq, ack uint32, flags string, payload string) {
	t := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, Ack: ack, Window: 1024, DataOffset: 5,
		SYN: strings.Contains(flags, "S"), ACK: strings.Contains(flags, "A"), RST: strings.Contains(flags, "R"),
		FIN: strings.Contains(flags, "F"), PSH: strings.Contains(flags, "P")}
	b.ip4(src, dst, layers.IPProtocolTCP, t, gopacket.Payload(payload))
}

func TestFindings(t *testing.T) {
	b := newBuilder(t)
	// Two pings, one answered.
	b.ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 7, Seq: 1})
	b.ip4("10.0.0.2", "10.0.0.1", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(0, 0), Id: 7, Seq: 1})
	b.ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 7, Seq: 2})
	// A UDP probe answered by "port unreachable", which quotes the probe.
	quoted := []byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 3, 0x13, 0x88, 0, 53, 0, 8, 0, 0}
	b.ip4("10.0.0.3", "10.0.0.1", layers.IPProtocolICMPv4, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(3, 3)}, gopacket.Payload(quoted))
	// A refused connection: SYN, then RST-ACK.
	b.tcp("10.0.0.1", 40000, "10.0.0.2", 23, 100, 0, "S", "")
	b.tcp("10.0.0.2", 23, "10.0.0.1", 40000, 0, 101, "RA", "")
	// A SYN sent twice into the void.
	b.tcp("10.0.0.1", 40001, "10.0.0.9", 80, 500, 0, "S", "")
	b.tcp("10.0.0.1", 40001, "10.0.0.9", 80, 500, 0, "S", "")
	// A handshake the client never finished.
	b.tcp("10.0.0.1", 40002, "10.0.0.2", 80, 900, 0, "S", "")
	b.tcp("10.0.0.2", 80, "10.0.0.1", 40002, 3000, 901, "SA", "")
	// A complete connection whose first data segment is sent again.
	b.tcp("10.0.0.1", 40003, "10.0.0.2", 80, 1000, 0, "S", "")
	b.tcp("10.0.0.2", 80, "10.0.0.1", 40003, 5000, 1001, "SA", "")
	b.tcp("10.0.0.1", 40003, "10.0.0.2", 80, 1001, 5001, "A", "")
	b.tcp("10.0.0.1", 40003, "10.0.0.2", 80, 1001, 5001, "PA", "GET / HTTP/1.0\r\n")
	b.tcp("10.0.0.1", 40003, "10.0.0.2", 80, 1001, 5001, "PA", "GET / HTTP/1.0\r\n")
	b.tcp("10.0.0.1", 40003, "10.0.0.2", 80, 1017, 5001, "FA", "")

	s, err := Read(&b.buf, 0, 0, nil)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if len(s.EchoWithoutReply) != 1 || s.EchoWithoutReply[0] != (EchoGap{From: "10.0.0.1", To: "10.0.0.2", Requests: 2, Unanswered: 1}) {
		t.Errorf("echo without reply = %+v", s.EchoWithoutReply)
	}
	if len(s.Unreachables) != 1 || s.Unreachables[0].Reason != "port unreachable" || s.Unreachables[0].Original != "10.0.0.1:5000 → 10.0.0.3:53 UDP" {
		t.Errorf("unreachables = %+v", s.Unreachables)
	}
	if s.TCPResets != 1 || s.TCPResetList[0].From != "10.0.0.2:23" {
		t.Errorf("resets = %d %+v", s.TCPResets, s.TCPResetList)
	}
	if s.TCPRetransmissions != 2 {
		t.Errorf("retransmissions = %d %+v, want the repeated SYN and the repeated data segment", s.TCPRetransmissions, s.TCPRetransmitList)
	}
	want := []Handshake{
		{Client: "10.0.0.1:40000", Server: "10.0.0.2:23", State: "refused: the server answered the SYN with a reset"},
		{Client: "10.0.0.1:40001", Server: "10.0.0.9:80", State: "no SYN-ACK from the server"},
		{Client: "10.0.0.1:40002", Server: "10.0.0.2:80", State: "the client never acknowledged the SYN-ACK"},
	}
	if fmt.Sprint(s.IncompleteHandshakes) != fmt.Sprint(want) {
		t.Errorf("incomplete handshakes:\n got %+v\nwant %+v", s.IncompleteHandshakes, want)
	}
	text := s.Text()
	for _, w := range []string{"10.0.0.1 → 10.0.0.2: 1 of 2 unanswered", "port unreachable for 10.0.0.1:5000 → 10.0.0.3:53 UDP", "1 reset(s), 2 retransmission(s), 3 incomplete handshake(s)"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

// BenchmarkDecode measures decode speed on the real capture, in packets per second.
func BenchmarkDecode(b *testing.B) {
	data := sample(b)
	// Repeat the sample's records so one Read sees a long stream.
	var buf bytes.Buffer
	buf.Write(data[:24])
	const copies = 100
	for i := 0; i < copies; i++ {
		buf.Write(data[24:])
	}
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	packets := 0
	for i := 0; i < b.N; i++ {
		s, _ := Read(bytes.NewReader(stream), DefaultEdge, 0, nil)
		packets += s.Packets
	}
	b.ReportMetric(float64(packets)/b.Elapsed().Seconds(), "packets/s")
}
