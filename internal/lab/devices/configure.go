package devices

import (
	"context"
	"fmt"
	"strings"
)

// ConfigureOptions tune Configure.
type ConfigureOptions struct {
	// ContinueOnError keeps sending lines after one fails; by default the
	// rest are skipped, since later lines usually depend on earlier ones.
	ContinueOnError bool
	// Answers reply to interim prompts raised by the configuration lines.
	Answers []Answer
	// OnResult is called after every line that was sent (or blocked), so a
	// caller can record progress before the next line goes out.
	OnResult func(CommandResult)
	// OnSend is called just before a line goes out, so a caller can tell a line that was on its
	// way when the process died from one that was never sent. An error keeps the line (and
	// every line after it) from being sent: configuration mode is left and the error returned.
	OnSend func(line string) error
}

// SplitLines turns configuration input into the lines to send: multi-line
// strings are split, carriage returns and blank lines dropped.
func SplitLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, part := range strings.Split(l, "\n") {
			part = strings.TrimRight(part, "\r \t")
			if strings.TrimSpace(part) != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// Configure enters configuration mode, sends lines one by one and leaves
// configuration mode again (committing first on platforms that need it).
// The results hold one entry per line sent or blocked, plus one for the
// commit where the platform has one. On platforms without a configuration
// mode (VPCS, a Linux shell) the lines are simply run.
func (s *Session) Configure(ctx context.Context, lines []string) ([]CommandResult, error) {
	return s.ConfigureWith(ctx, lines, ConfigureOptions{})
}

// ConfigureWith is Configure with options.
func (s *Session) ConfigureWith(ctx context.Context, lines []string, o ConfigureOptions) ([]CommandResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return nil, s.broken
	}
	lines = SplitLines(lines)
	var results []CommandResult
	record := func(r CommandResult) {
		results = append(results, r)
		if o.OnResult != nil {
			o.OnResult(r)
		}
	}
	hasMode := s.profile.ConfigEnter != ""
	if hasMode {
		if err := s.ensureConfig(ctx); err != nil {
			return results, err
		}
	}
	var refused error
	for _, line := range lines {
		if hasMode && s.mode != ModeConfig && s.textDelim == "" {
			// A line such as "end" or "quit" left configuration mode.
			if err := s.ensureConfig(ctx); err != nil {
				return results, err
			}
		}
		if blocked, ok := s.blocked(line); ok {
			record(blocked)
			continue
		}
		if o.OnSend != nil {
			if refused = o.OnSend(line); refused != nil {
				break
			}
		}
		send := line
		if s.mode == ModeConfig && s.profile.execInConfig != nil && s.profile.execInConfig.MatchString(line) {
			send = "do " + strings.TrimSpace(line)
		}
		r, err := s.runLocked(ctx, Command{Text: send, Answers: o.Answers})
		if send != line {
			r.Command = strings.TrimRight(line, " \t") // the line as the caller gave it
		}
		record(r)
		if err != nil {
			return results, err
		}
		if r.Failed && !o.ContinueOnError {
			break
		}
	}
	if s.textDelim != "" {
		// Free-text entry (a banner) was never closed; abandon it rather
		// than store half a banner.
		delim := s.textDelim
		if _, err := s.resync(ctx); err != nil {
			return results, s.fail(err)
		}
		if len(results) > 0 {
			last := &results[len(results)-1]
			last.Failed = true
			last.Error = fmt.Sprintf("text entry was not closed with %q and was abandoned", delim)
		}
	}
	if hasMode {
		extra, err := s.leaveConfig(ctx, true)
		for _, r := range extra {
			record(r)
		}
		if err != nil {
			return results, err
		}
	}
	return results, refused
}

// blocked applies the session's policy to a user-supplied command.
func (s *Session) blocked(cmd string) (CommandResult, bool) {
	if s.opts.Policy == nil || s.textDelim != "" {
		return CommandResult{}, false
	}
	if ok, reason := s.opts.Policy.CheckPlatform(s.profile.Name, cmd); !ok {
		return CommandResult{Command: strings.TrimSpace(cmd), Failed: true, Blocked: true, Error: reason}, true
	}
	return CommandResult{}, false
}

func (s *Session) ensureConfig(ctx context.Context) error {
	if s.mode == ModeConfig {
		return nil
	}
	if s.mode == ModeUser && s.profile.Enable != "" {
		r, err := s.enable(ctx)
		if err != nil {
			return err
		}
		if s.mode == ModeUser {
			return fmt.Errorf("cannot enter privileged mode on %s to configure it: %s", s.addr, describe(r))
		}
	}
	r, err := s.runLocked(ctx, Command{Text: s.profile.ConfigEnter})
	if err != nil {
		return err
	}
	if s.mode != ModeConfig {
		return fmt.Errorf("%q did not enter configuration mode on %s: %s", s.profile.ConfigEnter, s.addr, describe(r))
	}
	return nil
}

func describe(r CommandResult) string {
	switch {
	case r.Error != "":
		return r.Error
	case r.Output != "":
		return r.Output
	}
	return "prompt is " + r.Prompt
}

// enable moves a user-mode prompt to privileged mode. Without a configured
// secret a password prompt gets empty answers until the device gives up,
// which returns the console to its user prompt.
func (s *Session) enable(ctx context.Context) (CommandResult, error) {
	c := Command{Text: s.profile.Enable}
	c.Answers = []Answer{{Prompt: passwordPrompt, Reply: s.opts.EnableSecret, Hidden: true}}
	r, err := s.runLocked(ctx, c)
	if err != nil {
		return r, err
	}
	if s.mode == ModeUser {
		msg := "the enable secret was refused"
		if s.opts.EnableSecret == "" {
			msg = "enable asks for a password and no enable secret is configured"
		}
		if r.Error != "" {
			msg += " (device said: " + r.Error + ")"
		}
		r.Failed, r.Error = true, msg
	}
	return r, nil
}

// leaveConfig returns to exec mode. With commit set it commits first on
// platforms that stage configuration; without it (a console someone else
// left in configuration mode) it refuses to discard or commit their work.
func (s *Session) leaveConfig(ctx context.Context, commit bool) ([]CommandResult, error) {
	var results []CommandResult
	committed := false
	for i := 0; i < 4 && s.mode == ModeConfig; i++ {
		if s.profile.Commit != "" && !committed && (s.profile.CommitWhen == nil || s.profile.CommitWhen.MatchString(s.prompt)) {
			if !commit {
				if s.profile.CommitWhen != nil {
					return results, fmt.Errorf("the configuration on %s has uncommitted changes (prompt %q); commit or discard them first",
						s.addr, strings.TrimSpace(s.prompt))
				}
			} else {
				r, err := s.runLocked(ctx, Command{Text: s.profile.Commit})
				results = append(results, r)
				if err != nil {
					return results, err
				}
				committed = true
			}
		}
		r, err := s.runLocked(ctx, Command{Text: s.profile.ConfigExit})
		if err != nil {
			return results, err
		}
		if r.Failed && s.mode == ModeConfig {
			return results, fmt.Errorf("%q failed on %s: %s", s.profile.ConfigExit, s.addr, describe(r))
		}
	}
	if s.mode == ModeConfig {
		return results, fmt.Errorf("%s is still in configuration mode (prompt %q)", s.addr, strings.TrimSpace(s.prompt))
	}
	return results, nil
}
