package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/google/gopacket/layers"
)

// DHCPClient is one client's DHCP exchange as the link saw it: which of Discover, Offer,
// Request and ACK (or NAK) went by, and what it was offered and given.
type DHCPClient struct {
	Client string `json:"client"` // hardware address
	// Messages counts the message types seen ("DISCOVER": 3).
	Messages map[string]int `json:"messages"`
	Offered  string         `json:"offered,omitempty"`
	// Servers lists the servers that offered or answered.
	Servers  []string `json:"servers,omitempty"`
	Assigned string   `json:"assigned,omitempty"`
	Lease    uint32   `json:"lease_seconds,omitempty"`
	NAKBy    string   `json:"nak_by,omitempty"`
	// State says how far the last exchange got.
	State string `json:"state"`
}

type dhcpClientState struct {
	c     DHCPClient
	order int
	// last is the type of the newest message, which decides the state.
	last layers.DHCPMsgType
}

type dhcpState struct {
	clients map[string]*dhcpClientState
}

func isDHCPPort(p layers.UDPPort) bool { return p == 67 || p == 68 }

// onDHCP reads a DHCPv4 message.
func (a *Analyzer) onDHCP(p *packet, src, dst string) {
	var d layers.DHCPv4
	var err error
	payload := a.udp.Payload
	if len(payload) < 240 || int(payload[2]) > 16 {
		return
	}
	if !safely(func() { err = d.DecodeFromBytes(payload, nilFeedback{}) }) || err != nil {
		return
	}
	typ := layers.DHCPMsgTypeUnspecified
	var server, requested string
	var lease uint32
	for _, o := range d.Options {
		switch {
		case o.Type == layers.DHCPOptMessageType && len(o.Data) == 1:
			typ = layers.DHCPMsgType(o.Data[0])
		case o.Type == layers.DHCPOptServerID && len(o.Data) == 4:
			server = net.IP(o.Data).String()
		case o.Type == layers.DHCPOptRequestIP && len(o.Data) == 4:
			requested = net.IP(o.Data).String()
		case o.Type == layers.DHCPOptLeaseTime && len(o.Data) == 4:
			lease = binary.BigEndian.Uint32(o.Data)
		}
	}
	if typ == layers.DHCPMsgTypeUnspecified {
		return // BOOTP
	}
	p.proto = "DHCP"
	mac := d.ClientHWAddr.String()
	a.set("dhcp.option.message_type", strconv.Itoa(int(typ)))
	a.set("dhcp.hw.mac_addr", mac)
	a.set("dhcp.id", fmt.Sprintf("0x%08x", d.Xid))
	a.set("dhcp.ip.your", d.YourClientIP.String())
	a.set("dhcp.ip.client", d.ClientIP.String())
	a.set("dhcp.ip.relay", d.RelayAgentIP.String())
	if requested != "" {
		a.set("dhcp.option.requested_ip_address", requested)
	}
	if lease != 0 {
		a.set("dhcp.option.ip_address_lease_time", strconv.FormatUint(uint64(lease), 10))
	}
	if server != "" {
		a.set("dhcp.option.dhcp_server_id", server)
	}
	if a.describe {
		p.info = fmt.Sprintf("%s → %s DHCP %s client %s xid 0x%08x", src, dst, strings.ToUpper(typ.String()), mac, d.Xid)
		if !d.YourClientIP.IsUnspecified() {
			p.info += " your-ip " + d.YourClientIP.String()
		}
	}
	c := a.dhcpClient(mac)
	if c == nil {
		return
	}
	c.c.Messages[strings.ToUpper(typ.String())]++
	c.last = typ
	if server == "" && (typ == layers.DHCPMsgTypeOffer || typ == layers.DHCPMsgTypeAck || typ == layers.DHCPMsgTypeNak) {
		server = src
	}
	if server != "" && typ != layers.DHCPMsgTypeRequest && !contains(c.c.Servers, server) {
		c.c.Servers = append(c.c.Servers, server)
	}
	switch typ {
	case layers.DHCPMsgTypeOffer:
		c.c.Offered = d.YourClientIP.String()
	case layers.DHCPMsgTypeAck:
		c.c.Assigned, c.c.Lease = d.YourClientIP.String(), lease
	case layers.DHCPMsgTypeNak:
		c.c.NAKBy = server
	}
}

// nilFeedback lets a DHCP message be decoded outside a packet.
type nilFeedback struct{}

func (nilFeedback) SetTruncated() {}

func (a *Analyzer) dhcpClient(mac string) *dhcpClientState {
	return track(&a.dhcp.clients, mac, func(order int) *dhcpClientState {
		return &dhcpClientState{c: DHCPClient{Client: mac, Messages: map[string]int{}}, order: order}
	})
}

// dhcpStates words how far a client's exchange got from the newest message seen.
var dhcpStates = map[layers.DHCPMsgType]string{
	layers.DHCPMsgTypeDiscover: "Discover without Offer: no DHCP server answers on this segment (no server, or no relay to one)",
	layers.DHCPMsgTypeOffer:    "offered but never requested: the client did not take the offer (another server's, or it never arrived)",
	layers.DHCPMsgTypeRequest:  "Request without ACK or NAK: the server did not confirm",
	layers.DHCPMsgTypeAck:      "complete",
	layers.DHCPMsgTypeNak:      "refused (NAK): the server will not give the address asked for on this segment",
	layers.DHCPMsgTypeDecline:  "declined: the client found the offered address already in use",
	layers.DHCPMsgTypeRelease:  "released",
	layers.DHCPMsgTypeInform:   "inform (the client has an address and asks only for options)",
}

// DHCP summarises every client's exchange.
func (a *Analyzer) DHCP() []DHCPClient {
	cs := inOrder(a.dhcp.clients, func(c *dhcpClientState) int { return c.order })
	out := make([]DHCPClient, 0, len(cs))
	for _, c := range cs {
		v := c.c
		v.State = dhcpStates[c.last]
		if v.State == "" {
			v.State = "message type " + strconv.Itoa(int(c.last))
		}
		out = append(out, v)
	}
	return out
}

// dhcpFindings names exchanges that did not complete, and segments with two servers.
func (a *Analyzer) dhcpFindings() []Finding {
	var out []Finding
	for _, c := range a.DHCP() {
		dora := []string{}
		for _, t := range []string{"DISCOVER", "OFFER", "REQUEST", "ACK", "NAK"} {
			if n := c.Messages[t]; n > 0 {
				dora = append(dora, fmt.Sprintf("%s ×%d", t, n))
			}
		}
		seen := strings.Join(dora, ", ")
		switch {
		case c.State == "complete":
			out = append(out, Finding{Severity: SeverityInfo, Protocol: "DHCP", Check: "dhcp_complete",
				Text: fmt.Sprintf("client %s got %s from %s (lease %d s; %s)", c.Client, c.Assigned, listOf(c.Servers), c.Lease, seen)})
		case c.Messages["ACK"] > 0 && c.Messages["NAK"] == 0 && c.Messages["DECLINE"] == 0:
			// An earlier exchange completed; the newest (a renewal) is still going.
		default:
			sev := SeverityCritical
			if c.State == "released" || strings.HasPrefix(c.State, "inform") {
				sev = SeverityInfo
			}
			out = append(out, Finding{Severity: sev, Protocol: "DHCP", Check: "dhcp_incomplete",
				Text: fmt.Sprintf("client %s: %s (%s)", c.Client, c.State, seen)})
		}
		if len(c.Servers) > 1 {
			out = append(out, Finding{Severity: SeverityMajor, Protocol: "DHCP", Check: "dhcp_several_servers",
				Text: fmt.Sprintf("%d DHCP servers answer client %s: %s (one of them may be a rogue server)", len(c.Servers), c.Client, listOf(c.Servers))})
		}
	}
	return out
}
