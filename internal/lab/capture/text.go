package capture

import (
	"fmt"
	"sort"
	"strings"
)

// Text renders the summary compactly for a model: the findings first, then what each
// protocol said, then the counts and the packets.
func (s Summary) Text() string {
	var b strings.Builder
	s.writeFindings(&b)
	s.writeProtocolDetail(&b)
	s.writeCounts(&b)
	s.writeAnomalies(&b)
	s.writePackets(&b)
	return b.String()
}

func (s Summary) writeFindings(b *strings.Builder) {
	b.WriteString("Findings:")
	if len(s.Findings) == 0 {
		b.WriteString(" none")
	}
	for _, f := range s.Findings {
		fmt.Fprintf(b, "\n  [%s] %s: %s", f.Severity, f.Protocol, f.Text)
	}
	b.WriteString("\n")
}

// writeProtocolDetail lists what each routing, redundancy and discovery protocol said, so a
// finding can be checked against the values it came from.
func (s Summary) writeProtocolDetail(b *strings.Builder) {
	if len(s.OSPFRouters) > 0 {
		b.WriteString("OSPF routers:")
		for _, r := range s.OSPFRouters {
			fmt.Fprintf(b, "\n  %s (%s, OSPFv%d): area %s, hello %d s, dead %d s", r.RouterID, r.Address, r.Version, r.Area, r.HelloInterval, r.DeadInterval)
			if r.NetworkMask != "" {
				fmt.Fprintf(b, ", mask %s, auth %s", r.NetworkMask, r.AuthType)
			}
			if r.DBDMTU != 0 {
				fmt.Fprintf(b, ", DBD MTU %d", r.DBDMTU)
			}
			fmt.Fprintf(b, "; %d hello(s), %d DBD, %d LSU; neighbours in its hellos: %s", r.Hellos, r.DBDs, r.LSUs, orNone(r.Neighbors))
		}
		for _, p := range s.OSPFPairs {
			fmt.Fprintf(b, "\n  %s – %s: %s", p.A, p.B, p.State)
		}
		b.WriteString("\n")
	}
	if len(s.BGP) > 0 {
		b.WriteString("BGP sessions:")
		for _, x := range s.BGP {
			fmt.Fprintf(b, "\n  %s ↔ %s: %s; messages %s", x.A, x.B, x.State, messageCounts(x.Messages))
			for _, o := range x.Opens {
				fmt.Fprintf(b, "\n    OPEN from %s: AS %d, hold time %d s, router ID %s", o.From, o.AS, o.HoldTime, o.RouterID)
			}
			if x.Announced+x.Withdrawn > 0 {
				fmt.Fprintf(b, "\n    UPDATEs: %d prefix(es) announced, %d withdrawn", x.Announced, x.Withdrawn)
			}
		}
		b.WriteString("\n")
	}
	if s.STP != nil {
		fmt.Fprintf(b, "Spanning tree: root %s, %d topology change(s)", s.STP.Root, s.STP.TopologyChanges)
		for _, x := range s.STP.Bridges {
			fmt.Fprintf(b, "\n  %s %s: root %s cost %d port %s, hello %g s, max age %g s, forward delay %g s, %d BPDU(s)",
				x.Protocol, x.Bridge, x.Root, x.RootCost, x.Port, x.Hello, x.MaxAge, x.ForwardDelay, x.BPDUs)
		}
		b.WriteString("\n")
	}
	if len(s.DHCP) > 0 {
		b.WriteString("DHCP clients:")
		for _, c := range s.DHCP {
			fmt.Fprintf(b, "\n  %s: %s; messages %s", c.Client, c.State, messageCounts(c.Messages))
		}
		b.WriteString("\n")
	}
	if len(s.VRRP) > 0 {
		b.WriteString("VRRP:")
		for _, g := range s.VRRP {
			fmt.Fprintf(b, "\n  VRID %d (v%d): master %s", g.VRID, g.Version, g.Master)
			for _, ad := range g.Advertisers {
				fmt.Fprintf(b, "; %s priority %d ×%d %v", ad.Address, ad.Priority, ad.Advertisements, ad.VirtualIPs)
			}
		}
		b.WriteString("\n")
	}
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// messageCounts renders {"10.1.0.1 OPEN": 2, …} in a stable order.
func messageCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return orNone(parts)
}

func (s Summary) writeCounts(b *strings.Builder) {
	fmt.Fprintf(b, "%d packets, %d bytes over %.1f s", s.Packets, s.Bytes, s.DurationSeconds)
	if s.Undecoded > 0 {
		fmt.Fprintf(b, " (%d not decoded)", s.Undecoded)
	}
	b.WriteString("\nProtocols:")
	if len(s.Protocols) == 0 {
		b.WriteString(" none")
	}
	for i, p := range s.Protocols {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(b, " %s %d", p.Protocol, p.Packets)
	}
	b.WriteString("\nConversations (packets/bytes):")
	if len(s.Conversations) == 0 {
		b.WriteString(" none")
	}
	for _, c := range s.Conversations {
		fmt.Fprintf(b, "\n  %s <-> %s %d/%d [%s]", c.A, c.B, c.Packets, c.Bytes, strings.Join(c.Protocols, " "))
	}
	if s.MoreConversations > 0 {
		fmt.Fprintf(b, "\n  … and %d more", s.MoreConversations)
	}
}

func (s Summary) writeAnomalies(b *strings.Builder) {
	b.WriteString("\nUnanswered ARP:")
	if len(s.UnansweredARP) == 0 {
		b.WriteString(" none")
	}
	for _, q := range s.UnansweredARP {
		fmt.Fprintf(b, "\n  who-has %s (asked by %s, %d time(s))", q.Target, q.AskedBy, q.Requests)
	}
	b.WriteString("\nICMP unreachable:")
	if len(s.Unreachables) == 0 {
		b.WriteString(" none")
	}
	for _, u := range s.Unreachables {
		fmt.Fprintf(b, "\n  %s → %s: %s", u.From, u.To, u.Reason)
		if u.Original != "" {
			fmt.Fprintf(b, " for %s", u.Original)
		}
		if u.Count > 1 {
			fmt.Fprintf(b, " (×%d)", u.Count)
		}
	}
	b.WriteString("\nEcho requests without reply:")
	if len(s.EchoWithoutReply) == 0 {
		b.WriteString(" none")
	}
	for _, g := range s.EchoWithoutReply {
		fmt.Fprintf(b, "\n  %s → %s: %d of %d unanswered", g.From, g.To, g.Unanswered, g.Requests)
	}
	fmt.Fprintf(b, "\nTCP: %d reset(s), %d retransmission(s), %d incomplete handshake(s)", s.TCPResets, s.TCPRetransmissions, len(s.IncompleteHandshakes))
	for _, e := range s.TCPResetList {
		fmt.Fprintf(b, "\n  reset #%d %s → %s", e.Packet, e.From, e.To)
	}
	for _, e := range s.TCPRetransmitList {
		fmt.Fprintf(b, "\n  retransmission #%d %s → %s", e.Packet, e.From, e.To)
	}
	for _, h := range s.IncompleteHandshakes {
		fmt.Fprintf(b, "\n  %s → %s: %s", h.Client, h.Server, h.State)
	}
}

func (s Summary) writePackets(b *strings.Builder) {
	if len(s.First) > 0 {
		fmt.Fprintf(b, "\nFirst %d packet(s):", len(s.First))
		for _, l := range s.First {
			b.WriteString("\n  " + l)
		}
	}
	// The last packets repeat the first ones when the capture is short.
	if last := s.lastNotShown(); len(last) > 0 {
		fmt.Fprintf(b, "\nLast %d packet(s):", len(last))
		for _, l := range last {
			b.WriteString("\n  " + l)
		}
	}
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
