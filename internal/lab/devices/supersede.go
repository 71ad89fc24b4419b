package devices

import (
	"slices"
	"strings"
)

// A job's lines are judged against the configuration read after all of them, so a line whose
// setting a later line of the same job sets again shows only the later line's effect: VPCS
// "clear ip" then "ip 10.0.0.1/24" (the undo of a readdressed PC) reads back the address, VyOS
// "delete X" then "set X …" reads back X, uci "delete K" then "add_list K=…" reads back K. Such
// a line is intermediate: the read-back judges the job's last word on each setting, not it.

// Superseded marks the lines (in the order they were sent) whose setting a later line sets again.
func (p *Profile) Superseded(lines []string) []bool {
	rb := readBacks[p.Name]
	keys := make([]string, len(lines))
	section := ""
	for i, raw := range lines {
		line := strings.Join(strings.Fields(raw), " ")
		if rb.sections {
			switch {
			case line == "exit" || line == "quit" || line == "end" || line == "!" || line == "return":
				section = ""
				continue
			case sectionOpeners.MatchString(line):
				section = strings.ToLower(line)
				continue
			}
		}
		k := settingKey(p.Name, rb, line)
		if k != "" && section != "" {
			k = section + " | " + k
		}
		keys[i] = k
	}
	out := make([]bool, len(lines))
	for i, k := range keys {
		if k == "" {
			continue
		}
		for _, later := range keys[i+1:] {
			if later != "" && (later == k || strings.HasPrefix(later, k+" ") || strings.HasPrefix(k, later+" ")) {
				out[i] = true
				break
			}
		}
	}
	return out
}

// settingKey names what a line sets, as words, so that a line setting the same thing, or a part
// of it, or a whole it belongs to, has the same key or one beginning with it; "" when the line
// sets nothing the platform's read-back judges.
func settingKey(platform string, rb readBack, line string) string {
	w := strings.Fields(strings.ToLower(line))
	if len(w) == 0 {
		return ""
	}
	switch platform {
	case "vpcs":
		switch {
		case len(w) >= 2 && w[0] == "clear" && (w[1] == "ip" || w[1] == "ipv6"):
			return w[1]
		case len(w) >= 2 && w[0] == "ip" && w[1] == "dns":
			return "dns"
		case w[0] == "ip" || w[0] == "ipv6":
			return w[0]
		case len(w) == 3 && w[0] == "set" && w[1] == "pcname":
			return "pcname"
		}
		return ""
	case "vyos", "juniper_junos":
		switch w[0] {
		case "set", "delete", "activate", "deactivate":
			return strings.Join(strings.Fields(unquote(strings.Join(w[1:], " "))), " ")
		}
		return ""
	case "openwrt":
		if len(w) >= 3 && w[0] == "uci" && slices.Contains([]string{"set", "delete", "add_list", "del_list"}, w[1]) {
			key, _, _ := strings.Cut(w[2], "=")
			return strings.ReplaceAll(key, ".", " ")
		}
		return ""
	case "mikrotik_routeros":
		return routerOSKey(strings.Fields(line))
	case "linux":
		return shellKey(w)
	}
	if !rb.sections {
		return ""
	}
	// IOS-like, FRR, VRP: a line and its negation set the same thing; a setting with one value
	// per section is that setting, whatever the value.
	for _, neg := range []string{"no ", "undo "} {
		line = strings.TrimPrefix(strings.ToLower(line), neg)
	}
	if s := singleValued(line); s != "" {
		return s
	}
	return strings.Join(strings.Fields(line), " ")
}

// routerOSKey: an item added and the same item removed ("P add a=1 b=2", "P remove [ find a=1
// b=2 ]") have one key, the menu path and the properties.
func routerOSKey(w []string) string {
	verb := routerOSVerb(w)
	if verb < 0 {
		for i, x := range w {
			if x == "remove" && i > 0 && strings.HasPrefix(w[0], "/") {
				verb = i
			}
		}
	}
	if verb < 1 {
		return ""
	}
	var props []string
	for _, x := range w[verb+1:] {
		if x != "[" && x != "]" && x != "find" {
			props = append(props, x)
		}
	}
	slices.Sort(props)
	return strings.ToLower(strings.Join(w[:verb], " ")) + " " + strings.Join(props, ",")
}

// shellKey: "ip address add|del A dev D" set address A on D, "ip route add|del|replace DEST …"
// the route to DEST, "ip link set dev D up|down" D's state.
func shellKey(w []string) string {
	if len(w) < 4 || w[0] != "ip" {
		return ""
	}
	switch {
	case isAbbrev(w[1], "address", 1):
		if dev, addr := argAfter(w[3:], "dev"), prefixArg(w[3:]); dev != "" && addr != "" {
			return "address " + dev + " " + addr
		}
	case isAbbrev(w[1], "route", 1):
		return "route " + w[3]
	case isAbbrev(w[1], "link", 1) && w[2] == "set":
		if dev := argAfter(w[3:], "dev"); dev != "" {
			return "link " + dev
		}
		return "link " + w[3]
	}
	return ""
}
