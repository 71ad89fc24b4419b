package devices

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Linux hosts: a shell says whether a command failed only by its exit status, so the linux
// profile has every command print it on a line of its own, and reads the host's addresses and
// routes back as its "configuration".

// shellStatus follows every command on a shell; the line it prints is taken out of the output.
const shellStatus = "echo __rc=$?"

// shellStatusLine is that line.
var shellStatusLine = regexp.MustCompile(`(?m)^__rc=(\d+)[ \t]*$\n?`)

// shellReadBack prints a host's addresses and routes: iproute2's brief listing, or BusyBox's
// one-line one where "ip" has no -br.
const shellReadBack = "(ip -br addr 2>/dev/null || ip -o addr) && ip route"

// withStatus is the line to send for cmd: with the exit status asked for on platforms that
// print it, except for an empty line and free text.
func (p *Profile) withStatus(cmd string, freeText bool) string {
	if p.status == "" || freeText || strings.TrimSpace(cmd) == "" {
		return cmd
	}
	// "cmd;; echo" and "cmd &; echo" are syntax errors: a command that already ends a list
	// is followed as it is.
	trimmed := strings.TrimRight(cmd, " \t")
	switch {
	case strings.HasSuffix(trimmed, "&") && !strings.HasSuffix(trimmed, "&&"):
		return trimmed + " " + p.status
	case strings.HasSuffix(trimmed, ";") && !strings.HasSuffix(trimmed, ";;"):
		return trimmed + " " + p.status
	}
	return cmd + "; " + p.status
}

// exitStatus takes the last exit-status line out of output and returns the status it gives.
func (p *Profile) exitStatus(output string) (string, int, bool) {
	if p.statusLine == nil {
		return output, 0, false
	}
	all := p.statusLine.FindAllStringSubmatchIndex(output, -1)
	if len(all) == 0 {
		return output, 0, false
	}
	m := all[len(all)-1]
	status, err := strconv.Atoi(output[m[2]:m[3]])
	return tidyOutput(output[:m[0]] + output[m[1]:]), status, err == nil
}

// shellLifetimes are the countdowns BusyBox's one-line listing prints after a DHCP address:
// they change by themselves, so they are left out of the comparison.
var shellLifetimes = regexp.MustCompile(`\s*\\?\s*valid_lft \S+ preferred_lft \S+`)

// shellConfigLine drops what changes by itself from a read-back line.
func shellConfigLine(line string) string { return shellLifetimes.ReplaceAllString(line, "") }

// verifyShell judges "ip address add|del" and "ip route add|del|replace" against the host's
// addresses and routes; other commands leave nothing of their own to compare.
func verifyShell(line string, cfg []string) Verdict {
	w := strings.Fields(line)
	if len(w) < 4 || w[0] != "ip" {
		return VerdictUnknown
	}
	obj, verb, args := w[1], w[2], w[3:]
	add := isAbbrev(verb, "add", 1) || verb == "replace" || verb == "change"
	del := isAbbrev(verb, "delete", 1)
	if !add && !del {
		return VerdictUnknown
	}
	switch {
	case isAbbrev(obj, "address", 1):
		dev, addr := argAfter(args, "dev"), prefixArg(args)
		if dev == "" || addr == "" {
			return VerdictUnknown
		}
		found := false
		for _, l := range cfg {
			f := strings.Fields(l)
			if len(f) > 1 && hasDevice(f[:2], dev) && slices.Contains(f, addr) {
				found = true
			}
		}
		return took(found == add)
	case isAbbrev(obj, "route", 1):
		found := false
		for _, l := range cfg {
			f := strings.Fields(l)
			if len(f) == 0 || f[0] != args[0] {
				continue
			}
			if gw := argAfter(args, "via"); gw == "" || argAfter(f, "via") == gw {
				found = true
			}
		}
		return took(found == add)
	}
	return VerdictUnknown
}

func took(yes bool) Verdict {
	if yes {
		return VerdictTook
	}
	return VerdictNotTook
}

// argAfter returns the word after key ("dev eth0" gives "eth0").
func argAfter(words []string, key string) string {
	for i := 0; i+1 < len(words); i++ {
		if words[i] == key {
			return words[i+1]
		}
	}
	return ""
}

// hasDevice tells whether a listing's leading fields name dev: "eth0" or "eth0@if12" in the
// brief listing, "2: eth0" in the one-line one.
func hasDevice(lead []string, dev string) bool {
	for _, f := range lead {
		if name, _, _ := strings.Cut(strings.TrimSuffix(f, ":"), "@"); name == dev {
			return true
		}
	}
	return false
}

// prefixArg returns the address an "ip address" command names, as the listing shows it: with
// its prefix length, /32 or /128 when none was given.
func prefixArg(args []string) string {
	for i, a := range args {
		if i > 0 && slices.Contains([]string{"dev", "label", "brd", "broadcast", "peer", "local"}, args[i-1]) {
			continue
		}
		if _, _, err := net.ParseCIDR(a); err == nil {
			return a
		}
		if ip := net.ParseIP(a); ip != nil {
			if ip.To4() != nil {
				return a + "/32"
			}
			return a + "/128"
		}
	}
	return ""
}
