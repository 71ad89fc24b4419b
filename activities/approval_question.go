package activities

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// Bounds of an approval question, so a 200-device job still reads as a message: devices shown,
// lines shown per device, and lines of the current configuration quoted per device.
const (
	questionDevices      = 8
	questionLinesPer     = 12
	questionConfigLines  = 12
	questionConfigMaxLen = 160
)

// Question is the approval put as a message, for people whose client knows only the chat's
// plain events (GNS3's AI panel, curl): what would happen, per device the lines with the
// safety verdicts and the relevant part of the current configuration, and how to answer.
// Anything left out for length is said.
func (p ApprovalPlan) Question(expires time.Time) string {
	var b strings.Builder
	if p.Kind == "destructive" {
		fmt.Fprintf(&b, "**Approval needed** before `%s` runs: %s.\n\n", p.Tool, p.Summary)
	} else {
		fmt.Fprintf(&b, "**Approval needed** before `%s` changes the lab: %s.\n", p.Tool, lowerFirst(p.Summary))
	}
	for i, d := range p.Devices {
		if i == questionDevices {
			rest := p.Devices[i:]
			names := make([]string, 0, len(rest))
			lines := 0
			for _, r := range rest {
				names = append(names, r.Name)
				lines += len(r.Lines)
			}
			fmt.Fprintf(&b, "\n…and %d more device(s) not shown here (%d line(s)): %s. The full plan is in the approvals list.\n",
				len(rest), lines, clipList(names, 20))
			break
		}
		writeQuestionDevice(&b, d)
	}
	for _, f := range p.Failed {
		fmt.Fprintf(&b, "\n- **%s** is left out: %s\n", f.Name, f.Error)
	}
	b.WriteString("\nReply **approve** to go ahead, **reject** to cancel, or say what to change. " +
		"**approve all** also approves every further change the copilot asks for in this answer.")
	if !expires.IsZero() {
		fmt.Fprintf(&b, " Without an answer by %s UTC nothing is done.", expires.UTC().Format("2006-01-02 15:04"))
	}
	return b.String()
}

func writeQuestionDevice(b *strings.Builder, d PlanDevice) {
	platform := ""
	if d.Platform != "" {
		platform = " (" + d.Platform + ")"
	}
	fmt.Fprintf(b, "\n**%s**%s would be sent:\n\n```\n", d.Name, platform)
	var blocked []PlanLine
	shown := 0
	for _, l := range d.Lines {
		if l.Verdict == "blocked" {
			blocked = append(blocked, l)
			continue
		}
		if shown == questionLinesPer {
			continue
		}
		mark := ""
		if l.Verdict == "read" {
			mark = "    # only reads"
		}
		b.WriteString(clipLine(l.Command) + mark + "\n")
		shown++
	}
	if sent := len(d.Lines) - len(blocked); sent > shown {
		fmt.Fprintf(b, "# …%d more line(s) not shown\n", sent-shown)
	}
	b.WriteString("```\n")
	for _, l := range blocked {
		fmt.Fprintf(b, "- blocked, will not be sent: `%s` (%s)\n", clipLine(l.Command), l.Reason)
	}
	writeUndoNotes(b, d)
	switch {
	case d.ReadError != "":
		fmt.Fprintf(b, "\nIts current configuration could not be read: %s\n", d.ReadError)
	case strings.TrimSpace(d.CurrentConfig) != "":
		part, left := relevantConfig(d.CurrentConfig, d.Lines)
		what := "Its current configuration"
		if d.ReadCommand != "" {
			what += " (`" + d.ReadCommand + "`)"
		}
		if left > 0 {
			fmt.Fprintf(b, "\n%s, the part these lines touch (%d other line(s) left out):\n\n```\n%s\n```\n", what, left, part)
		} else {
			fmt.Fprintf(b, "\n%s:\n\n```\n%s\n```\n", what, part)
		}
	}
}

// writeUndoNotes says, on an undo, what its lines leave and how the device changed since the
// job: approving applies the lines on top of those changes, so they must be seen first.
func writeUndoNotes(b *strings.Builder, d PlanDevice) {
	for _, l := range d.NotUndone {
		fmt.Fprintf(b, "- not undone by these lines: %s\n", l)
	}
	c := d.ChangedSince
	switch {
	case c == nil:
	case c.Unknown != "":
		fmt.Fprintf(b, "\n**Changed since the job?** %s.\n", c.Unknown)
	default:
		b.WriteString("\n**Changed since the job** (by someone else, or by hand): these lines differ from what the job left, " +
			"and approving applies the undo on top of them.\n\n```\n")
		shown := 0
		for _, group := range []struct {
			mark  string
			lines []string
		}{{"- ", c.Removed}, {"+ ", c.Added}} {
			for _, l := range group.lines {
				if shown < questionLinesPer {
					b.WriteString(group.mark + clipLine(l) + "\n")
				}
				shown++
			}
		}
		if shown > questionLinesPer {
			fmt.Fprintf(b, "# …%d more line(s) not shown\n", shown-questionLinesPer)
		}
		b.WriteString("```\n")
	}
}

// relevantConfig picks the lines of a configuration that the planned lines touch: those that
// start with a planned line's first word (interface, ip, hostname, router …) and the lines of
// their blocks. A short configuration is quoted whole. It returns the part and how many lines
// it left out.
func relevantConfig(config string, planned []PlanLine) (string, int) {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(config, "\r", ""), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, clipLine(l))
		}
	}
	if len(lines) <= questionConfigLines {
		return strings.Join(lines, "\n"), 0
	}
	words := map[string]bool{}
	for _, p := range planned {
		f := strings.Fields(strings.ToLower(p.Command))
		if len(f) > 0 && f[0] != "no" && f[0] != "end" && f[0] != "exit" {
			words[f[0]] = true
		} else if len(f) > 1 && f[0] == "no" {
			words[f[1]] = true
		}
	}
	var keep []string
	inBlock := false
	for _, l := range lines {
		top := l == strings.TrimLeft(l, " \t")
		f := strings.Fields(strings.ToLower(l))
		if top {
			inBlock = len(f) > 0 && words[f[0]]
		}
		if inBlock && len(keep) < questionConfigLines {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		keep = lines[:questionConfigLines]
	}
	return strings.Join(keep, "\n"), len(lines) - len(keep)
}

func clipLine(s string) string {
	if utf8.RuneCountInString(s) <= questionConfigMaxLen {
		return s
	}
	r := []rune(s)
	return string(r[:questionConfigMaxLen]) + "…"
}

func clipList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToLower(string(r)) + s[n:]
}

// OutcomeSentence says in a sentence how an approval ended, for people reading the chat.
func OutcomeSentence(tool, status, decidedBy, comment string, standing bool, standingOf string) string {
	by := ""
	if decidedBy != "" {
		by = " by " + decidedBy
	}
	switch status {
	case domain.ApprovalApproved:
		switch {
		case standingOf != "":
			return fmt.Sprintf("Approved by the earlier **approve all**%s: `%s` goes ahead.", by, tool)
		case standing:
			return fmt.Sprintf("**Approved**%s, with approve all: `%s` goes ahead, and further changes in this answer will not ask again.", by, tool)
		}
		return fmt.Sprintf("**Approved**%s: `%s` goes ahead.", by, tool)
	case domain.ApprovalRejected:
		if comment != "" {
			return fmt.Sprintf("**Rejected**%s: nothing was sent. Your words go to the copilot: “%s”", by, comment)
		}
		return fmt.Sprintf("**Rejected**%s: nothing was sent.", by)
	case domain.ApprovalExpired:
		return "The approval **expired** without an answer: nothing was sent."
	}
	return "The approval ended: " + status + "."
}
