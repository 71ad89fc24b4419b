package skills

import (
	"hash/fnv"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
)

// Difficulties and severities of a scenario, as GNS3's skills define them.
var (
	Difficulties = []string{"beginner", "intermediate", "advanced"}
	severities   = []string{"low", "medium", "high", "critical"}
)

// Scenario is one fault of an injection file: what it is, how bad and how hard, the symptoms
// a student will see, and hints from the first to the most telling, which an exercise that
// injects it gives in that order.
type Scenario struct {
	// ID is "<file name>/<issue key>", e.g. "ospf_issues/ospf_area_mismatch".
	ID            string
	Name          string
	Description   string
	Severity      string
	Difficulty    string
	Protocols     []string
	Symptoms      []string
	Hints         []string
	Applicability string
	// Platforms are the console profiles the fault can be made on: the file's own list when
	// it has one (an addition of ours to the format), else those that run its protocols.
	Platforms []string
}

// injectionFile reads one injection file's issues into scenarios.
func (l *loader) injectionFile(rel string, root *yaml.Node) {
	l.required(rel, root, root, "the file", "name", "description")
	issues := field(root, "issues")
	if issues == nil || issues.Kind != yaml.MappingNode {
		l.badAt(rel, root, "has no issues mapping (issue_key: {name, description, …})")
		return
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(path.Base(rel), ".yaml"), ".yml")
	fileProtocols, _ := stringList(root, "protocols")
	for i := 0; i+1 < len(issues.Content); i += 2 {
		key, n := issues.Content[i], issues.Content[i+1]
		what := "issue " + key.Value
		if n.Kind != yaml.MappingNode {
			l.badAt(rel, n, "%s must be a mapping of name, description, …", what)
			continue
		}
		complete := l.required(rel, n, key, what, "name", "description")
		if sc, ok := l.scenario(rel, n, stem+"/"+key.Value, what, fileProtocols); ok && complete {
			l.set.Scenarios = append(l.set.Scenarios, sc)
		}
	}
}

func (l *loader) scenario(rel string, n *yaml.Node, id, what string, fileProtocols []string) (Scenario, bool) {
	sc := Scenario{ID: id}
	sc.Name, _ = text(n, "name")
	sc.Description, _ = text(n, "description")
	sc.Applicability, _ = text(n, "applicability")
	ok := true
	for _, f := range []struct {
		key     string
		into    *string
		allowed []string
	}{{"severity", &sc.Severity, severities}, {"difficulty", &sc.Difficulty, Difficulties}} {
		v, scalar := text(n, f.key)
		*f.into = strings.ToLower(v)
		if !scalar || (v != "" && !slices.Contains(f.allowed, *f.into)) {
			l.badAt(rel, fieldOr(n, f.key), "%s: %s must be one of %s", what, f.key, strings.Join(f.allowed, ", "))
			ok = false
		}
	}
	lists := []struct {
		keys []string
		into *[]string
	}{{[]string{"protocols"}, &sc.Protocols}, {[]string{"symptoms"}, &sc.Symptoms},
		// Some files name their hints troubleshooting_hint or troubleshooting_hooks.
		{[]string{"troubleshooting_hints", "troubleshooting_hint", "troubleshooting_hooks"}, &sc.Hints}, {[]string{"platforms"}, &sc.Platforms}}
	for _, f := range lists {
		for _, k := range f.keys {
			v, isList := stringList(n, k)
			if !isList {
				l.badAt(rel, field(n, k), "%s: %s must be a list of text", what, k)
				ok = false
			}
			*f.into = append(*f.into, v...)
		}
	}
	for _, p := range sc.Platforms {
		if _, err := devices.ProfileByName(p); err != nil {
			l.badAt(rel, field(n, "platforms"), "%s: unknown platform %q", what, p)
			ok = false
		}
	}
	if len(sc.Protocols) == 0 {
		sc.Protocols = fileProtocols
	}
	if len(sc.Platforms) == 0 {
		sc.Platforms = platformsFor(sc.Protocols)
	}
	return sc, ok
}

func fieldOr(n *yaml.Node, key string) *yaml.Node {
	if f := field(n, key); f != nil {
		return f
	}
	return n
}

// Protocols each platform can be broken in, for scenarios that name no platforms. The
// network operating systems run nearly everything a lab uses; FRR, VyOS, RouterOS and
// OpenWrt what their routing suites and shells hold; the hosts only their own addressing.
var (
	generalProtocols = []string{"ip", "ipv4", "ipv6", "routing", "route", "static", "interface", "icmp", "arp"}
	hostProtocols    = []string{"ip", "ipv4", "ipv6", "dhcp", "dns", "icmp", "arp", "interface"}
	platformRuns     = map[string][]string{
		"vpcs":  hostProtocols,
		"linux": append(slices.Clone(hostProtocols), "nat", "static", "route", "routing", "ntp", "ssh", "snmp", "syslog"),
		"frr": append(slices.Clone(generalProtocols), "ospf", "ospfv2", "ospfv3", "bgp", "ebgp", "ibgp", "mpbgp", "isis", "rip", "ripng",
			"bfd", "pim", "multicast", "ldp", "mpls", "vrrp", "eigrp", "pbr", "vrf", "evpn", "vxlan", "nhrp", "routing_policy", "route_map", "prefix_list"),
		"vyos": append(slices.Clone(generalProtocols), "ospf", "ospfv2", "ospfv3", "bgp", "ebgp", "ibgp", "rip", "bfd", "vrrp", "nat", "dhcp",
			"dns", "ipsec", "vpn", "pbr", "vrf", "qos", "firewall", "acl", "ntp", "snmp", "syslog", "vlan"),
		"mikrotik_routeros": append(slices.Clone(generalProtocols), "ospf", "ospfv2", "ospfv3", "bgp", "ebgp", "ibgp", "rip", "vrrp", "nat",
			"dhcp", "dns", "ipsec", "vpn", "firewall", "vlan", "stp", "rstp", "snmp", "ntp", "qos"),
		"openwrt": append(slices.Clone(hostProtocols), "nat", "firewall", "vlan", "static", "route", "routing"),
	}
	// fullNOS are the platforms that run every protocol but those no lab image of theirs has.
	fullNOS       = []string{"cisco_ios", "arista_eos", "juniper_junos", "huawei_vrp", "ruijie"}
	notOnLabNOS   = []string{"wireless", "sdwan", "packet_filter", "performance"}
	protocolWords = regexp.MustCompile(`[^a-z0-9]+`)
)

// platformsFor lists the platforms that run every one of a scenario's protocols.
func platformsFor(protocols []string) []string {
	var tags []string
	for _, p := range protocols {
		if t := strings.Trim(protocolWords.ReplaceAllString(strings.ToLower(p), "_"), "_"); t != "" {
			tags = append(tags, t)
		}
	}
	if len(tags) == 0 {
		return nil
	}
	var out []string
	for _, nos := range fullNOS {
		if !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(notOnLabNOS, t) }) {
			out = append(out, nos)
		}
	}
	for _, name := range []string{"frr", "vyos", "mikrotik_routeros", "openwrt", "linux", "vpcs"} {
		runs := platformRuns[name]
		if !slices.ContainsFunc(tags, func(t string) bool { return !slices.Contains(runs, t) }) {
			out = append(out, name)
		}
	}
	return out
}

// Choice is what an injection turn may choose from: the lab's platforms, the difficulty asked
// for ("" for any), and the scenarios the student already had.
type Choice struct {
	Platforms  []string
	Difficulty string
	Had        []string
	// Seed orders the candidates, so a retried model call is offered the same ones.
	Seed string
	Max  int
}

// Choose returns up to c.Max scenarios that run on one of the lab's platforms, have the
// difficulty asked for, and the student never had; in an order fixed by the seed, so the
// turn's offer varies from turn to turn but not between retries.
func (s *Set) Choose(c Choice) []Scenario {
	var out []Scenario
	for _, sc := range s.Scenarios {
		if c.Difficulty != "" && sc.Difficulty != c.Difficulty {
			continue
		}
		if slices.Contains(c.Had, sc.ID) {
			continue
		}
		if !slices.ContainsFunc(sc.Platforms, func(p string) bool { return slices.Contains(c.Platforms, p) }) {
			continue
		}
		out = append(out, sc)
	}
	h := fnv.New64a()
	h.Write([]byte(c.Seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if c.Max > 0 && len(out) > c.Max {
		out = out[:c.Max]
	}
	return out
}

// Scenario finds a scenario by its ID.
func (s *Set) Scenario(id string) (Scenario, bool) {
	for _, sc := range s.Scenarios {
		if sc.ID == id {
			return sc, true
		}
	}
	return Scenario{}, false
}

// ByDifficulty counts the scenarios of each difficulty ("unspecified" for those with none).
func (s *Set) ByDifficulty() map[string]int {
	out := map[string]int{"unspecified": 0}
	for _, d := range Difficulties {
		out[d] = 0
	}
	for _, sc := range s.Scenarios {
		d := sc.Difficulty
		if d == "" {
			d = "unspecified"
		}
		out[d]++
	}
	return out
}

// difficultyWords are how a message (or GNS3's dialog) may ask for a difficulty.
var difficultyWords = map[string]*regexp.Regexp{
	"beginner":     regexp.MustCompile(`(?i)\b(beginner|easy|basic|simple)\b`),
	"intermediate": regexp.MustCompile(`(?i)\b(intermediate|medium|moderate)\b`),
	"advanced":     regexp.MustCompile(`(?i)\b(advanced|hard|difficult|expert|tricky)\b`),
}

// RequestedDifficulty reads the difficulty a message asks for ("" when it names none, or
// names several).
func RequestedDifficulty(message string) string {
	found := ""
	for _, d := range Difficulties {
		if difficultyWords[d].MatchString(message) {
			if found != "" {
				return ""
			}
			found = d
		}
	}
	return found
}
