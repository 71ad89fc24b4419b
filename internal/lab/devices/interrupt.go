package devices

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// resync interrupts whatever runs on the console and waits for a prompt,
// then falls back to plain Enters (which also get past a password prompt).
// It returns what the console printed before that prompt (a ping's
// statistics, printed on Ctrl-C), without the echoed "^C".
func (s *Session) resync(ctx context.Context) (string, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ResyncTimeout)
	defer cancel()
	stop := s.watch(rctx)
	defer stop()
	s.stats.Interrupts++
	var printed []byte
	pager := false
	for round := 0; round < 4; round++ {
		keys := s.profile.Newline
		if round == 0 && s.profile.Interrupt != "" {
			keys = s.profile.Interrupt
		}
		if last, _ := lastLine(s.scr.buf); stuckPager.MatchString(last) {
			pager = true
		}
		if round > 0 && pager {
			keys = "q" // less and more ignore Ctrl-C
		}
		if round > 0 {
			printed = append(printed, s.scr.buf...)
		}
		s.scr.reset()
		if err := s.send(keys, false); err != nil {
			return "", err
		}
		deadline := time.Now().Add(1500 * time.Millisecond)
		if d, ok := rctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		for {
			line, ok, err := s.awaitPrompt(rctx, deadline)
			if err == errQuiet || err == nil && !ok {
				break
			}
			if err != nil {
				if rctx.Err() != nil {
					return "", fmt.Errorf("%w: %s did not show a prompt within %s of an interrupt", ErrNoPrompt, s.addr, s.opts.ResyncTimeout)
				}
				return "", err
			}
			_, ls := lastLine(s.scr.buf)
			printed = append(printed, s.scr.buf[:ls]...)
			s.setPrompt(line)
			s.textDelim = ""
			return interruptEcho.ReplaceAllString(tidyOutput(string(printed)), ""), nil
		}
		if rctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("%w: %s did not show a prompt within %s of an interrupt", ErrNoPrompt, s.addr, s.opts.ResyncTimeout)
}

// stuckPager is the last line of a pager that paging-off setup did not prevent (less's ":" or
// "(END)", more's "--More--"), which waits for "q".
var stuckPager = regexp.MustCompile(`^\s*(:|\(END\)|--More--(\s*\(\d+%\))?|lines \d+-\d+(/\d+)?( \(END\)|\s+\d+%)?)\s*$`)

// interruptEcho is a terminal's echo of an interrupt key on a line of its own.
var interruptEcho = regexp.MustCompile(`(?m)^\s*\^[C^\]]\s*(\n|$)`)

// keyName names an interrupt key for people.
func keyName(key string) string {
	switch key {
	case "\x03":
		return "Ctrl-C"
	case "\x1e":
		return "Ctrl-^"
	case "":
		return "Enter"
	}
	return fmt.Sprintf("%q", key)
}

// joinOutput puts the output printed after an interrupt under the output
// printed before it.
func joinOutput(before, after string) string {
	before, after = strings.TrimRight(before, "\n"), strings.Trim(after, "\n")
	switch {
	case after == "":
		return before
	case before == "":
		return after
	}
	return before + "\n" + after
}
