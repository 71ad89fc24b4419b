package devices

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Verdict is what a device's configuration, read back, says of one line that was sent.
type Verdict int

// A read-back either shows a line in effect, shows that it is not, or cannot tell (a line that
// leaves no trace of its own in the configuration, an abbreviation the device expands).
const (
	VerdictUnknown Verdict = iota
	VerdictTook
	VerdictNotTook
)

func (v Verdict) String() string {
	switch v {
	case VerdictTook:
		return "took"
	case VerdictNotTook:
		return "not_took"
	}
	return "unknown"
}

// readBack is how a platform's configuration is read and compared; it lives beside the
// profile so each platform says how its configuration looks.
type readBack struct {
	// command prints the configuration ("" when the platform has none to read).
	command string
	// noise matches lines that change without anyone configuring anything (timestamps, byte
	// counts, separators); they are left out of diffs.
	noise *regexp.Regexp
	// sections: indented lines belong to the unindented line above them (IOS-style).
	sections bool
	// verify judges one sent line against the configuration read after it.
	verify func(line string, cfg []string) Verdict
	// mark is what only this platform's configuration shows, where several platforms print
	// theirs with the same command.
	mark *regexp.Regexp
	// rewrite, when set, drops what changes by itself from each line before it is compared.
	rewrite func(line string) string
}

var readBacks = func() map[string]readBack {
	re := regexp.MustCompile
	ciscoNoise := re(`^(!.*|Building configuration.*|Current configuration.*|end|ntp clock-period .*)$`)
	ios := readBack{command: "show running-config", noise: ciscoNoise, sections: true, verify: verifyVerbatim}
	return map[string]readBack{
		"vpcs":          {command: "show ip", verify: verifyVPCS},
		"cisco_ios":     ios,
		"ruijie":        ios,
		"arista_eos":    ios,
		"huawei_vrp":    {command: "display current-configuration", noise: re(`^(#|!.*|return)$`), sections: true, verify: verifyVerbatim},
		"juniper_junos": {command: "show configuration | display set", noise: re(`^(## .*|)$`), verify: verifyVerbatim},
		// vtysh closes a section with "exit" (unindented), FRR 7.5 and older with "!".
		"frr": {command: "show running-config", sections: true, verify: verifyFRR, mark: re(`(?m)^frr (version|defaults) `),
			noise: re(`^(!.*|Building configuration.*|Current configuration.*|end|exit|exit-address-family|exit-vrf|frr version .*|frr defaults .*)$`)},
		"vyos":              {command: "show configuration commands", verify: verifyQuoted},
		"mikrotik_routeros": {command: "/export terse", noise: re(`^#.*$`), verify: verifyRouterOS},
		"openwrt":           {command: "uci show", verify: verifyUCI},
		// A host's "configuration" is its addresses and routes.
		"linux": {command: shellReadBack, verify: verifyShell, rewrite: shellConfigLine},
	}
}()

// sectionOpeners are IOS-family lines that enter a configuration sub-mode; entering one again
// changes nothing.
var sectionOpeners = regexp.MustCompile(`(?i)^\s*(interface|router|line|vlan|ip access-list|ipv6 access-list|route-map|class-map|policy-map|key chain|controller|address-family|vrf definition|ip vrf|vrf|bfd|segment-routing|mpls ldp)\b`)

// ResumeContext returns the line to send again before resuming a configuration after done
// lines (cut short by a crash), so a line meant for a section does not land at the top level:
// the last section opener among them. Only platforms with sectioned configuration have one.
func (p *Profile) ResumeContext(done []string) (string, bool) {
	if p.ConfigEnter == "" || !readBacks[p.Name].sections {
		return "", false
	}
	for i := len(done) - 1; i >= 0; i-- {
		if sectionOpeners.MatchString(done[i]) {
			return strings.TrimSpace(done[i]), true
		}
	}
	return "", false
}

// ReadBy finds the profile that reads its configuration with command, when the platform that
// read it is not known: a platform's own mark in output (FRR's "frr version") decides between
// platforms that share the command, and otherwise the first by name does. Nil when no profile
// reads with command.
func ReadBy(command, output string) *Profile {
	var first *Profile
	for _, p := range Profiles() {
		rb := readBacks[p.Name]
		if rb.command == "" || rb.command != command {
			continue
		}
		if rb.mark != nil && rb.mark.MatchString(output) {
			return p
		}
		if first == nil && rb.mark == nil {
			first = p
		}
	}
	return first
}

// ConfigCommand is the show command that prints the platform's configuration, "" when the
// platform has none to read back; a Linux host's is its addresses and routes.
func (p *Profile) ConfigCommand() string { return readBacks[p.Name].command }

// ConfigLines turns a configuration as the device printed it into the lines that matter for a
// diff: blank lines and noise dropped, runs of spaces folded, and on sectioned platforms each
// indented line prefixed with its section ("interface Gi0/0 | ip address …"), so the same line
// under two interfaces stays two lines.
func (p *Profile) ConfigLines(output string) []string {
	rb := readBacks[p.Name]
	var out []string
	section := ""
	for _, raw := range strings.Split(strings.ReplaceAll(output, "\r", ""), "\n") {
		line := strings.TrimRight(raw, " \t")
		if rb.rewrite != nil {
			line = rb.rewrite(line)
		}
		text := strings.Join(strings.Fields(line), " ")
		if text == "" || (rb.noise != nil && rb.noise.MatchString(text)) {
			if text != "" && rb.sections && !strings.HasPrefix(line, " ") {
				section = "" // "!" closes an IOS section
			}
			continue
		}
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case !rb.sections:
			out = append(out, text)
		case indented && section != "":
			out = append(out, section+" | "+text)
		default:
			section = text
			out = append(out, text)
		}
	}
	return out
}

// Verify judges whether a sent line is in effect in a configuration read back with
// ConfigCommand and split with ConfigLines.
func (p *Profile) Verify(line string, cfg []string) Verdict {
	rb, ok := readBacks[p.Name]
	if !ok || rb.verify == nil || rb.command == "" {
		return VerdictUnknown
	}
	return rb.verify(line, cfg)
}

// DiffConfig lists the lines only in after (added) and only in before (removed), each as often
// as it occurs more on that side; order follows the configuration.
func DiffConfig(before, after []string) (added, removed []string) {
	return onlyIn(after, before), onlyIn(before, after)
}

// onlyIn lists the lines of a that b does not match one for one, in a's order.
func onlyIn(a, b []string) []string {
	count := map[string]int{}
	for _, l := range b {
		count[l]++
	}
	var out []string
	for _, l := range a {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

// verifyVerbatim finds a line as the device stores it. "no X" is in effect when X is nowhere;
// a line that is not found may be an abbreviation the device expanded, so it proves nothing.
func verifyVerbatim(line string, cfg []string) Verdict {
	want := strings.Join(strings.Fields(line), " ")
	if want == "" {
		return VerdictUnknown
	}
	for _, l := range cfg {
		if l == want || strings.HasSuffix(l, " | "+want) {
			return VerdictTook
		}
	}
	if rest, ok := strings.CutPrefix(want, "no "); ok {
		for _, l := range cfg {
			if l == rest || strings.HasSuffix(l, " | "+rest) {
				return VerdictUnknown // it may still be set elsewhere, or under another section
			}
		}
		return VerdictTook
	}
	return VerdictUnknown
}

// vpcsField returns a "show ip" field ("IP/MASK", "NAME", "GATEWAY").
func vpcsField(cfg []string, name string) (string, bool) {
	for _, l := range cfg {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// verifyVPCS reads the effect of "ip …", "clear ip" and "set pcname …" from "show ip"; other
// commands (ping, show, save) change nothing it shows.
func verifyVPCS(line string, cfg []string) Verdict {
	w := strings.Fields(strings.ToLower(line))
	if len(w) == 0 {
		return VerdictUnknown
	}
	switch {
	case w[0] == "set" && len(w) == 3 && w[1] == "pcname":
		name, ok := vpcsField(cfg, "NAME")
		if !ok {
			return VerdictUnknown
		}
		// "PC1[1]": the slot number follows the name.
		if base, _, _ := strings.Cut(name, "["); strings.EqualFold(base, strings.Fields(line)[2]) {
			return VerdictTook
		}
		return VerdictNotTook
	case w[0] == "clear" && len(w) == 2 && w[1] == "ip":
		ip, ok := vpcsField(cfg, "IP/MASK")
		if !ok {
			return VerdictUnknown
		}
		if strings.HasPrefix(ip, "0.0.0.0") {
			return VerdictTook
		}
		return VerdictNotTook
	case w[0] == "ip" && len(w) >= 2:
		addr, mask, gw, ok := parseVPCSIP(w[1:])
		if !ok {
			return VerdictUnknown // ip dhcp, ip auto, ip dns …: nothing to compare
		}
		ip, found := vpcsField(cfg, "IP/MASK")
		if !found {
			return VerdictUnknown
		}
		if ip != addr+"/"+strconv.Itoa(mask) {
			return VerdictNotTook
		}
		if gw != "" {
			if g, ok := vpcsField(cfg, "GATEWAY"); ok && g != gw {
				return VerdictNotTook
			}
		}
		return VerdictTook
	}
	return VerdictUnknown
}

// parseVPCSIP reads "A/M [GW]", "A GW M", "A GW" and "A M GW" (all of which VPCS accepts); the
// mask defaults to 24 as in VPCS.
func parseVPCSIP(args []string) (addr string, mask int, gw string, ok bool) {
	mask = 24
	first := args[0]
	if a, m, has := strings.Cut(first, "/"); has {
		n, err := strconv.Atoi(m)
		if err != nil || n < 0 || n > 32 {
			return "", 0, "", false
		}
		first, mask = a, n
	}
	if ip := net.ParseIP(first); ip == nil || ip.To4() == nil {
		return "", 0, "", false
	}
	addr = first
	for _, a := range args[1:] {
		if n, err := strconv.Atoi(a); err == nil && n >= 0 && n <= 32 {
			mask = n
			continue
		}
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
			if ones, bits := net.IPMask(ip.To4()).Size(); bits == 32 && ones > 0 && a != gw && strings.HasPrefix(a, "255.") {
				mask = ones
				continue
			}
			gw = a
			continue
		}
		return "", 0, "", false
	}
	return addr, mask, gw, true
}

// ChangesConfig tells whether a VPCS command changes what the PC is (its address, name, DNS,
// saved startup), as opposed to looking or testing (show, ping, trace, arp): the first asks
// for approval, the second does not.
func ChangesConfig(platform, cmd string) bool {
	w := strings.Fields(strings.ToLower(cmd))
	if len(w) == 0 {
		return false
	}
	if platform != "vpcs" {
		return true
	}
	switch w[0] {
	case "show", "ping", "trace", "tracert", "traceroute", "arp", "echo", "history", "version", "help", "?", "sleep", "hist", "ver":
		return false
	}
	return true
}

// unquote drops the single quotes VyOS and uci put around values, and folds spaces.
func unquote(line string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(line, "'", "")), " ")
}

// verifyQuoted finds a VyOS "set …" line in "show configuration commands", where values are
// quoted; "delete X" is in effect when nothing under X is left.
func verifyQuoted(line string, cfg []string) Verdict {
	want := unquote(line)
	if rest, ok := strings.CutPrefix(want, "delete "); ok {
		for _, l := range cfg {
			if l := unquote(l); l == "set "+rest || strings.HasPrefix(l, "set "+rest+" ") {
				return VerdictNotTook
			}
		}
		return VerdictTook
	}
	if !strings.HasPrefix(want, "set ") {
		return VerdictUnknown
	}
	for _, l := range cfg {
		if unquote(l) == want {
			return VerdictTook
		}
	}
	return VerdictNotTook
}

// verifyUCI reads "uci set K=V" and "uci delete K" back from "uci show"; other commands (uci
// commit, service reloads) leave nothing of their own to see.
func verifyUCI(line string, cfg []string) Verdict {
	w := strings.Fields(line)
	if len(w) < 3 || w[0] != "uci" {
		return VerdictUnknown
	}
	arg := unquote(strings.Join(w[2:], " "))
	switch w[1] {
	case "set":
		key, val, ok := strings.Cut(arg, "=")
		if !ok {
			return VerdictUnknown
		}
		for _, l := range cfg {
			if k, v, ok := strings.Cut(unquote(l), "="); ok && k == key {
				if v == val {
					return VerdictTook
				}
				return VerdictNotTook
			}
		}
		return VerdictNotTook
	case "delete":
		for _, l := range cfg {
			if k, _, _ := strings.Cut(l, "="); k == arg || strings.HasPrefix(k, arg+".") {
				return VerdictNotTook
			}
		}
		return VerdictTook
	}
	return VerdictUnknown
}

// verifyRouterOS finds an "add" or "set" in "/export terse", where each item is one line with
// its menu path and every property: the line took when one item of the same path has all the
// properties it gave (the export also lists computed ones, such as an address's network).
func verifyRouterOS(line string, cfg []string) Verdict {
	w := strings.Fields(line)
	verb := routerOSVerb(w)
	if verb < 1 {
		return VerdictUnknown // a relative command ("add …" inside a menu) has no path to compare
	}
	path := strings.Join(w[:verb], " ")
	props := w[verb+1:]
	if w[verb] == "set" {
		return VerdictUnknown // "set" names its item by number or find, which the export does not show
	}
	for _, l := range cfg {
		rest, ok := strings.CutPrefix(l, path+" add ")
		if !ok {
			continue
		}
		have := strings.Fields(rest)
		all := true
		for _, p := range props {
			if !slices.Contains(have, p) {
				all = false
				break
			}
		}
		if all {
			return VerdictTook
		}
	}
	return VerdictNotTook
}

// routerOSVerb finds the add or set of a RouterOS line split into words, after its menu path;
// -1 when the line has no path ("add …" typed inside a menu) or no such verb.
func routerOSVerb(w []string) int {
	if len(w) == 0 || !strings.HasPrefix(w[0], "/") {
		return -1
	}
	for i, x := range w {
		if x == "add" || x == "set" {
			return i
		}
	}
	return -1
}

// frrCanonical are FRR lines that vtysh stores exactly as they are typed in full: when such a
// line is nowhere in the configuration, it did not take effect.
var frrCanonical = regexp.MustCompile(`^(ip|ipv6) address \S+/\d+$|^hostname \S+$|^description .+$`)

// verifyFRR is verifyVerbatim, decided for the lines FRR never rewrites.
func verifyFRR(line string, cfg []string) Verdict {
	v := verifyVerbatim(line, cfg)
	if v == VerdictUnknown && frrCanonical.MatchString(strings.Join(strings.Fields(line), " ")) {
		return VerdictNotTook
	}
	return v
}
