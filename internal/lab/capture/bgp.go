package capture

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// BGP message types (RFC 4271, and ROUTE-REFRESH of RFC 2918).
const (
	bgpOpen         = 1
	bgpUpdate       = 2
	bgpNotification = 3
	bgpKeepalive    = 4
	bgpRouteRefresh = 5

	bgpHeaderLen     = 19
	bgpMaxMessage    = 65535 // extended messages (RFC 8654) may be longer than 4096
	bgpMaxBuffered   = 1 << 17
	bgpAS4Cap        = 65
	bgpASTrans       = 23456
	maxNotifications = 10
)

var bgpTypeNames = map[byte]string{bgpOpen: "OPEN", bgpUpdate: "UPDATE", bgpNotification: "NOTIFICATION", bgpKeepalive: "KEEPALIVE", bgpRouteRefresh: "ROUTE-REFRESH"}

// BGPOpen is what one speaker's OPEN announced.
type BGPOpen struct {
	From     string `json:"from"`
	AS       uint32 `json:"as"`
	HoldTime uint16 `json:"hold_time"`
	RouterID string `json:"router_id"`
}

// BGPNotification is a NOTIFICATION, its code in words, and how often it was sent.
type BGPNotification struct {
	From    string `json:"from"`
	Code    byte   `json:"code"`
	Subcode byte   `json:"subcode"`
	Text    string `json:"text"`
	Count   int    `json:"count"`
}

// BGPSession is what two BGP speakers said to each other over the capture, over any number of
// TCP connections.
type BGPSession struct {
	A     string `json:"a"` // addresses, A the one that spoke first
	B     string `json:"b"`
	State string `json:"state"`
	// Messages counts every message type per sender ("10.1.0.1 OPEN": 3).
	Messages      map[string]int    `json:"messages"`
	Opens         []BGPOpen         `json:"opens"`
	Notifications []BGPNotification `json:"notifications"`
	// Prefixes counts the IPv4 prefixes UPDATEs announced and withdrew.
	Announced int `json:"announced"`
	Withdrawn int `json:"withdrawn"`
}

// bgpStream reassembles one direction of a TCP connection into BGP messages.
type bgpStream struct {
	next   uint32
	synced bool
	buf    []byte
}

// bgpConn is one TCP connection's BGP finite-state machine as its messages show it.
type bgpConn struct {
	opened map[string]bool // an OPEN from this address
	kept   map[string]bool // a KEEPALIVE from this address after its peer's OPEN
	closed bool
	// established is set once both OPENs and both KEEPALIVEs were seen, or traffic of an
	// established session (UPDATE, KEEPALIVE) arrived on a connection whose OPENs came before
	// the capture.
	established bool
	last        int // packet number of the last message, to tell the newest connection
}

type bgpSessionState struct {
	s      BGPSession
	order  int
	opens  map[string]int // index in s.Opens by sender
	notifs map[string]int // index in s.Notifications by sender|code|subcode
	conns  map[[2]string]*bgpConn
}

type bgpState struct {
	streams  map[flowKey]*bgpStream
	sessions map[[2]string]*bgpSessionState
}

// onBGP feeds a TCP segment to or from port 179 to its direction's stream and reads the BGP
// messages it completes.
func (a *Analyzer) onBGP(p *packet, src, dst string) {
	t := &a.tcp
	from, to := hostPort(src, uint16(t.SrcPort)), hostPort(dst, uint16(t.DstPort))
	if a.bgp.streams == nil {
		a.bgp.streams, a.bgp.sessions = map[flowKey]*bgpStream{}, map[[2]string]*bgpSessionState{}
	}
	k := flowKey{from, to}
	st := a.bgp.streams[k]
	if st == nil {
		if len(a.bgp.streams) >= maxTrackedTCPKeys {
			return
		}
		st = &bgpStream{}
		a.bgp.streams[k] = st
	}
	p.proto = "BGP"
	payload := t.Payload
	switch {
	case !st.synced:
		st.synced, st.next = true, t.Seq
	case int32(t.Seq-st.next) < 0:
		// A retransmission: only what goes beyond what was already read is new.
		overlap := st.next - t.Seq
		if int(overlap) >= len(payload) {
			return
		}
		payload = payload[overlap:]
	case t.Seq != st.next:
		st.buf, st.next = st.buf[:0], t.Seq // a segment is missing: start again at this one
	}
	st.next += uint32(len(payload))
	if len(st.buf)+len(payload) > bgpMaxBuffered {
		st.buf = st.buf[:0]
	}
	st.buf = append(st.buf, payload...)
	var names []string
	for {
		msg, ok := st.nextMessage()
		if !ok {
			break
		}
		names = append(names, bgpTypeNames[msg[18]])
		a.bgpMessage(p, src, dst, from, to, msg)
	}
	if a.describe {
		what := strings.Join(names, ", ")
		if what == "" {
			what = fmt.Sprintf("%d bytes of a message", len(t.Payload))
		}
		p.info = fmt.Sprintf("%s → %s BGP %s", from, to, what)
	}
}

// nextMessage takes one complete message off the buffer, skipping bytes that cannot start one
// (a capture that began in the middle of a message).
func (st *bgpStream) nextMessage() ([]byte, bool) {
	for len(st.buf) >= bgpHeaderLen {
		if !bgpMarker(st.buf) {
			i := 1
			for i < len(st.buf) && st.buf[i] != 0xff {
				i++
			}
			st.buf = st.buf[i:]
			continue
		}
		n := int(binary.BigEndian.Uint16(st.buf[16:18]))
		if n < bgpHeaderLen || bgpTypeNames[st.buf[18]] == "" {
			st.buf = st.buf[1:]
			continue
		}
		if len(st.buf) < n {
			return nil, false
		}
		msg := append([]byte(nil), st.buf[:n]...)
		st.buf = st.buf[n:]
		return msg, true
	}
	return nil, false
}

func bgpMarker(b []byte) bool {
	for _, c := range b[:16] {
		if c != 0xff {
			return false
		}
	}
	return true
}

// bgpMessage applies one message to its session.
func (a *Analyzer) bgpMessage(p *packet, src, dst, from, to string, msg []byte) {
	s := a.bgpSession(src, dst)
	if s == nil {
		return
	}
	typ := msg[18]
	body := msg[bgpHeaderLen:]
	name := bgpTypeNames[typ]
	s.s.Messages[src+" "+name]++
	a.set("bgp.type", strconv.Itoa(int(typ)))
	ck := [2]string{from, to}
	if to < from {
		ck = [2]string{to, from}
	}
	c := s.conns[ck]
	if c == nil {
		c = &bgpConn{opened: map[string]bool{}, kept: map[string]bool{}}
		s.conns[ck] = c
	}
	c.last = p.n
	switch typ {
	case bgpOpen:
		if o, ok := parseBGPOpen(src, body); ok {
			a.set("bgp.open.myas", strconv.FormatUint(uint64(o.AS), 10))
			a.set("bgp.open.holdtime", strconv.Itoa(int(o.HoldTime)))
			a.set("bgp.open.identifier", o.RouterID)
			if i, seen := s.opens[src]; seen {
				s.s.Opens[i] = o
			} else {
				s.opens[src] = len(s.s.Opens)
				s.s.Opens = append(s.s.Opens, o)
			}
		}
		c.opened[src] = true
	case bgpKeepalive:
		if c.opened[dst] {
			c.kept[src] = true
		}
		if len(c.opened) == 0 && !c.closed {
			c.established = true // the OPENs were before the capture
		}
	case bgpUpdate:
		if ann, wd, ok := countBGPPrefixes(body); ok {
			s.s.Announced += ann
			s.s.Withdrawn += wd
		}
		if !c.closed {
			c.established = true
		}
	case bgpNotification:
		if len(body) >= 2 {
			a.set("bgp.notify.major_error", strconv.Itoa(int(body[0])))
			a.set("bgp.notify.minor_error", strconv.Itoa(int(body[1])))
			a.bgpNotify(s, src, body[0], body[1])
		}
		c.closed, c.established = true, false
	}
	if !c.closed && len(c.opened) == 2 && len(c.kept) == 2 {
		c.established = true
	}
}

func (a *Analyzer) bgpSession(src, dst string) *bgpSessionState {
	k := [2]string{src, dst}
	if dst < src {
		k = [2]string{dst, src}
	}
	return track(&a.bgp.sessions, k, func(order int) *bgpSessionState {
		return &bgpSessionState{s: BGPSession{A: src, B: dst, Messages: map[string]int{}, Opens: []BGPOpen{}, Notifications: []BGPNotification{}},
			order: order, opens: map[string]int{}, notifs: map[string]int{}, conns: map[[2]string]*bgpConn{}}
	})
}

func (a *Analyzer) bgpNotify(s *bgpSessionState, from string, code, sub byte) {
	k := fmt.Sprintf("%s|%d|%d", from, code, sub)
	if i, ok := s.notifs[k]; ok {
		s.s.Notifications[i].Count++
		return
	}
	if len(s.s.Notifications) >= maxNotifications {
		return
	}
	s.notifs[k] = len(s.s.Notifications)
	s.s.Notifications = append(s.s.Notifications, BGPNotification{From: from, Code: code, Subcode: sub, Text: bgpErrorText(code, sub), Count: 1})
}

// parseBGPOpen reads an OPEN's body: version, AS, hold time, identifier and the optional
// parameters, of which the 4-octet AS capability gives the real AS behind AS_TRANS.
func parseBGPOpen(from string, b []byte) (BGPOpen, bool) {
	if len(b) < 10 {
		return BGPOpen{}, false
	}
	o := BGPOpen{From: from, AS: uint32(binary.BigEndian.Uint16(b[1:3])), HoldTime: binary.BigEndian.Uint16(b[3:5]), RouterID: ipv4(binary.BigEndian.Uint32(b[5:9]))}
	params := b[10:]
	if n := int(b[9]); n < len(params) {
		params = params[:n]
	}
	for len(params) >= 2 {
		typ, n := params[0], int(params[1])
		if len(params) < 2+n {
			break
		}
		if typ == 2 { // capabilities
			caps := params[2 : 2+n]
			for len(caps) >= 2 {
				code, cn := caps[0], int(caps[1])
				if len(caps) < 2+cn {
					break
				}
				if code == bgpAS4Cap && cn == 4 {
					o.AS = binary.BigEndian.Uint32(caps[2:6])
				}
				caps = caps[2+cn:]
			}
		}
		params = params[2+n:]
	}
	return o, true
}

// countBGPPrefixes counts the IPv4 prefixes an UPDATE withdraws and announces in its own
// fields (not in multiprotocol attributes).
func countBGPPrefixes(b []byte) (announced, withdrawn int, ok bool) {
	if len(b) < 4 {
		return 0, 0, false
	}
	wl := int(binary.BigEndian.Uint16(b[0:2]))
	if len(b) < 2+wl+2 {
		return 0, 0, false
	}
	withdrawn = countPrefixes(b[2 : 2+wl])
	al := int(binary.BigEndian.Uint16(b[2+wl : 4+wl]))
	if len(b) < 4+wl+al {
		return 0, 0, false
	}
	return countPrefixes(b[4+wl+al:]), withdrawn, true
}

func countPrefixes(b []byte) int {
	n := 0
	for len(b) > 0 {
		l := (int(b[0]) + 7) / 8
		if l > 4 || len(b) < 1+l {
			break
		}
		b = b[1+l:]
		n++
	}
	return n
}

// bgpErrors words NOTIFICATION codes and subcodes (RFC 4271, 4486, 8203, 9234).
var bgpErrors = map[byte]struct {
	name string
	subs map[byte]string
}{
	1: {"Message Header Error", map[byte]string{1: "Connection Not Synchronized", 2: "Bad Message Length", 3: "Bad Message Type"}},
	2: {"OPEN Message Error", map[byte]string{1: "Unsupported Version Number", 2: "Bad Peer AS", 3: "Bad BGP Identifier",
		4: "Unsupported Optional Parameter", 6: "Unacceptable Hold Time", 7: "Unsupported Capability", 11: "Role Mismatch"}},
	3: {"UPDATE Message Error", map[byte]string{1: "Malformed Attribute List", 2: "Unrecognized Well-known Attribute",
		3: "Missing Well-known Attribute", 4: "Attribute Flags Error", 5: "Attribute Length Error", 6: "Invalid ORIGIN Attribute",
		8: "Invalid NEXT_HOP Attribute", 9: "Optional Attribute Error", 10: "Invalid Network Field", 11: "Malformed AS_PATH"}},
	4: {"Hold Timer Expired", nil},
	5: {"Finite State Machine Error", nil},
	6: {"Cease", map[byte]string{1: "Maximum Number of Prefixes Reached", 2: "Administrative Shutdown", 3: "Peer De-configured",
		4: "Administrative Reset", 5: "Connection Rejected", 6: "Other Configuration Change", 7: "Connection Collision Resolution",
		8: "Out of Resources", 9: "Hard Reset", 10: "BFD Down"}},
	7: {"ROUTE-REFRESH Message Error", map[byte]string{1: "Invalid Message Length"}},
}

func bgpErrorText(code, sub byte) string {
	e, ok := bgpErrors[code]
	if !ok {
		return fmt.Sprintf("error code %d/%d", code, sub)
	}
	if s := e.subs[sub]; s != "" {
		return e.name + " / " + s
	}
	if sub != 0 {
		return fmt.Sprintf("%s / subcode %d", e.name, sub)
	}
	return e.name
}

// BGP summarises every session, the first to speak first.
func (a *Analyzer) BGP() []BGPSession {
	ss := inOrder(a.bgp.sessions, func(s *bgpSessionState) int { return s.order })
	out := make([]BGPSession, 0, len(ss))
	for _, s := range ss {
		v := s.s
		v.State = s.state()
		out = append(out, v)
	}
	return out
}

// state is the session's state from the messages seen: Established while a connection is, else
// what the newest connection reached.
func (s *bgpSessionState) state() string {
	var newest *bgpConn
	for _, c := range s.conns {
		if c.established {
			return "Established"
		}
		if newest == nil || c.last > newest.last {
			newest = c
		}
	}
	switch {
	case newest == nil:
		return "no BGP message seen"
	case newest.closed:
		return "Idle (closed by a NOTIFICATION)"
	case len(newest.opened) == 2:
		return "OpenConfirm (both OPENs seen, waiting for KEEPALIVEs)"
	case len(newest.opened) == 1:
		return "OpenSent (only one side's OPEN seen)"
	}
	return "Connect"
}

// bgpFindings names sessions that did not come up, with the NOTIFICATION's reason.
func (a *Analyzer) bgpFindings() []Finding {
	var out []Finding
	for _, s := range a.BGP() {
		opens := map[string]BGPOpen{}
		for _, o := range s.Opens {
			opens[o.From] = o
		}
		for _, n := range s.Notifications {
			peer := s.A
			if peer == n.From {
				peer = s.B
			}
			sev, likely := bgpLikelyFault(n, opens[peer], peer)
			out = append(out, Finding{Severity: sev, Protocol: "BGP", Check: "bgp_notification",
				Text: fmt.Sprintf("%s sent %s a NOTIFICATION: %s (code %d/%d, ×%d)%s. Session: %s", n.From, peer, n.Text, n.Code, n.Subcode, n.Count, likely, s.State)})
		}
		if len(s.Notifications) == 0 {
			var who []string
			for _, o := range s.Opens {
				who = append(who, fmt.Sprintf("%s AS %d", o.From, o.AS))
			}
			text := fmt.Sprintf("BGP %s ↔ %s: %s", s.A, s.B, s.State)
			if len(who) > 0 {
				text += " (" + strings.Join(who, ", ") + ")"
			}
			sev := SeverityInfo
			if s.State != "Established" {
				sev = SeverityMajor
			}
			out = append(out, Finding{Severity: sev, Protocol: "BGP", Check: "bgp_session", Text: text})
		}
	}
	for _, h := range a.incompleteHandshakes() {
		if strings.HasSuffix(h.Server, ":"+strconv.Itoa(bgpPort)) {
			out = append(out, Finding{Severity: SeverityCritical, Protocol: "BGP", Check: "bgp_tcp_failed",
				Text: fmt.Sprintf("BGP cannot connect %s → %s: %s (no BGP listener for this peer, or a filter in the way)", h.Client, h.Server, h.State)})
		}
	}
	return out
}

// bgpLikelyFault says what a NOTIFICATION most often means in a lab.
func bgpLikelyFault(n BGPNotification, peerOpen BGPOpen, peer string) (severity, text string) {
	switch {
	case n.Code == 2 && n.Subcode == 2 && peerOpen.AS != 0:
		return SeverityCritical, fmt.Sprintf(" — %s announces AS %d in its OPEN, which is not the remote-as %s has configured for it: the likely fault is a wrong AS on one side", peer, peerOpen.AS, n.From)
	case n.Code == 2 && n.Subcode == 2:
		return SeverityCritical, " — the peer's AS is not the configured remote-as: the likely fault is a wrong AS on one side"
	case n.Code == 2 && n.Subcode == 3:
		return SeverityCritical, " — the router IDs clash or are invalid"
	case n.Code == 2 && n.Subcode == 6:
		return SeverityCritical, " — the hold time offered is refused (below 3 s but not 0)"
	case n.Code == 2:
		return SeverityCritical, " — the OPEN was refused, so the session cannot come up"
	case n.Code == 4:
		return SeverityCritical, " — keepalives stopped arriving within the hold time (the link, an MTU problem or a filter)"
	case n.Code == 6 && n.Subcode == 7:
		return SeverityInfo, " — both sides connected at once and one connection was closed; this is normal"
	case n.Code == 6 && n.Subcode == 5:
		return SeverityCritical, " — the peer refuses this connection (no neighbor statement for this address, or a wrong source address)"
	case n.Code == 6:
		return SeverityMajor, " — the session was closed on purpose or by a limit"
	}
	return SeverityCritical, ""
}
