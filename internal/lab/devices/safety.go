package devices

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
)

// DefaultForbidden are the commands the reference implementation blocks
// because they outlive the tool timeout, leave the console unusable or
// flood the lab. Operators can add more with LoadPolicy.
var DefaultForbidden = []string{"traceroute", "tracepath", "tracert", "ping -f", "debug", "test"}

// Destructive are commands that reload, erase or reformat a device. They
// are refused in every mode and cannot be allowed by configuration.
var Destructive = []string{
	"reload", "reboot", "halt", "poweroff", "init 0", "init 6", "shutdown -h", "shutdown -r", "shutdown now",
	"erase", "write erase", "format", "mkfs",
	"delete flash:", "delete bootflash:", "delete nvram:", "delete disk0:", "delete slot0:", "delete startup-config",
	"request system reboot", "request system halt", "request system power-off", "request system zeroize",
	"reset saved-configuration", "reset factory-configuration", "factory-reset", "boot system",
	"firstboot", "sysupgrade", "jffs2reset", "system reset-configuration", "system reboot", "system shutdown",
	"add system image", "install image",
}

// rule is one pattern: its first word is matched against the command's
// verb, the rest against later words.
type rule struct {
	text  string
	words []string
	// minAbbrev is the shortest abbreviation of the verb that still counts
	// (IOS accepts "deb" for "debug", "relo" for "reload").
	minAbbrev int
}

func newRule(text string, minAbbrev int) rule {
	words := strings.Fields(strings.ToLower(text))
	return rule{text: strings.Join(words, " "), words: words, minAbbrev: minAbbrev}
}

// abbrevFor is how short a verb abbreviation may be: three letters for a
// lone word, two when more words must follow ("wr er", "sh tech"), since
// the following words keep a short verb from matching too much.
func abbrevFor(pattern string) int {
	if len(strings.Fields(pattern)) > 1 {
		return 2
	}
	return 3
}

// Policy decides which commands may be sent to a device.
type Policy struct {
	// mu lets a skills reload swap the rules of a policy that device runs are reading.
	mu          sync.RWMutex
	forbidden   []rule
	destructive []rule
}

// Extend returns a new policy with p's rules plus the given forbidden patterns.
func (p *Policy) Extend(patterns []string) *Policy {
	if p == nil {
		p = DefaultPolicy()
	}
	p.mu.RLock()
	q := &Policy{forbidden: append([]rule(nil), p.forbidden...), destructive: append([]rule(nil), p.destructive...)}
	p.mu.RUnlock()
	for _, line := range patterns {
		r := newRule(line, abbrevFor(line))
		if !q.has(r.text) {
			q.forbidden = append(q.forbidden, r)
		}
	}
	return q
}

// Replace gives p the rules of q, at once for every reader of p.
func (p *Policy) Replace(q *Policy) {
	q.mu.RLock()
	f, d := q.forbidden, q.destructive
	q.mu.RUnlock()
	p.mu.Lock()
	p.forbidden, p.destructive = f, d
	p.mu.Unlock()
}

// DefaultPolicy blocks DefaultForbidden and Destructive.
func DefaultPolicy() *Policy {
	p := &Policy{}
	for _, f := range DefaultForbidden {
		p.forbidden = append(p.forbidden, newRule(f, abbrevFor(f)))
	}
	for _, d := range Destructive {
		p.destructive = append(p.destructive, newRule(d, abbrevFor(d)))
	}
	return p
}

// LoadPolicy returns the default policy extended with the forbidden
// patterns in the file at path: one pattern per line, "#" starts a
// comment line. An empty path gives the default policy.
func LoadPolicy(path string) (*Policy, error) {
	p := DefaultPolicy()
	if path == "" {
		return p, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("forbidden commands file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := newRule(line, abbrevFor(line))
		if !p.has(r.text) {
			p.forbidden = append(p.forbidden, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("forbidden commands file %s line %d: %w", path, n+1, err)
	}
	return p, nil
}

func (p *Policy) has(text string) bool {
	for _, r := range p.forbidden {
		if r.text == text {
			return true
		}
	}
	return false
}

// Forbidden lists the forbidden patterns (defaults plus the operator's).
func (p *Policy) Forbidden() []string {
	if p == nil {
		p = DefaultPolicy()
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	for _, r := range p.forbidden {
		out = append(out, r.text)
	}
	return out
}

// Check reports whether cmd may be sent to any device, and why not.
// Patterns match whole words case-insensitively ("debug" blocks
// "debug ip ospf" and "deb ip", not "undebug all" or "show debugging"),
// in every segment of a shell pipeline and behind "do"/"run"/"sudo".
func (p *Policy) Check(cmd string) (bool, string) {
	if p == nil {
		p = DefaultPolicy()
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, words := range commandSegments(cmd) {
		for _, r := range p.destructive {
			if r.match(words) {
				return false, fmt.Sprintf("Command '%s' is refused because it matches '%s': it would reload, erase or reformat the device. Such commands are never sent.", strings.TrimSpace(cmd), r.text)
			}
		}
		for _, r := range p.forbidden {
			if r.match(words) {
				return false, fmt.Sprintf("Command '%s' is not allowed because it matches the forbidden pattern '%s'. This command may run longer than the tool timeout or leave the device console unavailable for subsequent commands.", strings.TrimSpace(cmd), r.text)
			}
		}
	}
	return true, ""
}

// platformRules are refused on one platform only, where they would take
// the device or its console away.
var platformRules = map[string][]struct {
	rule   rule
	reason string
}{
	"vpcs": {
		{newRule("quit", 1), "it stops the VPCS node"},
		{newRule("disconnect", 2), "it closes the console session"},
		{newRule("rlogin", 2), "it ties the console to a remote session"},
	},
	"linux":   linuxRules,
	"openwrt": linuxRules,
	// "exit" and "quit" at the top of vtysh are handled: the driver answers the root shell
	// they drop to with "vtysh".
	"frr": {
		{newRule("start-shell", 5), "it leaves vtysh for a shell"},
	},
	"vyos": {
		{newRule("logout", 4), "it logs the console out"},
		{newRule("exit discard", 2), "it throws away configuration that is not committed"},
	},
	"mikrotik_routeros": {
		{newRule("quit", 4), "it logs the console out"},
	},
}

var linuxRules = []struct {
	rule   rule
	reason string
}{
	{newRule("exit", 4), "it ends the console shell, which can stop the container"},
	{newRule("logout", 4), "it ends the console shell, which can stop the container"},
	{newRule("exec", 4), "it replaces the console shell"},
}

// CheckPlatform is Check plus the rules of one platform (a profile name):
// on VPCS "quit" stops the node and "!" runs a command on the host.
func (p *Policy) CheckPlatform(platform, cmd string) (bool, string) {
	if ok, reason := p.Check(cmd); !ok {
		return ok, reason
	}
	trimmed := strings.TrimSpace(cmd)
	if platform == "vpcs" && strings.HasPrefix(trimmed, "!") {
		return false, fmt.Sprintf("Command '%s' is refused: on VPCS '!' runs a shell command on the GNS3 host.", trimmed)
	}
	words := strings.Fields(strings.ToLower(trimmed))
	if len(words) == 0 {
		return true, ""
	}
	for _, pr := range platformRules[platform] {
		if pr.rule.match(words) {
			return false, fmt.Sprintf("Command '%s' is refused on %s: %s.", trimmed, platform, pr.reason)
		}
	}
	return true, ""
}

// wrappers run the command that follows them.
var wrappers = map[string]int{
	"do": 0, "run": 0, "sudo": 0, "exec": 0, "nohup": 0, "time": 0, "command": 0, "builtin": 0, "nice": 0,
	"timeout": 1, // followed by a duration
}

// commandSegments splits a command line into the word lists of the
// commands it runs: shell separators start a new command and wrapper
// words are skipped.
func commandSegments(cmd string) [][]string {
	lower := strings.ToLower(cmd)
	for _, sep := range []string{"&&", "||", ";", "|", "&", "\n", "$(", "`", "(", ")"} {
		lower = strings.ReplaceAll(lower, sep, "\x00")
	}
	var out [][]string
	for _, seg := range strings.Split(lower, "\x00") {
		words := strings.Fields(seg)
		if len(words) > 0 && strings.HasPrefix(words[0], "/") && len(words[0]) > 1 {
			// A RouterOS menu path, "/system reboot" or "/system/reboot".
			words = append(strings.Fields(strings.ReplaceAll(words[0], "/", " ")), words[1:]...)
		}
		for len(words) > 0 {
			if skip, ok := wrappers[words[0]]; ok && len(words) > 1+skip {
				words = words[1+skip:]
				for len(words) > 1 && strings.HasPrefix(words[0], "-") {
					words = words[1:] // wrapper options, e.g. "sudo -n"
				}
				continue
			}
			if words[0] == "env" || strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=") {
				words = words[1:] // env VAR=value cmd
				continue
			}
			break
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

func (r rule) match(words []string) bool {
	if len(r.words) == 0 || len(words) == 0 {
		return false
	}
	verb := words[0]
	if verb != r.words[0] && !(len(verb) >= r.minAbbrev && len(verb) < len(r.words[0]) &&
		strings.HasPrefix(r.words[0], verb) && !notAbbrev[verb]) {
		return false
	}
	prev := 0
	for _, rw := range r.words[1:] {
		found := false
		for pos := prev + 1; pos < len(words); pos++ {
			if wordMatches(words[pos], rw, pos == prev+1) {
				found, prev = true, pos
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// notAbbrev are words that look like abbreviations of a pattern but are
// commands of their own (a shell "for" loop is not "format").
var notAbbrev = map[string]bool{"for": true}

func wordMatches(word, pattern string, adjacent bool) bool {
	switch {
	case word == pattern:
		return true
	case len(pattern) == 2 && pattern[0] == '-' && pattern[1] != '-':
		// A short flag, possibly combined with others ("-fc").
		return len(word) > 1 && word[0] == '-' && word[1] != '-' && strings.IndexByte(word[1:], pattern[1]) >= 0 &&
			isFlagCluster(word[1:])
	case strings.HasSuffix(pattern, ":"):
		return strings.HasPrefix(word, pattern)
	case adjacent:
		return strings.HasPrefix(pattern, word)
	}
	return false
}

func isFlagCluster(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
