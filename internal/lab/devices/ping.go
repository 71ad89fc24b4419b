package devices

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// What a traffic check needs of a platform: the IPv4 addresses its configuration gives its
// interfaces, a ping that ends by itself (or that the driver stops, vtysh's), and the replies
// read from what the ping printed.

// pingCommands are the pings of N echo requests, per platform; %[1]s is the address, %[2]d the
// count. vtysh's ping takes no count: it runs until the driver's interrupt (OpenEndedRun).
var pingCommands = map[string]string{
	"vpcs":              "ping %[1]s -c %[2]d",
	"cisco_ios":         "ping %[1]s repeat %[2]d",
	"arista_eos":        "ping %[1]s repeat %[2]d",
	"frr":               "ping %[1]s",
	"linux":             "ping -c %[2]d %[1]s",
	"openwrt":           "ping -c %[2]d %[1]s",
	"vyos":              "ping %[1]s count %[2]d",
	"juniper_junos":     "ping %[1]s count %[2]d",
	"huawei_vrp":        "ping -c %[2]d %[1]s",
	"mikrotik_routeros": "/ping %[1]s count=%[2]d",
}

// PingCommand is the platform's ping of count echo requests to addr; false when the copilot
// does not know how this platform pings.
func (p *Profile) PingCommand(addr netip.Addr, count int) (string, bool) {
	f, ok := pingCommands[p.Name]
	if !ok || !addr.Is4() || count < 1 {
		return "", false
	}
	return fmt.Sprintf(f, addr, count), true
}

// PingResult is what a ping printed, read: how many echo requests got a reply, and the round
// trip of each reply (empty when the platform prints only a summary without them).
type PingResult struct {
	// Sent is how many echo requests went out, 0 when the output does not say.
	Sent    int
	Replies int
	RTTs    []time.Duration
	// Read is false when the output is not one of a ping the parser knows.
	Read bool
}

var (
	// "time=0.144 ms" (VPCS, iputils, BusyBox, Junos, VRP), "time<1 ms" (rounded down).
	pingReplyTime = regexp.MustCompile(`(?i)\btime\s*([=<])\s*([0-9]+(?:\.[0-9]+)?)\s*ms\b`)
	// IOS: "Success rate is 80 percent (4/5), round-trip min/avg/max = 1/2/4 ms".
	iosSuccess = regexp.MustCompile(`Success rate is \d+ percent \((\d+)/(\d+)\)(?:, round-trip min/avg/max = ([0-9.]+)/([0-9.]+)/([0-9.]+) ms)?`)
	// RouterOS: one line per request, the time last ("0 10.0.0.2 56 64 1ms403us"), or "timeout".
	rosReplyTime = regexp.MustCompile(`(?m)^\s*\d+\s+\S+\s+\d+\s+\d+\s+(?:(\d+)ms)?(?:(\d+)us)?\s*$`)
)

// ParsePing reads a ping's output.
func ParsePing(output string) PingResult {
	r := parsePing(output)
	if r.Read && r.Sent == 0 {
		r.Sent = pingSent(output)
	}
	return r
}

var (
	transmitted = regexp.MustCompile(`(\d+) packets transmitted|\bsent=(\d+)`)
	icmpSeq     = regexp.MustCompile(`icmp_seq=\d+`)
)

// pingSent reads how many requests went out: the statistics line, else one line per request.
func pingSent(output string) int {
	if m := transmitted.FindStringSubmatch(output); m != nil {
		n, _ := strconv.Atoi(m[1] + m[2])
		return n
	}
	return len(icmpSeq.FindAllString(output, -1))
}

func parsePing(output string) PingResult {
	if m := iosSuccess.FindStringSubmatch(output); m != nil {
		r := PingResult{Read: true}
		r.Replies, _ = strconv.Atoi(m[1])
		r.Sent, _ = strconv.Atoi(m[2])
		if m[4] != "" && r.Replies > 0 {
			r.RTTs = append(r.RTTs, millis(m[4])) // IOS prints only the summary: the average stands for all
		}
		return r
	}
	if ms := pingReplyTime.FindAllStringSubmatch(output, -1); len(ms) > 0 {
		r := PingResult{Read: true, Replies: len(ms)}
		for _, m := range ms {
			r.RTTs = append(r.RTTs, millis(m[2]))
		}
		return r
	}
	if ms := rosReplyTime.FindAllStringSubmatch(output, -1); len(ms) > 0 {
		r := PingResult{Read: true, Replies: len(ms)}
		for _, m := range ms {
			msPart, _ := strconv.Atoi(m[1])
			usPart, _ := strconv.Atoi(m[2])
			r.RTTs = append(r.RTTs, time.Duration(msPart)*time.Millisecond+time.Duration(usPart)*time.Microsecond)
		}
		return r
	}
	// Nothing came back: VPCS prints "… timeout", iputils "100% packet loss", RouterOS "timeout".
	if noReply.MatchString(output) {
		return PingResult{Read: true}
	}
	return PingResult{}
}

var noReply = regexp.MustCompile(`(?i)\btimeout\b|100(?:\.0+)?% packet loss|not reachable|unreachable|request timed out`)

func millis(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Millisecond))
}

// Address is an IPv4 address a device's configuration gives one of its interfaces, with the
// configuration line it was read from (on sectioned platforms prefixed with its interface), which
// tells the interface.
type Address struct {
	Prefix netip.Prefix
	Line   string
}

// Addressing is what a device's configuration, as its ConfigCommand printed it, says of its
// IPv4 addressing: its interfaces' addresses and, on a PC, its default gateway.
type Addressing struct {
	Addresses []Address
	Gateway   netip.Addr
}

var (
	// An address after "address" or "inet" (IOS, FRR, VRP, VyOS, Junos, RouterOS, "ip -o addr"),
	// with its length or its dotted mask.
	addressWord = regexp.MustCompile(`(?i)\b(?:address|inet)\b[^0-9\n]*?'?(\d{1,3}(?:\.\d{1,3}){3})(?:/(\d{1,2})\b|\s+(\d{1,3}(?:\.\d{1,3}){3})\b|\s+(\d{1,2})\b)`)
	// "ip -br addr": "eth0  UP  10.0.0.1/24 fe80::…/64".
	briefState = map[string]bool{"UP": true, "DOWN": true, "UNKNOWN": true, "LOWERLAYERDOWN": true, "DORMANT": true}
	uciAddress = regexp.MustCompile(`^(network\.[^.=]+)\.(ipaddr|netmask)='?([0-9./]+)'?$`)
)

// Addressing reads the addresses from a configuration read with the platform's ConfigCommand.
func (p *Profile) Addressing(output string) Addressing {
	var a Addressing
	switch p.Name {
	case "vpcs":
		cfg := p.ConfigLines(output)
		if ip, ok := vpcsField(cfg, "IP/MASK"); ok {
			if pre, err := netip.ParsePrefix(ip); err == nil && !pre.Addr().IsUnspecified() {
				a.Addresses = append(a.Addresses, Address{Prefix: pre, Line: "IP/MASK : " + ip})
			}
		}
		if gw, ok := vpcsField(cfg, "GATEWAY"); ok {
			if g, err := netip.ParseAddr(gw); err == nil && !g.IsUnspecified() {
				a.Gateway = g
			}
		}
		return a
	case "openwrt":
		return uciAddressing(p.ConfigLines(output))
	}
	for _, line := range p.ConfigLines(output) {
		if f := strings.Fields(line); p.Name == "linux" && len(f) > 2 && briefState[f[1]] {
			for _, tok := range f[2:] {
				if pre, err := netip.ParsePrefix(tok); err == nil && pre.Addr().Is4() {
					a.Addresses = append(a.Addresses, Address{Prefix: pre, Line: line})
				}
			}
			continue
		}
		for _, m := range addressWord.FindAllStringSubmatch(line, -1) {
			if pre, ok := prefixOf(m[1], m[2], m[3], m[4]); ok {
				a.Addresses = append(a.Addresses, Address{Prefix: pre, Line: line})
			}
		}
	}
	return a
}

// prefixOf builds an interface address from an address and its length, dotted mask or bare
// length; false for what is no interface address (0.0.0.0, a mask that is not contiguous).
func prefixOf(addr, length, mask, bare string) (netip.Prefix, bool) {
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is4() || ip.IsUnspecified() {
		return netip.Prefix{}, false
	}
	bits := -1
	switch {
	case length != "":
		bits, _ = strconv.Atoi(length)
	case bare != "":
		bits, _ = strconv.Atoi(bare)
	case mask != "":
		m := net.ParseIP(mask).To4()
		if m == nil {
			return netip.Prefix{}, false
		}
		ones, size := net.IPMask(m).Size()
		if size != 32 {
			return netip.Prefix{}, false
		}
		bits = ones
	}
	if bits < 0 || bits > 32 {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(ip, bits), true
}

// uciAddressing pairs each network interface's ipaddr with its netmask ("uci show").
func uciAddressing(cfg []string) Addressing {
	type iface struct{ addr, mask string }
	byName := map[string]*iface{}
	var order []string
	for _, l := range cfg {
		m := uciAddress.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		i := byName[m[1]]
		if i == nil {
			i = &iface{}
			byName[m[1]] = i
			order = append(order, m[1])
		}
		if m[2] == "ipaddr" {
			i.addr = m[3]
		} else {
			i.mask = m[3]
		}
	}
	var a Addressing
	for _, name := range order {
		i := byName[name]
		addr, length, _ := strings.Cut(i.addr, "/")
		if pre, ok := prefixOf(addr, length, i.mask, ""); ok && (length != "" || i.mask != "") {
			a.Addresses = append(a.Addresses, Address{Prefix: pre, Line: name + ".ipaddr=" + i.addr})
		}
	}
	return a
}

// NamesInterface reports whether an address's line names the interface a GNS3 port is called
// (as a whole word: "eth0" is not "eth0.10").
func (a Address) NamesInterface(names ...string) bool {
	for _, n := range names {
		if n == "" {
			continue
		}
		re := regexp.MustCompile(`(?i)(^|[^\w/.])` + regexp.QuoteMeta(n) + `($|[^\w/.])`)
		if re.MatchString(a.Line) {
			return true
		}
	}
	return false
}

// CanPing reports whether the copilot knows how the platform pings.
func (p *Profile) CanPing() bool {
	_, ok := pingCommands[p.Name]
	return ok
}
