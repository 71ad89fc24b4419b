package capture

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Check is a protocol check a skills directory gives the analysis (a packet-analysis file's
// "checks" entry, in tshark's field names): its condition is tested on every packet, and a
// packet that meets it counts as the check's finding, worded by Message with the packet's
// fields ({ip.src}) and the number of matches ({count}) filled in.
type Check struct {
	// Source names where the check comes from, e.g. "packet_analysis/ospf.yaml".
	Source    string
	Name      string
	Severity  string // critical, major, minor (anything else counts as minor)
	Message   string
	Condition string
}

// SkippedCheck is a check the analysis cannot evaluate, and why.
type SkippedCheck struct {
	Check  Check
	Reason string
}

// DecodedFields lists the fields (in tshark's names) this package reads from packets: a
// check's condition and message may use these.
var DecodedFields = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`eth.src eth.dst ip.src ip.dst ipv6.src ipv6.dst
		arp.opcode arp.src.proto_ipv4 arp.dst.proto_ipv4 arp.src.hw_mac arp.dst.hw_mac
		icmp.type icmp.code icmp.seq icmp.ident icmpv6.type icmpv6.code
		tcp.srcport tcp.dstport tcp.flags.syn tcp.flags.ack tcp.flags.reset tcp.flags.fin udp.srcport udp.dstport
		ospf.msg ospf.version ospf.srcrouter ospf.area_id ospf.auth.type ospf.hello.network_mask ospf.hello.hello_interval
		ospf.hello.router_dead_interval ospf.hello.active_neighbor ospf.db.interface_mtu
		bgp.type bgp.open.myas bgp.open.holdtime bgp.open.identifier bgp.notify.major_error bgp.notify.minor_error
		stp.type stp.version stp.flags.tc stp.root.hw stp.root.prio stp.root.cost stp.bridge.hw stp.bridge.prio stp.hello stp.max_age stp.forward
		dhcp.option.message_type dhcp.hw.mac_addr dhcp.id dhcp.ip.your dhcp.ip.client dhcp.ip.relay dhcp.option.requested_ip_address
		dhcp.option.ip_address_lease_time dhcp.option.dhcp_server_id
		vrrp.version vrrp.type vrrp.virt_rtr_id vrrp.prio
		lldp.tlv.system.name lldp.port.id lldp.time_to_live cdp.deviceid cdp.portid cdp.platform cdp.native_vlan cdp.duplex`) {
		DecodedFields[f] = true
	}
}

// ordinaryMessages are field values every healthy exchange carries (every hello, every SYN):
// a condition that tests only these selects all traffic of a kind, and its file describes the
// fault in words, which a per-packet test cannot check. The built-in analysis covers them.
var ordinaryMessages = map[string][]string{
	"ospf.msg": {"1", "2", "3", "4", "5"}, "bgp.type": {"1", "2", "4", "5"},
	"dhcp.option.message_type": {"1", "2", "3", "5", "7", "8"}, "icmp.type": {"0", "8"},
	"icmpv6.type": {"128", "129", "133", "134", "135", "136"}, "tcp.flags.syn": {"1"}, "tcp.flags.ack": {"1"},
	"arp.opcode": {"1", "2"}, "vrrp.type": {"1"}, "stp.type": {"0", "2"},
}

// condition is one comparison of a check: field op value, or field op field.
type condition struct {
	field, op, value string
	other            string // a second field, instead of value
}

type compiledCheck struct {
	Check
	conds  []condition
	fields []string // every field the check reads
}

var (
	conditionTerm = regexp.MustCompile(`^([a-z][a-z0-9_.]*)\s*(==|!=|>=|<=|>|<)\s*(.+)$`)
	fieldName     = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$`)
	placeholder   = regexp.MustCompile(`\{([a-z][a-z0-9_.]*)\}`)
)

// CompileChecks splits checks into those the analysis can evaluate and those it cannot (no
// condition, a condition it does not parse, a field it does not decode, or a condition that
// only selects ordinary traffic).
func CompileChecks(checks []Check) (usable []Check, skipped []SkippedCheck) {
	for _, c := range checks {
		if _, reason := compileCheck(c); reason != "" {
			skipped = append(skipped, SkippedCheck{Check: c, Reason: reason})
			continue
		}
		usable = append(usable, c)
	}
	return usable, skipped
}

func compileCheck(c Check) (compiledCheck, string) {
	cc := compiledCheck{Check: c}
	cond := strings.TrimSpace(c.Condition)
	if cond == "" || cond == "null" {
		return cc, "it has no condition (its fault is described in words only)"
	}
	if !simpleCondition(cond) {
		return cc, "its condition uses more than comparisons joined by \"and\""
	}
	ordinary := true
	for _, term := range strings.Split(cond, " and ") {
		term = strings.TrimSpace(term)
		m := conditionTerm.FindStringSubmatch(term)
		var cn condition
		switch {
		case m != nil:
			cn = condition{field: m[1], op: m[2]}
			rhs := strings.Trim(strings.TrimSpace(m[3]), `"'`)
			if fieldName.MatchString(rhs) && !isNumber(rhs) {
				cn.other = rhs
			} else {
				cn.value = rhs
			}
		case fieldName.MatchString(term):
			cn = condition{field: term, op: "present"}
		default:
			return cc, fmt.Sprintf("its condition %q does not parse", cond)
		}
		cc.conds = append(cc.conds, cn)
		ordinary = ordinary && (cn.op == "present" || (cn.op == "==" && cn.other == "" && contains(ordinaryMessages[cn.field], cn.value)))
	}
	if ordinary {
		return cc, "its condition only selects ordinary traffic (every packet of a kind); the analysis's own checks cover it"
	}
	seen := map[string]bool{}
	for _, cn := range cc.conds {
		for _, f := range []string{cn.field, cn.other} {
			if f != "" && !seen[f] {
				seen[f] = true
				cc.fields = append(cc.fields, f)
			}
		}
	}
	for _, m := range placeholder.FindAllStringSubmatch(c.Message, -1) {
		if m[1] != "count" && !seen[m[1]] {
			seen[m[1]] = true
			cc.fields = append(cc.fields, m[1])
		}
	}
	for _, f := range cc.fields {
		if !DecodedFields[f] {
			return cc, fmt.Sprintf("it needs the field %s, which this analysis does not decode", f)
		}
	}
	return cc, ""
}

// simpleCondition tells a condition made only of comparisons joined by "and": no "or", no
// grouping, no negation other than "!=".
func simpleCondition(cond string) bool {
	if strings.Contains(cond, " or ") || strings.ContainsAny(cond, "()&|") {
		return false
	}
	return !strings.Contains(strings.ReplaceAll(cond, "!=", ""), "!")
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// holds tests the check on one packet's fields; a field the packet lacks fails the test.
func (cc *compiledCheck) holds(fields map[string]string) bool {
	for _, cn := range cc.conds {
		v, ok := fields[cn.field]
		if !ok {
			return false
		}
		if cn.op == "present" {
			if v == "" || v == "0" || v == "0.0.0.0" || v == "::" {
				return false
			}
			continue
		}
		want := cn.value
		if cn.other != "" {
			if want, ok = fields[cn.other]; !ok {
				return false
			}
		}
		if !compare(v, cn.op, want) {
			return false
		}
	}
	return true
}

// compare compares numerically when both sides are numbers (tshark's hex too), else as text.
func compare(a, op, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		xi, e1 := strconv.ParseInt(a, 0, 64)
		yi, e2 := strconv.ParseInt(b, 0, 64)
		if e1 != nil || e2 != nil {
			switch op {
			case "==":
				return strings.EqualFold(a, b)
			case "!=":
				return !strings.EqualFold(a, b)
			}
			return false
		}
		x, y = float64(xi), float64(yi)
	}
	switch op {
	case "==":
		return x == y
	case "!=":
		return x != y
	case ">":
		return x > y
	case "<":
		return x < y
	case ">=":
		return x >= y
	case "<=":
		return x <= y
	}
	return false
}

// checkHit is what a check found: how many packets met it, and its message worded from the
// first of them.
type checkHit struct {
	count   int
	message string
	order   int
}

// checkState evaluates a skills directory's checks as packets pass; with none, packets carry
// no field map and cost nothing extra.
type checkState struct {
	checks []compiledCheck
	fields map[string]string
	hits   map[int]*checkHit // by index in checks
}

func (c *checkState) use(checks []Check) {
	for _, ch := range checks {
		if cc, reason := compileCheck(ch); reason == "" {
			c.checks = append(c.checks, cc)
		}
	}
	if len(c.checks) > 0 {
		c.fields, c.hits = map[string]string{}, map[int]*checkHit{}
	}
}

// set records a field of the packet being classified, for the checks.
func (a *Analyzer) set(field, value string) {
	if a.checks.fields != nil {
		a.checks.fields[field] = value
	}
}

func (c *checkState) begin() {
	if c.fields != nil {
		clear(c.fields)
	}
}

func (c *checkState) evaluate(p packet) {
	if c.fields == nil || len(c.fields) == 0 {
		return
	}
	for i := range c.checks {
		cc := &c.checks[i]
		if !cc.holds(c.fields) {
			continue
		}
		h := c.hits[i]
		if h == nil {
			h = &checkHit{message: c.word(cc.Message), order: len(c.hits)}
			c.hits[i] = h
		}
		h.count++
	}
}

// word fills a message's placeholders from the packet's fields; {count} is filled in when the
// finding is reported.
func (c *checkState) word(msg string) string {
	return placeholder.ReplaceAllStringFunc(msg, func(ph string) string {
		name := ph[1 : len(ph)-1]
		if name == "count" {
			return ph
		}
		if v, ok := c.fields[name]; ok {
			return v
		}
		return "?"
	})
}

func (c *checkState) findings() []Finding {
	idx := make([]int, 0, len(c.hits))
	for i := range c.hits {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(x, y int) bool { return c.hits[idx[x]].order < c.hits[idx[y]].order })
	var out []Finding
	for _, i := range idx {
		cc, h := c.checks[i], c.hits[i]
		sev := strings.ToLower(cc.Severity)
		if sev != SeverityCritical && sev != SeverityMajor {
			sev = SeverityMinor
		}
		text := strings.ReplaceAll(h.message, "{count}", strconv.Itoa(h.count))
		if !strings.Contains(cc.Message, "{count}") && h.count > 1 {
			text += fmt.Sprintf(" (×%d)", h.count)
		}
		proto := strings.ToUpper(strings.SplitN(cc.fields[0], ".", 2)[0])
		out = append(out, Finding{Severity: sev, Protocol: proto, Check: cc.Source + ":" + cc.Name, Text: text})
	}
	return out
}
