package capture

import (
	"fmt"
	"net"
	"sort"
	"strings"
)

// Severities of a finding, most serious first. A critical finding is a fault that keeps a
// protocol from working (no adjacency, a session refused); major is one that degrades it or
// is likely to; minor is worth knowing; info describes what the protocol shows.
const (
	SeverityCritical = "critical"
	SeverityMajor    = "major"
	SeverityMinor    = "minor"
	SeverityInfo     = "info"
)

var severityRank = map[string]int{SeverityCritical: 0, SeverityMajor: 1, SeverityMinor: 2, SeverityInfo: 3}

// Finding is one thing the capture shows that a person troubleshooting the link should know,
// in words.
type Finding struct {
	Severity string `json:"severity"`
	Protocol string `json:"protocol"`
	// Check names the check that found it, e.g. "ospf_hello_mismatch"; checks from a skills
	// directory are named "<file>:<check>".
	Check string `json:"check"`
	Text  string `json:"text"`
}

// findings gathers what every protocol's analysis found, the most serious first (in the
// order they were found within a severity).
func (a *Analyzer) findings() []Finding {
	var out []Finding
	out = append(out, a.ospfFindings()...)
	out = append(out, a.bgpFindings()...)
	out = append(out, a.stpFindings()...)
	out = append(out, a.dhcpFindings()...)
	out = append(out, a.vrrpFindings()...)
	out = append(out, a.discoveryFindings()...)
	out = append(out, a.anomalyFindings()...)
	out = append(out, a.checks.findings()...)
	sort.SliceStable(out, func(i, j int) bool { return severityRank[out[i].Severity] < severityRank[out[j].Severity] })
	if len(out) > maxFindings {
		more := len(out) - maxFindings + 1
		out = append(out[:maxFindings-1], Finding{Severity: SeverityInfo, Protocol: "capture", Check: "more_findings",
			Text: fmt.Sprintf("… and %d more findings", more)})
	}
	if out == nil {
		out = []Finding{}
	}
	return out
}

// anomalyFindings words the ARP, ICMP and TCP lists as findings, so the text leads with them
// too; the lists themselves follow in the counts.
func (a *Analyzer) anomalyFindings() []Finding {
	var out []Finding
	for _, q := range a.unansweredARP() {
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "ARP", Check: "arp_no_reply",
			Text: fmt.Sprintf("nobody answered ARP for %s (%s asked %d time(s)): the address is not on this segment, or its host is down", q.Target, q.AskedBy, q.Requests)})
	}
	for _, u := range a.unreachables() {
		text := fmt.Sprintf("%s reports %s to %s", u.From, u.Reason, u.To)
		if u.Original != "" {
			text += " for " + u.Original
		}
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "ICMP", Check: "icmp_unreachable", Text: text})
	}
	for _, g := range a.echoesWithoutReply() {
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "ICMP", Check: "echo_without_reply",
			Text: fmt.Sprintf("%d of %d echo requests from %s to %s got no reply on this link", g.Unanswered, g.Requests, g.From, g.To)})
	}
	for _, h := range a.incompleteHandshakes() {
		out = append(out, Finding{Severity: SeverityMajor, Protocol: "TCP", Check: "tcp_handshake_incomplete",
			Text: fmt.Sprintf("TCP %s → %s never connected: %s", h.Client, h.Server, h.State)})
	}
	if a.resets.n > 0 {
		out = append(out, Finding{Severity: SeverityMinor, Protocol: "TCP", Check: "tcp_reset", Text: fmt.Sprintf("%d TCP reset(s)", a.resets.n)})
	}
	return out
}

// track finds the record of k in *m, or starts one with start (given its order of arrival);
// nil once maxProtocolPeers are tracked, so a flood of senders cannot grow the analysis.
func track[K comparable, V any](m *map[K]*V, k K, start func(order int) *V) *V {
	if *m == nil {
		*m = map[K]*V{}
	}
	if v, ok := (*m)[k]; ok {
		return v
	}
	if len(*m) >= maxProtocolPeers {
		return nil
	}
	v := start(len(*m))
	(*m)[k] = v
	return v
}

// inOrder lists a map's values in the order they were first seen, which order gives.
func inOrder[K comparable, V any](m map[K]V, order func(V) int) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return order(out[i]) < order(out[j]) })
	return out
}

// ipv4 renders a 32-bit value (router IDs, areas, masks) in dotted form.
func ipv4(v uint32) string {
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).String()
}

// listOf joins words as a person would: "a", "a and b", "a, b and c".
func listOf(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
