package devices

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Undo: the lines that take a device from the configuration a job left (read after it) back to
// the one it found (read before it). Each platform says how its configuration is taken back:
// IOS-like and FRR negate with "no" inside the section a line belongs to, Huawei with "undo",
// Junos and VyOS delete what "set" added, RouterOS removes what "add" added, OpenWrt deletes and
// sets uci keys, VPCS sets its address and name again, a Linux host adds and deletes its
// addresses and routes.

// UndoPlan is how a device's configuration goes back.
type UndoPlan struct {
	// Lines are sent as one configuration job (in configuration mode where the platform has one).
	Lines []string
	// Left are changes the lines cannot take back, each saying why.
	Left []string
}

// ErrNoUndo means the platform's configuration cannot be taken back line by line.
var ErrNoUndo = errors.New("this platform has no configuration to read back, so a job on it cannot be undone")

// undoer computes the lines from the configurations before and after, as the device printed them.
type undoer interface {
	undo(rb readBack, before, after string) UndoPlan
}

var undoers = map[string]undoer{
	"vpcs":              vpcsUndo{},
	"cisco_ios":         sectionUndo{neg: "no", exit: "exit", deletable: iosDeletable},
	"arista_eos":        sectionUndo{neg: "no", exit: "exit", deletable: iosDeletable},
	"ruijie":            sectionUndo{neg: "no", exit: "exit", deletable: iosDeletable},
	"huawei_vrp":        sectionUndo{neg: "undo", exit: "quit", deletable: huaweiDeletable},
	"frr":               sectionUndo{neg: "no", exit: "exit", deletable: frrDeletable},
	"juniper_junos":     setUndo{junos: true},
	"vyos":              setUndo{},
	"mikrotik_routeros": routerOSUndo{},
	"openwrt":           uciUndo{},
	"linux":             shellUndo{},
}

// Undoable reports whether a job on this platform can be undone.
func (p *Profile) Undoable() bool {
	_, ok := undoers[p.Name]
	return ok && p.ConfigCommand() != ""
}

// UndoLines computes the lines that bring a configuration read as after back to before (both as
// the platform's ConfigCommand printed them).
func (p *Profile) UndoLines(before, after string) (UndoPlan, error) {
	u, ok := undoers[p.Name]
	if !ok || p.ConfigCommand() == "" {
		return UndoPlan{}, ErrNoUndo
	}
	return u.undo(readBacks[p.Name], before, after), nil
}

// StateLines are the lines of a configuration that say whether a device is as it was: its
// ConfigLines, less what changes by itself (VPCS's MTU follows its address, its ports follow
// GNS3's).
func (p *Profile) StateLines(output string) []string {
	lines := p.ConfigLines(output)
	if p.Name != "vpcs" {
		return lines
	}
	var out []string
	for _, l := range lines {
		k, _, _ := strings.Cut(l, ":")
		if _, ok := vpcsSettable[strings.TrimSpace(k)]; ok {
			out = append(out, l)
		}
	}
	return out
}

// SameState compares two configurations as StateLines sees them: what only after has, and
// what only before has (both empty when the device is as it was).
func (p *Profile) SameState(before, after string) (added, removed []string) {
	return DiffConfig(p.StateLines(before), p.StateLines(after))
}

// vpcsSettable are the "show ip" fields a VPCS command sets.
var vpcsSettable = map[string]bool{"NAME": true, "IP/MASK": true, "GATEWAY": true, "DNS": true}

type vpcsUndo struct{}

// undo sets what differs again: "clear ip" then the address, gateway and DNS of before when any
// of them differs (an "ip" without a gateway keeps the old one, and only "clear ip" removes a
// DNS server), and the name.
func (vpcsUndo) undo(_ readBack, before, after string) UndoPlan {
	b, a := vpcsFields(before), vpcsFields(after)
	var out UndoPlan
	if b["IP/MASK"] != a["IP/MASK"] || b["GATEWAY"] != a["GATEWAY"] || b["DNS"] != a["DNS"] {
		out.Lines = append(out.Lines, "clear ip")
		if ip := b["IP/MASK"]; ip != "" && !strings.HasPrefix(ip, "0.0.0.0") {
			line := "ip " + ip
			if gw := b["GATEWAY"]; gw != "" && gw != "0.0.0.0" {
				line += " " + gw
			}
			out.Lines = append(out.Lines, line)
		}
		if dns := b["DNS"]; dns != "" {
			out.Lines = append(out.Lines, "ip dns "+strings.Fields(dns)[0])
		}
	}
	if b["NAME"] != a["NAME"] && b["NAME"] != "" {
		// "PC1[1]": the slot number follows the name.
		name, _, _ := strings.Cut(b["NAME"], "[")
		out.Lines = append(out.Lines, "set pcname "+name)
	}
	return out
}

func vpcsFields(output string) map[string]string {
	f := map[string]string{}
	for _, l := range strings.Split(strings.ReplaceAll(output, "\r", ""), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if k = strings.TrimSpace(k); ok && vpcsSettable[k] {
			f[k] = strings.TrimSpace(v)
		}
	}
	return f
}

// configEntry is one line of a sectioned configuration with the section headers above it.
type configEntry struct {
	path []string
	text string
}

func (e configEntry) key() string {
	return strings.Join(append(append([]string(nil), e.path...), e.text), " | ")
}

func (e configEntry) parentKey() string { return strings.Join(e.path, " | ") }

// parseSections reads a sectioned configuration into entries: each line under the headers of
// the less indented lines above it, noise left out (an unindented "!" or "exit" closes every
// section), and an IOS banner kept as one entry with its text.
func parseSections(rb readBack, output string) []configEntry {
	type open struct {
		indent int
		text   string
	}
	var stack []open
	var out []configEntry
	lines := strings.Split(strings.ReplaceAll(output, "\r", ""), "\n")
	for i := 0; i < len(lines); i++ {
		raw := strings.TrimRight(lines[i], " \t")
		text := strings.Join(strings.Fields(raw), " ")
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		if text == "" {
			continue
		}
		if rb.noise != nil && rb.noise.MatchString(text) {
			if indent == 0 {
				stack = stack[:0]
			}
			continue
		}
		if m := bannerStart.FindStringSubmatch(text); m != nil && indent == 0 {
			// The banner's text runs to its delimiter, unindented: it is one entry.
			body := []string{text}
			for !strings.Contains(strings.TrimPrefix(text, m[0]), m[1]) && i+1 < len(lines) {
				i++
				text = strings.TrimRight(lines[i], " \t\r")
				body = append(body, text)
			}
			out = append(out, configEntry{text: strings.Join(body, "\n")})
			stack = stack[:0]
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		path := make([]string, len(stack))
		for j, o := range stack {
			path[j] = o.text
		}
		out = append(out, configEntry{path: path, text: text})
		stack = append(stack, open{indent: indent, text: text})
	}
	return out
}

// bannerStart matches an IOS banner's first line; group 1 is its delimiter.
var bannerStart = regexp.MustCompile(`^banner \S+ (\^C|\S)`)

// sectionUndo takes back a sectioned configuration (IOS-like, FRR, Huawei): a line the job
// added is negated inside its section, a section it added is removed whole where the platform
// can remove it, and a line it removed or changed is entered again in its section.
type sectionUndo struct {
	neg, exit string
	// deletable says whether a section the job added goes with one negated header line;
	// otherwise its lines are negated one by one (a physical interface stays).
	deletable func(header string, depth int) bool
}

func (u sectionUndo) undo(rb readBack, before, after string) UndoPlan {
	b, a := parseSections(rb, before), parseSections(rb, after)
	addedKeys, removedKeys := entrySets(b, a)
	var out UndoPlan
	w := sectionWriter{exit: u.exit}
	headersA, headersB := headerKeys(a), headerKeys(b)
	addedSet := map[string]bool{}
	for k := range addedKeys {
		addedSet[k] = true
	}
	// A setting that holds one value (a hostname, a description) is replaced by entering the
	// old value again: its negation is not needed, and IOS refuses "no hostname NAME".
	resetting := map[string]bool{}
	var restored []configEntry // what before had and after has not
	for _, e := range b {
		if removedKeys[e.key()] > 0 {
			restored = append(restored, e)
			if singleValued(e.text) != "" {
				resetting[e.parentKey()+" | "+singleValued(e.text)] = true
			}
		}
	}

	for _, e := range a {
		k := e.key()
		if addedKeys[k] == 0 {
			continue
		}
		addedKeys[k]--
		switch {
		case strings.Contains(e.text, "\n"):
			out.Left = append(out.Left, "the banner "+strings.SplitN(e.text, "\n", 2)[0]+" is not taken back: set it again by hand")
		case u.goesWithSection(e, addedSet):
		case headersA[k] && !u.deletable(e.text, len(e.path)):
			// Its own lines are negated; the section goes once it is empty.
		case singleValued(e.text) != "" && resetting[e.parentKey()+" | "+singleValued(e.text)]:
		case u.undoneByRestoring(e, restored):
		default:
			w.line(e.path, u.negate(e.text), false)
		}
	}
	for _, e := range b {
		k := e.key()
		if removedKeys[k] == 0 {
			continue
		}
		removedKeys[k]--
		if strings.Contains(e.text, "\n") {
			out.Left = append(out.Left, "the banner "+strings.SplitN(e.text, "\n", 2)[0]+" is not put back: set it again by hand")
			continue
		}
		w.line(e.path, e.text, headersB[k])
	}
	out.Lines = w.done()
	return out
}

// goesWithSection reports whether a line the job added sits in a section the job added and
// that is removed whole.
func (u sectionUndo) goesWithSection(e configEntry, added map[string]bool) bool {
	for d := 0; d < len(e.path); d++ {
		h := configEntry{path: e.path[:d], text: e.path[d]}
		if added[h.key()] && u.deletable(h.text, d) {
			return true
		}
	}
	return false
}

// undoneByRestoring reports whether an added "no X" is taken back by entering again the "X …"
// it removed ("no ip address" goes when "ip address 10.0.0.1 255.255.255.0" is back; a bare
// "ip address" would be refused).
func (u sectionUndo) undoneByRestoring(e configEntry, restored []configEntry) bool {
	rest, ok := strings.CutPrefix(e.text, u.neg+" ")
	if !ok {
		return false
	}
	for _, r := range restored {
		if r.parentKey() == e.parentKey() && (r.text == rest || strings.HasPrefix(r.text, rest+" ")) {
			return true
		}
	}
	return false
}

func (u sectionUndo) negate(line string) string {
	if rest, ok := strings.CutPrefix(line, u.neg+" "); ok {
		return rest
	}
	// "no description" takes no text on FRR, and any on IOS.
	if strings.HasPrefix(line, "description ") {
		return u.neg + " description"
	}
	return u.neg + " " + line
}

// entrySets counts the entries only after has (added) and only before has (removed), by key.
func entrySets(before, after []configEntry) (added, removed map[string]int) {
	count := func(es []configEntry) map[string]int {
		m := map[string]int{}
		for _, e := range es {
			m[e.key()]++
		}
		return m
	}
	cb, ca := count(before), count(after)
	added, removed = map[string]int{}, map[string]int{}
	for k, n := range ca {
		if n > cb[k] {
			added[k] = n - cb[k]
		}
	}
	for k, n := range cb {
		if n > ca[k] {
			removed[k] = n - ca[k]
		}
	}
	return added, removed
}

// singleValued names the setting of a line that holds one value per section ("" for others).
func singleValued(line string) string {
	for _, w := range []string{"hostname", "description", "sysname"} {
		if line == w || strings.HasPrefix(line, w+" ") {
			return w
		}
	}
	return ""
}

// headerKeys are the entries that have lines under them.
func headerKeys(es []configEntry) map[string]bool {
	out := map[string]bool{}
	for _, e := range es {
		if len(e.path) > 0 {
			out[e.parentKey()] = true
		}
	}
	return out
}

// sectionWriter emits lines with the section headers they need, leaving a section with its
// exit command before entering another, and every section at the end.
type sectionWriter struct {
	exit  string
	at    []string
	lines []string
}

// line enters path (leaving what it is in but path does not hold) and sends text there; a
// header text opens its own section.
func (w *sectionWriter) line(path []string, text string, header bool) {
	common := 0
	for common < len(w.at) && common < len(path) && w.at[common] == path[common] {
		common++
	}
	for len(w.at) > common {
		w.lines = append(w.lines, w.exit)
		w.at = w.at[:len(w.at)-1]
	}
	for _, h := range path[common:] {
		w.lines = append(w.lines, h)
		w.at = append(w.at, h)
	}
	w.lines = append(w.lines, text)
	if header {
		w.at = append(w.at, text)
	}
}

func (w *sectionWriter) done() []string {
	for range w.at {
		w.lines = append(w.lines, w.exit)
	}
	w.at = nil
	return w.lines
}

// iosLogical are IOS-family interfaces that exist because they are configured: "no interface"
// removes them. A physical port cannot be removed; its lines are negated instead.
var iosLogical = regexp.MustCompile(`(?i)^interface (loopback|tunnel|vlan|port-channel|bvi|bdi|dialer|virtual-template|nve)\S*$|^interface \S+\.\d+$`)

func iosDeletable(header string, depth int) bool {
	if depth > 0 {
		return false // a sub-section (address-family …) is emptied line by line
	}
	if strings.HasPrefix(strings.ToLower(header), "interface ") {
		return iosLogical.MatchString(header)
	}
	return true
}

// huaweiLogical are VRP interfaces "undo interface" removes.
var huaweiLogical = regexp.MustCompile(`(?i)^interface (loopback|vlanif|tunnel|eth-trunk|nve|vbdif)\S*$|^interface \S+\.\d+$`)

func huaweiDeletable(header string, depth int) bool {
	if depth > 0 {
		return false
	}
	if strings.HasPrefix(strings.ToLower(header), "interface ") {
		return huaweiLogical.MatchString(header)
	}
	return true
}

// frrDeletable: FRR drops an interface's section once its last line is negated, and keeps an
// emptied "router ospf" until "no router ospf".
func frrDeletable(header string, depth int) bool {
	return depth == 0 && !strings.HasPrefix(header, "interface ")
}

// setUndo takes back a configuration printed as set commands (Junos "display set", VyOS
// "show configuration commands"): what the job set is deleted at the shortest path before did
// not have (so a hierarchy it created goes whole), what it removed or changed is set again,
// and on Junos a statement it deactivated is activated and the other way round.
type setUndo struct{ junos bool }

func (u setUndo) undo(_ readBack, before, after string) UndoPlan {
	b, a := setLines(before), setLines(after)
	added, removed := DiffConfig(b, a)
	have := map[string]bool{} // every path prefix before has
	for _, l := range b {
		w := quotedFields(l)
		if len(w) < 2 || w[0] != "set" {
			continue
		}
		for n := 2; n <= len(w); n++ {
			have[strings.Join(w[1:n], " ")] = true
		}
	}
	var out UndoPlan
	var deleted []string
	for _, l := range added {
		w := quotedFields(l)
		switch {
		case len(w) >= 2 && w[0] == "set":
			n := 2
			for n < len(w) && have[strings.Join(w[1:n], " ")] {
				n++
			}
			path := strings.Join(w[1:n], " ")
			if coveredBy(path, deleted) {
				continue
			}
			deleted = append(deleted, path)
			out.Lines = append(out.Lines, "delete "+path)
		case u.junos && len(w) >= 2 && w[0] == "deactivate":
			out.Lines = append(out.Lines, "activate "+strings.Join(w[1:], " "))
		default:
			out.Left = append(out.Left, fmt.Sprintf("%q is not taken back: it is not a set statement", l))
		}
	}
	var deactivate []string
	for _, l := range removed {
		w := quotedFields(l)
		switch {
		case len(w) >= 2 && w[0] == "set":
			out.Lines = append(out.Lines, l)
		case u.junos && len(w) >= 2 && w[0] == "deactivate":
			deactivate = append(deactivate, l) // once the statement is back
		default:
			out.Left = append(out.Left, fmt.Sprintf("%q is not put back: it is not a set statement", l))
		}
	}
	out.Lines = append(out.Lines, deactivate...)
	return out
}

func setLines(output string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(output, "\r", ""), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "set ") || strings.HasPrefix(l, "deactivate ") {
			out = append(out, strings.Join(quotedFields(l), " "))
		}
	}
	return out
}

// coveredBy reports whether path lies under one of the deleted paths.
func coveredBy(path string, deleted []string) bool {
	for _, d := range deleted {
		if path == d || strings.HasPrefix(path, d+" ") {
			return true
		}
	}
	return false
}

// quotedFields splits a line at spaces outside single or double quotes.
func quotedFields(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// routerOSUndo takes back "/export terse" lines: an item the job added is removed by finding
// it with every property the export shows, an item it removed is added again, and a setting
// it changed is set as before. A setting the export did not show before was at its default,
// which the export does not say: that one is left.
type routerOSUndo struct{}

// rosLine is one "/export terse" line: its menu path, verb, the item a set names, the properties.
type rosLine struct {
	line, path, verb, target string
	props                    []string
}

func parseROS(line string) (rosLine, bool) {
	w := quotedFields(line)
	r := rosLine{line: line}
	verb := routerOSVerb(w)
	if verb < 1 {
		return r, false
	}
	r.path, r.verb = strings.Join(w[:verb], " "), w[verb]
	rest := w[verb+1:]
	if r.verb == "set" && len(rest) > 0 && !strings.Contains(rest[0], "=") {
		n := 1
		if rest[0] == "[" {
			for n < len(rest) && rest[n-1] != "]" {
				n++
			}
		}
		r.target, rest = strings.Join(rest[:n], " "), rest[n:]
	}
	r.props = rest
	return r, true
}

func (routerOSUndo) undo(_ readBack, before, after string) UndoPlan {
	var b, a []string
	for _, l := range strings.Split(strings.ReplaceAll(before, "\r", ""), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			b = append(b, l)
		}
	}
	for _, l := range strings.Split(strings.ReplaceAll(after, "\r", ""), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			a = append(a, l)
		}
	}
	added, removed := DiffConfig(b, a)
	setBefore := map[string]bool{}
	for _, l := range b {
		if r, ok := parseROS(l); ok && r.verb == "set" {
			setBefore[r.path+" "+r.target] = true
		}
	}
	var out UndoPlan
	for _, l := range added {
		r, ok := parseROS(l)
		switch {
		case !ok:
			out.Left = append(out.Left, fmt.Sprintf("%q is not taken back: it is not an add or set line", l))
		case r.verb == "add":
			out.Lines = append(out.Lines, fmt.Sprintf("%s remove [ find %s ]", r.path, strings.Join(r.props, " ")))
		case !setBefore[r.path+" "+r.target]:
			out.Left = append(out.Left, fmt.Sprintf("%q is not taken back: the export before showed no value for it (it was at its default)", l))
		}
	}
	for _, l := range removed {
		if _, ok := parseROS(l); ok {
			out.Lines = append(out.Lines, l)
		} else {
			out.Left = append(out.Left, fmt.Sprintf("%q is not put back: it is not an add or set line", l))
		}
	}
	return out
}

// uciUndo takes back "uci show" lines: a key or section the job added is deleted, one it
// changed or removed is set as before (a list option entry by entry), then the change is
// committed and the services that read it reloaded. An unnamed section the job removed
// cannot be put back at its index: that one is left.
type uciUndo struct{}

func (uciUndo) undo(_ readBack, before, after string) UndoPlan {
	b, bOrder := uciValues(before)
	a, aOrder := uciValues(after)
	var out UndoPlan
	var deletedSections []string
	var dels []string
	for _, k := range aOrder {
		if _, ok := b[k]; ok {
			continue
		}
		if coveredByKey(k, deletedSections) {
			continue
		}
		if strings.Count(k, ".") == 1 {
			deletedSections = append(deletedSections, k)
		}
		dels = append(dels, k)
	}
	// Unnamed sections are numbered: they go last, the later ones first, so each index still
	// names its own section when it is deleted.
	sort.SliceStable(dels, func(i, j int) bool {
		ni, nj := uciIndex(dels[i]), uciIndex(dels[j])
		if (ni < 0) != (nj < 0) {
			return ni < 0
		}
		return ni > nj
	})
	for _, k := range dels {
		out.Lines = append(out.Lines, "uci delete "+k)
	}
	for _, k := range bOrder {
		v := b[k]
		if av, ok := a[k]; ok && av == v {
			continue
		}
		if _, ok := a[k]; !ok && strings.Count(k, ".") == 1 && strings.Contains(k, "@") {
			out.Left = append(out.Left, fmt.Sprintf("the unnamed section %s is not put back: add it again with uci add", k))
			continue
		}
		if vals := quotedFields(v); len(vals) > 1 {
			if _, ok := a[k]; ok {
				out.Lines = append(out.Lines, "uci delete "+k)
			}
			for _, x := range vals {
				out.Lines = append(out.Lines, "uci add_list "+k+"="+x)
			}
			continue
		}
		out.Lines = append(out.Lines, "uci set "+k+"="+v)
	}
	if len(out.Lines) > 0 {
		out.Lines = append(out.Lines, "uci commit", "reload_config")
	}
	return out
}

func uciValues(output string) (map[string]string, []string) {
	m := map[string]string{}
	var order []string
	for _, l := range strings.Split(strings.ReplaceAll(output, "\r", ""), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = v
	}
	return m, order
}

// uciIndex is the index of an unnamed section ("firewall.@zone[3]" is 3), -1 for a named one.
func uciIndex(k string) int {
	m := uciUnnamed.FindStringSubmatch(k)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var uciUnnamed = regexp.MustCompile(`^[^.]+\.@[^\[]+\[(\d+)\]`)

func coveredByKey(k string, sections []string) bool {
	for _, s := range sections {
		if strings.HasPrefix(k, s+".") {
			return true
		}
	}
	return false
}
