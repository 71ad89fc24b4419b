package devices

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The routers most GNS3 users run without a vendor licence: FRRouting (the
// marketplace appliance, whose console is vtysh), VyOS, MikroTik RouterOS
// (CHR) and OpenWrt. Their Linux-shell relatives share linuxTimeouts and
// linuxEndless with the plain "linux" profile.

// shellPrompt is a root or user shell prompt of a Linux appliance
// ("root@frr:~# "): on an FRR console it means someone left vtysh.
var shellPrompt = regexp.MustCompile(`^[\w.\-]+@[\w.\-]+:[^\n]*[#$] $`)

func linuxTimeouts(w []string) time.Duration {
	switch w[0] {
	case "ping", "ping6", "arping":
		wait := flagValue(w, "-w", 1)
		return secs(flagValue(w, "-c", 0) + wait + 5)
	case "sleep":
		if len(w) > 1 {
			if v, err := strconv.Atoi(w[1]); err == nil {
				return secs(v + 5)
			}
		}
	}
	return 0
}

// linuxEndless: commands a shell runs until Ctrl-C. "-w" (a deadline) bounds
// a ping as well as "-c" does.
func linuxEndless(w []string) bool {
	has := func(flags ...string) bool {
		for _, f := range flags {
			if flagValue(w, f, 0) > 0 || slices.Contains(w, f) {
				return true
			}
		}
		return false
	}
	switch w[0] {
	case "ping", "ping6", "arping":
		return !has("-c", "-w")
	case "tail":
		return has("-f", "-F", "--follow")
	case "journalctl", "logread":
		return has("-f", "--follow")
	case "dmesg":
		return has("-w", "--follow")
	case "tcpdump":
		return !has("-c")
	case "watch", "top", "htop", "iftop", "mtr":
		return !(w[0] == "top" && has("-n")) && !(w[0] == "mtr" && has("-c", "--report", "-r"))
	case "ip":
		return len(w) > 1 && w[1] == "monitor"
	}
	return false
}

func freeRouterProfiles(execInConfig *regexp.Regexp) []*Profile {
	re := regexp.MustCompile
	return []*Profile{
		{
			Name:        "frr",
			Description: "FRRouting vtysh (GNS3's FRR appliance; Debian, Alpine and Docker FRR)",
			Newline:     "\r",
			Wake:        "\r",
			// vtysh has no ">" mode; its prompts end in "# " and follow the
			// hostname ("frr# " until one is set).
			PrivPrompt:   re(`^[\w.\-]{1,63}#\s?$`),
			ConfigPrompt: re(`^[\w.\-]{1,63}\([\w.\-/:]{1,40}\)#\s?$`),
			// Paging is off by default; a pager that slips through is paged.
			Pager:       re(`-{2}\s?More\s?-{2}\s*$`),
			PagerKey:    " ",
			Setup:       []string{"terminal length 0"},
			ConfigEnter: "configure terminal",
			ConfigExit:  "end",
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*% ?(Unknown command|Command incomplete|Ambiguous command|Invalid|Malformed|Inconsistent|Cannot|Can't find|No such|There is no|Specify|Configuration failed|Error|Interface .* not found|Please )`),
			},
			Interim: []*regexp.Regexp{re(`(?i)(\[y/n\]\??:?|\[yes/no\]:?|password:)\s*$`)},
			Answers: []Answer{
				// "exit" at the top of vtysh drops to the appliance's root
				// shell; "vtysh" brings the console back where it belongs.
				{Prompt: shellPrompt, Reply: "vtysh"},
			},
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			// Integrated configuration: one frr.conf for every daemon.
			Save: "write memory",
			// The trailing space tells "R1# " from IOS "R1#".
			detect:       re(`^[\w.\-]{1,63}(?:\([\w.\-/:]{1,40}\))?# $`),
			banner:       re(`Hello, this is FRRouting`),
			aliases:      []string{"frrouting", "frr_vtysh", "vtysh", "frr_telnet"},
			execInConfig: execInConfig,
			timeouts: func(w []string) time.Duration {
				switch {
				case w[0] == "write" || w[0] == "copy":
					return 60 * time.Second
				case w[0] == "show" && len(w) > 1 && isAbbrev(w[1], "running-config", 3):
					return 60 * time.Second
				}
				return 0
			},
			// vtysh's ping takes no count: it pings until Ctrl-C, which
			// prints the statistics.
			endless: func(w []string) bool { return w[0] == "ping" },
		},
		{
			Name:         "vyos",
			Description:  "VyOS (configure / set / commit / save)",
			Newline:      "\r",
			Wake:         "\r",
			UserPrompt:   re(`^[\w.\-]+@[\w.\-]+:[^\n]*\$\s?$`),
			ConfigPrompt: re(`^[\w.\-]+@[\w.\-]+#\s?$`),
			Setup:        []string{"set terminal length 0", "set terminal width 0"},
			ConfigEnter:  "configure",
			ConfigExit:   "exit",
			Commit:       "commit",
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*(Invalid command:|Configuration path: .* is not valid|Set failed|Delete failed|Commit failed|Cannot exit: configuration modified|Error:|% Invalid|\[ .* \] failed)`),
			},
			Interim:        []*regexp.Regexp{re(`(?i)(\[y/n\]:?|\[confirm\]|password:)\s*$`)},
			Interrupt:      "\x03",
			PromptNoise:    re(`^\[edit[^\]]*\]$`),
			DefaultTimeout: 30 * time.Second,
			Save:           "save",
			SaveInConfig:   true,
			detect:         re(`^vyos@[\w.\-]+(?::[^\n]*\$|#) $`),
			banner:         re(`Welcome to VyOS`),
			aliases:        []string{"vyos_telnet", "vyatta", "vyatta_vyos"},
			timeouts: func(w []string) time.Duration {
				switch w[0] {
				case "commit", "save", "commit-confirm":
					return 120 * time.Second
				case "ping":
					return secs(wordValue(w, "count", 0)*2 + 5)
				}
				return 0
			},
			endless: func(w []string) bool {
				return w[0] == "ping" && wordValue(w, "count", 0) == 0 || w[0] == "monitor"
			},
		},
		{
			Name:        "mikrotik_routeros",
			Description: "MikroTik RouterOS (CHR): /ip address add …, changes apply at once",
			Newline:     "\r",
			Wake:        "\r",
			UserPrompt:  re(`^\[[^\]\n]+@[^\]\n]+\]\s?(?:/[^>\n]*)?>\s?$`),
			Pager:       re(`-- \[Q quit\|D dump\|[^\]\n]*\]\s*$`),
			PagerKey:    "D",
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)^\s*(bad command name|expected end of command|syntax error|failure:|input does not match any value|invalid value|no such item|ambiguous value|value of \S+ (out of range|expects))`),
			},
			Interim: []*regexp.Regexp{re(`(?i)(\[y/n\]:?|password:|new password>)\s*$`)},
			Answers: []Answer{
				// First login on a fresh CHR.
				{Prompt: re(`(?i)see the software license\? \[Y/n\]:?\s*$`), Reply: "n"},
			},
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			detect:         re(`^\[[\w.\-]+@[^\]\n]+\] (?:/[^>\n]*)?> $`),
			banner:         re(`MikroTik RouterOS`),
			aliases:        []string{"mikrotik", "routeros", "mikrotik_routeros_telnet", "chr", "mikrotik_chr"},
			timeouts: func(w []string) time.Duration {
				if strings.TrimPrefix(w[0], "/") == "ping" {
					return secs(wordValue(w, "count", 0) + 5)
				}
				return 0
			},
			endless: func(w []string) bool {
				verb := strings.TrimPrefix(w[0], "/")
				line := strings.Join(w, " ")
				return verb == "ping" && wordValue(w, "count", 0) == 0 ||
					strings.Contains(line, "torch") || strings.Contains(line, "monitor-traffic") ||
					slices.Contains(w, "follow") || slices.Contains(w, "follow-only") ||
					strings.HasSuffix(line, " monitor") || strings.Contains(line, " monitor ") && !strings.Contains(line, "once")
			},
		},
		{
			Name:        "openwrt",
			Description: "OpenWrt (BusyBox shell; configuration with uci)",
			Newline:     "\n",
			Wake:        "\n",
			UserPrompt:  profilesLinuxPrompt,
			ErrorPatterns: []*regexp.Regexp{
				re(`(?m)(command not found|: not found$|: Permission denied$|^-?(?:ba|a)?sh: |^uci: (Invalid argument|Entry not found|Parse error|I/O error))`),
			},
			Interrupt:      "\x03",
			DefaultTimeout: 30 * time.Second,
			detect:         re(`^root@OpenWrt:[^\n]*# $`),
			banner:         re(`OpenWrt|W I R E L E S S   F R E E D O M`),
			aliases:        []string{"openwrt_telnet", "lede"},
			timeouts:       linuxTimeouts,
			endless:        linuxEndless,
		},
	}
}

// profilesLinuxPrompt is a shell prompt as the linux profile accepts it.
var profilesLinuxPrompt = regexp.MustCompile(`^(?:\([^)\n]*\)\s)?(?:[\w.\-]+@[\w.\-]+(?::[^\n]*?)?|\[[\w.\-]+@[\w.\-]+[^\]\n]*\]|[/~][^\s]*|[\w.\-]*-\d[\d.]*|[\w.\-]+)?\s?[$#] $`)
