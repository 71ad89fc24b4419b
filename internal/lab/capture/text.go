package capture

import (
	"fmt"
	"strings"
)

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
