package devices

import "time"

// Telnet protocol bytes (RFC 854/855) and the options this client cares about.
const (
	iacSE   = 240
	iacNOP  = 241
	iacSB   = 250
	iacWILL = 251
	iacWONT = 252
	iacDO   = 253
	iacDONT = 254
	iacIAC  = 255

	optBinary = 0
	optEcho   = 1
	optSGA    = 3
)

// iacGap is the silence kept between a negotiation reply and the next write: vpcs discards a
// whole read that starts with 0xFF and would lose a command glued to it.
const iacGap = 30 * time.Millisecond

type telnetState uint8

const (
	tsData telnetState = iota
	tsIAC
	tsVerb
	tsSB
	tsSBIAC
)

// telnetParser strips telnet commands from a byte stream and decides the
// replies. It is a streaming state machine because consoles behind the GNS3
// proxy forward the device's own negotiation bytes in the middle of output,
// and a command can be split across any two reads.
type telnetParser struct {
	state telnetState
	verb  byte
	// answered remembers which (verb, option) pairs already got a reply, so a
	// server that repeats itself never drags us into a negotiation loop.
	answered map[[2]byte]bool
	// Negotiations counts the IAC verbs seen, for diagnostics and tests.
	Negotiations int
}

// feed parses raw bytes, appends payload bytes to data and the replies to
// send to reply.
func (p *telnetParser) feed(in, data, reply []byte) ([]byte, []byte) {
	for _, b := range in {
		switch p.state {
		case tsData:
			if b == iacIAC {
				p.state = tsIAC
				continue
			}
			data = append(data, b)
		case tsIAC:
			switch b {
			case iacIAC:
				data = append(data, iacIAC)
				p.state = tsData
			case iacWILL, iacWONT, iacDO, iacDONT:
				p.verb = b
				p.state = tsVerb
			case iacSB:
				p.state = tsSB
			default:
				// NOP, GA, AYT, DM and friends carry no payload for us.
				p.state = tsData
			}
		case tsVerb:
			p.Negotiations++
			reply = p.answer(p.verb, b, reply)
			p.state = tsData
		case tsSB:
			if b == iacIAC {
				p.state = tsSBIAC
			}
		case tsSBIAC:
			if b == iacSE {
				p.state = tsData
			} else {
				p.state = tsSB
			}
		}
	}
	return data, reply
}

// answer accepts the server echoing, suppressing go-ahead and binary mode
// (what every console server offers) and refuses everything else, such as
// terminal type or window size, which would need subnegotiation we do not do.
func (p *telnetParser) answer(verb, opt byte, reply []byte) []byte {
	if p.answered == nil {
		p.answered = make(map[[2]byte]bool)
	}
	key := [2]byte{verb, opt}
	if p.answered[key] {
		return reply
	}
	p.answered[key] = true
	var resp byte
	switch verb {
	case iacWILL:
		resp = iacDONT
		if opt == optEcho || opt == optSGA || opt == optBinary {
			resp = iacDO
		}
	case iacWONT:
		resp = iacDONT
	case iacDO:
		resp = iacWONT
		if opt == optSGA || opt == optBinary {
			resp = iacWILL
		}
	case iacDONT:
		resp = iacWONT
	}
	return append(reply, iacIAC, resp, opt)
}

// escapeIAC doubles 0xFF bytes so that user data is never read as a telnet
// command by the server.
func escapeIAC(b []byte) []byte {
	n := 0
	for _, c := range b {
		if c == iacIAC {
			n++
		}
	}
	if n == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+n)
	for _, c := range b {
		out = append(out, c)
		if c == iacIAC {
			out = append(out, iacIAC)
		}
	}
	return out
}
