package devices

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Mode is the CLI mode a console prompt shows.
type Mode int

// Modes a prompt can show. Platforms without a privilege split (VPCS, a
// Linux shell, Huawei's user view) report ModeUser for their exec prompt.
const (
	ModeUnknown Mode = iota
	ModeUser
	ModePrivileged
	ModeConfig
)

func (m Mode) String() string {
	switch m {
	case ModeUser:
		return "user"
	case ModePrivileged:
		return "privileged"
	case ModeConfig:
		return "config"
	}
	return "unknown"
}

// Answer is a reply to an interim prompt such as "Password:", "[confirm]"
// or "[Y/N]". A device that stops at an interim prompt with no matching
// answer gets an interrupt instead of a guess.
type Answer struct {
	// Prompt is matched against the last line the device printed.
	Prompt *regexp.Regexp
	// Reply is sent followed by the profile's newline; "" sends a bare Enter.
	Reply string
	// Hidden keeps Reply out of transcripts (passwords).
	Hidden bool
	// Command, when set, limits the answer to commands it matches.
	Command *regexp.Regexp
}

func (a Answer) applies(cmd, line string) bool {
	if a.Command != nil && !a.Command.MatchString(cmd) {
		return false
	}
	return a.Prompt != nil && a.Prompt.MatchString(line)
}

// Profile describes how one platform's CLI behaves on a console: its
// prompts, pager, setup commands, configuration mode and error messages.
// The built-in profiles are returned by Profiles and ProfileByName; callers
// may copy one and adjust fields.
type Profile struct {
	// Name is the platform identifier used in tags and results, e.g. "cisco_ios".
	Name        string
	Description string
	// Newline ends every line sent. VPCS wants "\n" in the same write as the
	// command; network OSes take "\r" like a terminal's Enter key.
	Newline string
	// Wake is sent to get a fresh prompt after connecting.
	Wake string
	// Prompt patterns, matched against the whole last line on the screen.
	UserPrompt, PrivPrompt, ConfigPrompt *regexp.Regexp
	// Pager matches a paging prompt at the end of the screen; PagerKey
	// (without newline) asks for the next page.
	Pager    *regexp.Regexp
	PagerKey string
	// Setup runs after connecting (paging off, wide terminal). Failures are
	// ignored: not every image knows every setup command.
	Setup []string
	// Enable is the command that turns a user prompt into a privileged one.
	Enable string
	// ConfigEnter/ConfigExit enter and leave configuration mode; empty
	// ConfigEnter means the platform has no separate configuration mode.
	ConfigEnter, ConfigExit string
	// Commit is sent before ConfigExit when CommitWhen matches the config
	// prompt (always when CommitWhen is nil).
	Commit     string
	CommitWhen *regexp.Regexp
	// ErrorPatterns mark a command as failed when any matches its output.
	ErrorPatterns []*regexp.Regexp
	// Interim recognises prompts that wait for an answer.
	Interim []*regexp.Regexp
	// Answers are replies that are always safe on this platform (for
	// example declining the IOS initial configuration dialog).
	Answers []Answer
	// Interrupt aborts a running command (Ctrl-C, or Ctrl-^ on IOS).
	Interrupt string
	// TextEntry matches a device asking for free text ended by a delimiter
	// (IOS banners); group 1 captures the delimiter.
	TextEntry *regexp.Regexp
	// PromptNoise matches lines printed just above a prompt that belong to
	// the prompt rather than to the output (Junos "[edit]", "{master:0}").
	PromptNoise *regexp.Regexp
	// DefaultTimeout bounds a command with no specific rule.
	DefaultTimeout time.Duration
	// Save makes the running configuration the one the device starts with ("write memory",
	// VPCS "save"): what a save point runs before GNS3 stops the node. "" where there is nothing
	// to run: the platform keeps every change as it is made (Junos commits, RouterOS), or keeps
	// nothing a command could save (a Linux shell's addresses). SaveInConfig runs it inside
	// configuration mode (VyOS saves from there).
	Save         string
	SaveInConfig bool

	detect *regexp.Regexp
	// execInConfig matches exec-mode commands that may come among configuration lines
	// ("write memory" when the user asks to save); Configure sends them with "do ".
	execInConfig *regexp.Regexp
	// banner recognises the platform from what the console printed before
	// its first prompt (vtysh greets with "Hello, this is FRRouting").
	banner   *regexp.Regexp
	aliases  []string
	timeouts func(words []string) time.Duration
	// endless recognises commands that only end when interrupted (a ping
	// without a count): they run for OpenEndedRun, then get the interrupt.
	endless func(words []string) bool
	// status, when set, follows every command so that the device prints its exit status on a
	// line statusLine matches, which is taken out of the output (a shell, where a failed
	// command may print nothing).
	status     string
	statusLine *regexp.Regexp
}

// OpenEndedRun is how long a command that never ends by itself (vtysh's
// ping, a Linux ping without -c, "| refresh") runs before the driver stops
// it with the platform's interrupt and returns what it printed.
const OpenEndedRun = 5 * time.Second

// endlessPipe matches output modifiers that keep a command running: Junos
// "| refresh", EOS "| watch", and "| follow" as some shells and NOSes have it.
var endlessPipe = regexp.MustCompile(`\|\s*(refresh|watch|follow)\b`)

// OpenEnded reports whether cmd only ends when interrupted on this
// platform; such a command is stopped after OpenEndedRun, which is its
// expected end, not a failure.
func (p *Profile) OpenEnded(cmd string) bool {
	if endlessPipe.MatchString(strings.ToLower(cmd)) {
		return true
	}
	words := strings.Fields(strings.ToLower(cmd))
	return len(words) > 0 && p.endless != nil && p.endless(words)
}

// ModeOf classifies a prompt line; ModeUnknown means it is not a prompt.
func (p *Profile) ModeOf(line string) Mode {
	switch {
	case p.ConfigPrompt != nil && p.ConfigPrompt.MatchString(line):
		return ModeConfig
	case p.PrivPrompt != nil && p.PrivPrompt.MatchString(line):
		return ModePrivileged
	case p.UserPrompt != nil && p.UserPrompt.MatchString(line):
		return ModeUser
	}
	return ModeUnknown
}

// TimeoutFor derives how long cmd may take on this platform: slow commands
// such as VPCS "ip" (duplicate address check, ~3 s) or "ping -c N" (~N s)
// get budgets from their arguments.
func (p *Profile) TimeoutFor(cmd string) time.Duration {
	d, _ := p.timeoutRule(cmd)
	return d
}

// timeoutRule also reports whether a command-specific rule applied.
func (p *Profile) timeoutRule(cmd string) (time.Duration, bool) {
	if p.OpenEnded(cmd) {
		return OpenEndedRun, true
	}
	words := strings.Fields(strings.ToLower(cmd))
	if len(words) > 0 && p.timeouts != nil {
		if d := p.timeouts(words); d > 0 {
			return d, true
		}
	}
	if p.DefaultTimeout > 0 {
		return p.DefaultTimeout, false
	}
	return 30 * time.Second, false
}

// failure returns the first output line that matches an error pattern.
func (p *Profile) failure(output string) (string, bool) {
	for _, re := range p.ErrorPatterns {
		if loc := re.FindStringIndex(output); loc != nil {
			// A leading \s* may have matched blank lines above the message.
			loc[0] += len(output[loc[0]:loc[1]]) - len(strings.TrimLeft(output[loc[0]:loc[1]], " \t\r\n"))
			start := strings.LastIndexByte(output[:loc[0]], '\n') + 1
			end := strings.IndexByte(output[loc[0]:], '\n')
			if end < 0 {
				end = len(output)
			} else {
				end += loc[0]
			}
			return strings.TrimSpace(output[start:end]), true
		}
	}
	return "", false
}

func (p *Profile) interim(line string) bool {
	for _, re := range p.Interim {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

var profiles = buildProfiles()

// Profiles returns the built-in platform profiles, sorted by name.
func Profiles() []*Profile {
	out := make([]*Profile, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ProfileNames lists the built-in platform names.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// ProfileByName finds a built-in profile by its name or by a common alias,
// including the netmiko device types GNS3 templates carry in their
// "device_type:" tags ("cisco_ios_telnet", "gns3_vpcs_telnet", "huawei", ...).
func ProfileByName(name string) (*Profile, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, p := range profiles {
		if p.Name == key {
			return p, nil
		}
		for _, a := range p.aliases {
			if a == key {
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("no console profile for platform %q (supported: %s)", name, strings.Join(ProfileNames(), ", "))
}

// detectionOrder lists profiles from the most to the least distinctive
// prompt, so that a bare "R1#" falls through to the IOS family last, and
// "R1# " (vtysh's trailing space) to FRR just before it.
var detectionOrder = []string{"mikrotik_routeros", "huawei_vrp", "vyos", "juniper_junos", "vpcs", "openwrt", "linux", "frr", "cisco_ios"}

// detectFromPrompt picks the profile whose prompt shape matches line.
func detectFromPrompt(line string) *Profile {
	for _, name := range detectionOrder {
		p := profiles[name]
		if p.detect.MatchString(line) {
			return p
		}
	}
	return nil
}

// detectFromConsole picks a profile from what the console printed before
// and including its prompt line: a banner that names the platform wins
// when that platform accepts the prompt ("Hello, this is FRRouting" above
// "R1# "), otherwise the prompt's shape decides.
func detectFromConsole(seen []byte, line string) *Profile {
	for _, name := range detectionOrder {
		p := profiles[name]
		if p.banner != nil && p.banner.Match(seen) && p.ModeOf(line) != ModeUnknown {
			return p
		}
	}
	return detectFromPrompt(line)
}

func anyPrompt(line string) bool {
	return detectFromPrompt(line) != nil
}

// flagValue returns the integer after flag (e.g. "-c" "3"), or def.
func flagValue(words []string, flag string, def int) int {
	for i := 0; i+1 < len(words); i++ {
		if words[i] == flag {
			if v, err := strconv.Atoi(words[i+1]); err == nil && v > 0 {
				return v
			}
		}
	}
	// Glued form, "-c3".
	for _, w := range words {
		if strings.HasPrefix(w, flag) && len(w) > len(flag) {
			if v, err := strconv.Atoi(w[len(flag):]); err == nil && v > 0 {
				return v
			}
		}
	}
	return def
}

// wordValue returns the integer after a keyword argument (Junos and VyOS
// "count 3", RouterOS "count=3"), or def.
func wordValue(words []string, key string, def int) int {
	for i, w := range words {
		v, ok := "", false
		if w == key && i+1 < len(words) {
			v, ok = words[i+1], true
		} else if rest, cut := strings.CutPrefix(w, key+"="); cut {
			v, ok = rest, true
		}
		if ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return def
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

func isAbbrev(word, full string, minLen int) bool {
	return len(word) >= minLen && strings.HasPrefix(full, word)
}

func buildProfiles() map[string]*Profile {
	re := regexp.MustCompile
	ciscoInterim := []*regexp.Regexp{
		re(`(?i)(\[confirm\]|\[yes/no\]:?|\[y/n\]:?|\(y/n\)\??|\? ?\[[^\]\n]*\]:?|\[[^\]\n]*\]\?|password:|username:)\s*$`),
	}
	ciscoAnswers := []Answer{
		{Prompt: re(`(?i)initial configuration dialog\? \[yes/no\]:?\s*$`), Reply: "no"},
		{Prompt: re(`(?i)terminate autoinstall\? \[yes(/no)?\]:?\s*$`), Reply: "yes"},
	}
	ciscoTimeouts := func(w []string) time.Duration {
		switch {
		case isAbbrev(w[0], "ping", 2):
			repeat := 5
			timeout := 2
			for i := 1; i+1 < len(w); i++ {
				if isAbbrev(w[i], "repeat", 1) {
					if v, err := strconv.Atoi(w[i+1]); err == nil && v > 0 {
						repeat = v
					}
				}
				if isAbbrev(w[i], "timeout", 2) {
					if v, err := strconv.Atoi(w[i+1]); err == nil && v > 0 {
						timeout = v
					}
				}
			}
			return secs(repeat*timeout + 5)
		case isAbbrev(w[0], "copy", 3), isAbbrev(w[0], "write", 2):
			return 120 * time.Second
		case isAbbrev(w[0], "show", 2) && len(w) > 1 && isAbbrev(w[1], "tech-support", 4):
			return 300 * time.Second
		case isAbbrev(w[0], "show", 2) && len(w) > 1 && (isAbbrev(w[1], "running-config", 3) || isAbbrev(w[1], "startup-config", 3)):
			return 60 * time.Second
		}
		return 0
	}
	execInConfig := re(`(?i)^\s*(write|wr|copy|show|sh|ping|clear)\b`)
	ciscoErrors := []*regexp.Regexp{
		re(`(?m)^\s*% ?(Invalid|Incomplete command|Ambiguous command|Unknown command|Unrecognized command|Bad |Error|Access denied|Authorization failed)`),
	}

	all := []*Profile{
		{
			Name:        "vpcs",
			Description: "Virtual PC Simulator (VPCS)",
			Newline:     "\n",
			// Three bytes in one write: the VPCS pty reads with VMIN=3, so a
			// lone "\n" waits 100 ms for the inter-byte timer; the spaces are
			// an empty command.
			Wake: "  \n",
			// Always with the trailing space, which is what tells it from IOS "R1>".
			UserPrompt: re(`^[\w.\-]+(?:\[\d+\])?> $`),
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*(Bad command|Invalid |Incomplete command|Address not changed|Command not found)`),
				// "save" that cannot write startup.vpc.
				re(`(?m)^failed: `),
			},
			Interrupt:      "\x03",
			DefaultTimeout: 10 * time.Second,
			// Writes startup.vpc in the node's directory, which GNS3 replays at every start.
			Save:    "save",
			detect:  re(`^[\w.\-]+(?:\[\d+\])?> $`),
			aliases: []string{"gns3_vpcs_telnet", "vpcs_telnet", "vpc"},
			endless: func(w []string) bool {
				return w[0] == "ping" && slices.Contains(w[1:], "-t") // "-t": until stopped
			},
			timeouts: func(w []string) time.Duration {
				switch w[0] {
				case "ip":
					if len(w) > 1 && (w[1] == "dhcp" || w[1] == "auto") {
						return 20 * time.Second
					}
					// Duplicate-address check: ~3 s.
					return 8 * time.Second
				case "ping":
					count := flagValue(w, "-c", 5)
					waitMS := flagValue(w, "-w", 1000)
					if waitMS < 1000 {
						waitMS = 1000
					}
					return time.Duration(count)*(time.Duration(waitMS)*time.Millisecond+time.Second) + 5*time.Second
				case "trace", "tracert", "traceroute":
					return secs(flagValue(w, "-m", 8)*3 + 5)
				case "sleep":
					if len(w) > 1 {
						if v, err := strconv.Atoi(w[1]); err == nil && v > 0 {
							return secs(v + 5)
						}
					}
				}
				return 0
			},
		},
		{
			Name:           "cisco_ios",
			Description:    "Cisco IOS, IOSv, IOSv-L2, IOS-XE, IOU and Dynamips routers",
			Newline:        "\r",
			Wake:           "\r",
			UserPrompt:     re(`^[\w.\-@/:]{1,63}>\s?$`),
			PrivPrompt:     re(`^[\w.\-@/:]{1,63}#\s?$`),
			ConfigPrompt:   re(`^[\w.\-@/:]{1,63}\([\w.\-@/:+]{0,32}\)#\s?$`),
			Pager:          re(`-{2}\s?More\s?-{2}\s*$`),
			PagerKey:       " ",
			Setup:          []string{"terminal length 0", "terminal width 512"},
			Enable:         "enable",
			ConfigEnter:    "configure terminal",
			ConfigExit:     "end",
			ErrorPatterns:  ciscoErrors,
			Interim:        ciscoInterim,
			Answers:        ciscoAnswers,
			Interrupt:      "\x1e",
			TextEntry:      re(`(?i)end with the character '(.)'`),
			DefaultTimeout: 30 * time.Second,
			Save:           "write memory",
			detect:         re(`^[\w.\-@/:]{1,63}(?:\([\w.\-@/:+]{0,32}\))?[>#]$`),
			aliases: []string{"cisco_ios_telnet", "cisco_xe", "cisco_xe_telnet", "cisco_iosxe", "ios", "iosv",
				"ios_xe", "iosxe", "cisco_iosv", "cisco", "iou", "dynamips", "cisco_nxos", "cisco_nxos_telnet"},
			timeouts:     ciscoTimeouts,
			execInConfig: execInConfig,
		},
		{
			Name:           "arista_eos",
			Description:    "Arista EOS (vEOS, cEOS)",
			Newline:        "\r",
			Wake:           "\r",
			UserPrompt:     re(`^[\w.\-@/:]{1,63}>\s?$`),
			PrivPrompt:     re(`^[\w.\-@/:]{1,63}#\s?$`),
			ConfigPrompt:   re(`^[\w.\-@/:]{1,63}\(config[\w.\-@/:+]{0,32}\)#\s?$`),
			Pager:          re(`-{2}\s?More\s?-{2}\s*$`),
			PagerKey:       " ",
			Setup:          []string{"terminal length 0", "terminal width 32767"},
			Enable:         "enable",
			ConfigEnter:    "configure terminal",
			ConfigExit:     "end",
			ErrorPatterns:  []*regexp.Regexp{re(`(?m)^\s*% ?(Invalid|Incomplete command|Ambiguous command|Unavailable command|Unrecognized command|Error|Cannot)`)},
			Interim:        ciscoInterim,
			Interrupt:      "\x03",
			TextEntry:      re(`(?i)type '(EOF)' on its own line`),
			DefaultTimeout: 30 * time.Second,
			Save:           "write memory",
			detect:         re(`^[\w.\-@/:]{1,63}(?:\(config[\w.\-@/:+]{0,32}\))?[>#]$`),
			aliases:        []string{"arista_eos_telnet", "eos", "arista", "veos", "ceos"},
			timeouts:       ciscoTimeouts,
			execInConfig:   execInConfig,
		},
		{
			Name:          "ruijie",
			Description:   "Ruijie RGOS",
			Newline:       "\r",
			Wake:          "\r",
			UserPrompt:    re(`^[\w.\-@/:]{1,63}>\s?$`),
			PrivPrompt:    re(`^[\w.\-@/:]{1,63}#\s?$`),
			ConfigPrompt:  re(`^[\w.\-@/:]{1,63}\([\w.\-@/:+]{0,32}\)#\s?$`),
			Pager:         re(`-{2}\s?More\s?-{2}\s*$`),
			PagerKey:      " ",
			Setup:         []string{"terminal length 0", "terminal width 256"},
			Enable:        "enable",
			ConfigEnter:   "configure terminal",
			ConfigExit:    "end",
			ErrorPatterns: ciscoErrors,
			Interim:       ciscoInterim,
			Answers: append([]Answer{
				// RGOS asks before a new router-id takes effect; answering
				// is what the user asked for by sending the command.
				{Prompt: re(`(?i)\[yes/no\]:?\s*$`), Reply: "yes", Command: re(`(?i)^\s*router-id\b`)},
			}, ciscoAnswers...),
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			Save:           "write memory",
			detect:         re(`^[\w.\-@/:]{1,63}(?:\([\w.\-@/:+]{0,32}\))?[>#]$`),
			aliases:        []string{"ruijie_os", "ruijie_telnet", "gns3_ruijie_telnet", "ruijie_rjos", "rgos"},
			timeouts:       ciscoTimeouts,
			execInConfig:   execInConfig,
		},
		{
			Name:         "huawei_vrp",
			Description:  "Huawei VRP and CloudEngine (VRP8, two-stage commit)",
			Newline:      "\r",
			Wake:         "\r",
			UserPrompt:   re(`^<[^<>\[\]\n]{1,63}>\s?$`),
			ConfigPrompt: re(`^\[[~*]?[^<>\[\]\n]{1,80}\]\s?$`),
			Pager:        re(`-{2,}\s?More\s?-{2,}\s*$`),
			PagerKey:     " ",
			Setup:        []string{"screen-length 0 temporary", "undo terminal monitor"},
			ConfigEnter:  "system-view",
			ConfigExit:   "return",
			Commit:       "commit",
			CommitWhen:   re(`^\[\*`),
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*Error\s*:`),
			},
			Interim: []*regexp.Regexp{
				re(`(?i)(\[y/n\]:?|\[yes/no\]:?|\(y/n\)(\[[yn]\])?:?|\[Y\(yes\)/N\(no\)/C\(cancel\)\]:?|password:|username:)\s*$`),
			},
			Answers: []Answer{
				// "save" asks before it overwrites the next-startup file: saving is what was asked.
				{Prompt: re(`(?i)continue\?\s*\[y/n\]:?\s*$`), Reply: "y", Command: re(`(?i)^\s*save\s*$`)},
			},
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			Save:           "save",
			detect:         re(`^(?:<[^<>\[\]\n]{1,63}>|\[[~*]?[^<>\[\]\n]{1,80}\])$`),
			aliases:        []string{"huawei", "huawei_telnet", "huawei_vrpv8", "huawei_vrpv8_telnet", "gns3_huawei_telnet_ce", "huawei_ce", "vrp", "cloudengine"},
			timeouts: func(w []string) time.Duration {
				if w[0] == "ping" {
					count := flagValue(w, "-c", 5)
					wait := flagValue(w, "-t", 2000)
					return time.Duration(count)*time.Duration(wait)*time.Millisecond + 5*time.Second
				}
				if w[0] == "save" || w[0] == "commit" {
					return 120 * time.Second
				}
				return 0
			},
		},
		{
			Name:         "juniper_junos",
			Description:  "Juniper Junos (vMX, vSRX, vQFX, vJunos)",
			Newline:      "\r",
			Wake:         "\r",
			UserPrompt:   re(`^[\w.\-]+@[\w.\-]+>\s?$`),
			ConfigPrompt: re(`^[\w.\-]+@[\w.\-]+#\s?$`),
			Pager:        re(`---\(more(?: \d+%)?\)---\s*$`),
			PagerKey:     " ",
			// Completion on space rewrites the echo ("sh ver" shows as
			// "show version"), which would break echo anchoring.
			Setup:       []string{"set cli screen-length 0", "set cli screen-width 1024", "set cli complete-on-space off"},
			ConfigEnter: "configure",
			ConfigExit:  "exit configuration-mode",
			Commit:      "commit",
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*(error:|syntax error|unknown command|missing argument|invalid (value|ip address|interface|command))`),
			},
			Interim: []*regexp.Regexp{
				re(`(?i)(\[yes,no\](\s*\(\w+\))?|password:)\s*$`),
			},
			Answers: []Answer{
				{Prompt: re(`(?i)exit with uncommitted changes\? \[yes,no\]`), Reply: "yes", Command: re(`^exit configuration-mode$`)},
			},
			Interrupt:      "\x03",
			PromptNoise:    re(`^(\[edit[^\]]*\]|\{(master|backup|primary|secondary|linecard)[^}]*\})$`),
			DefaultTimeout: 30 * time.Second,
			detect:         re(`^[\w.\-]+@[\w.\-]+[>#] $`),
			aliases:        []string{"juniper", "junos", "juniper_junos_telnet", "juniper_telnet", "vmx", "vsrx"},
			endless: func(w []string) bool {
				// Junos pings until interrupted; the interrupt prints the summary.
				return w[0] == "ping" && wordValue(w, "count", 0) == 0 || w[0] == "monitor" && len(w) > 1 && w[1] != "stop"
			},
			timeouts: func(w []string) time.Duration {
				switch w[0] {
				case "ping":
					return secs(wordValue(w, "count", 0)*2 + 5)
				case "commit", "request":
					return 180 * time.Second
				}
				return 0
			},
		},
		{
			Name:        "linux",
			Description: "Linux or BusyBox shell (Docker nodes, Linux VMs)",
			Newline:     "\n",
			Wake:        "\n",
			// Shell prompts end in "$ " or "# "; requiring the space keeps
			// output such as "50%" or "R1#" from passing for a prompt.
			UserPrompt: profilesLinuxPrompt,
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)(command not found|: not found$|: Permission denied$|^-?(?:ba|a|z|k|da)?sh: )`),
			},
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			detect:         re(`^(?:\([^)\n]*\)\s)?(?:[\w.\-]+@[\w.\-]+:[^\n]*|\[[\w.\-]+@[\w.\-]+[^\]\n]*\]|[/~][^\s]*|(?:ba|z|k|a|da)?sh-[\d.]+)?\s?[$#]\s$`),
			aliases:        []string{"linux_telnet", "docker", "generic", "generic_telnet", "alpine", "busybox", "shell"},
			timeouts:       linuxTimeouts,
			endless:        linuxEndless,
			status:         shellStatus,
			statusLine:     shellStatusLine,
		},
	}
	all = append(all, freeRouterProfiles(execInConfig)...)
	m := make(map[string]*Profile, len(all))
	for _, p := range all {
		m[p.Name] = p
	}
	return m
}
