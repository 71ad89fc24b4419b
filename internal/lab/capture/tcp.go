package capture

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/gopacket/layers"
)

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

func (a *Analyzer) onTCP(p *packet, src, dst string) {
	p.proto = "TCP"
	t := &a.tcp
	from, to := hostPort(src, uint16(t.SrcPort)), hostPort(dst, uint16(t.DstPort))
	payload := uint32(len(t.Payload))
	if a.checks.fields != nil {
		a.set("tcp.srcport", strconv.Itoa(int(t.SrcPort)))
		a.set("tcp.dstport", strconv.Itoa(int(t.DstPort)))
		a.set("tcp.flags.syn", boolField(t.SYN))
		a.set("tcp.flags.ack", boolField(t.ACK))
		a.set("tcp.flags.reset", boolField(t.RST))
		a.set("tcp.flags.fin", boolField(t.FIN))
	}
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

// incompleteHandshakes lists the connection attempts that never completed and why.
func (a *Analyzer) incompleteHandshakes() []Handshake {
	out := []Handshake{}
	for _, k := range a.connOrder {
		c := a.conns[k]
		if c == nil || c.established || len(out) >= maxListed {
			continue
		}
		state := "no SYN-ACK from the server"
		switch {
		case c.refused:
			state = "refused: the server answered the SYN with a reset"
		case c.synAck:
			state = "the client never acknowledged the SYN-ACK"
		}
		out = append(out, Handshake{Client: k.src, Server: k.dst, State: state})
	}
	return out
}
