package devices

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Run sends one command and returns its cleaned output. An error means the
// session is unusable (connection lost, context cancelled); problems of the
// command itself are reported in the result.
func (s *Session) Run(ctx context.Context, cmd string) (CommandResult, error) {
	return s.RunCommand(ctx, Command{Text: cmd})
}

// RunCommand is Run with a per-command timeout and interim-prompt answers.
func (s *Session) RunCommand(ctx context.Context, c Command) (CommandResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return CommandResult{Command: strings.TrimSpace(c.Text)}, s.broken
	}
	if r, blocked := s.blocked(c.Text); blocked {
		return r, nil
	}
	return s.runLocked(ctx, c)
}

func validCommand(cmd string) error {
	if !utf8.ValidString(cmd) {
		return fmt.Errorf("command %q is not valid UTF-8", cmd)
	}
	for _, r := range cmd {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("command %q contains a control character (%U); send one line per command", cmd, r)
		}
	}
	return nil
}

func (s *Session) timeoutFor(c Command) time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	d, ok := s.profile.timeoutRule(c.Text)
	if !ok && s.opts.DefaultTimeout > 0 {
		d = s.opts.DefaultTimeout
	}
	return time.Duration(float64(d) * s.opts.TimeoutScale)
}

func (s *Session) runLocked(ctx context.Context, c Command) (CommandResult, error) {
	text := strings.TrimRight(c.Text, " \t")
	res := CommandResult{Command: text}
	if s.broken != nil {
		return res, s.broken
	}
	if err := validCommand(text); err != nil {
		res.Failed, res.Error = true, err.Error()
		return res, nil
	}
	inText := s.textDelim != ""
	stop := s.watch(ctx)
	defer stop()

	s.stats.Commands++
	start := time.Now()
	out, err := s.exchange(ctx, s.profile.withStatus(text, inText), s.timeoutFor(c), c.Answers, inText)
	res.Duration = time.Since(start)
	res.Output = out.output
	if err != nil {
		if s.broken == nil && ctx.Err() != nil {
			// Leave the console usable for the next caller.
			if _, rerr := s.resync(ctx); rerr != nil {
				s.fail(rerr)
			}
		}
		res.Failed, res.Error = true, err.Error()
		return res, err
	}
	switch {
	case out.timedOut, out.unanswered != "", out.overflow:
		if err := s.interrupted(ctx, c, out, &res, start); err != nil {
			return res, err
		}
	case out.textEntry != "":
		s.textDelim = out.textEntry
	default:
		if inText && strings.Contains(text, s.textDelim) {
			s.textDelim = ""
		}
		s.judge(&res)
	}
	if !inText || s.textDelim == "" {
		if out.prompt != "" {
			s.setPrompt(out.prompt)
		}
	}
	res.Prompt = strings.TrimSpace(s.prompt)
	return res, nil
}

// interrupted stops a command that did not come back to a prompt (its time ran out, or it asked
// a question nobody answers) and tells the result why: the expected end of a command that only
// ends when interrupted, a timeout, or the question.
func (s *Session) interrupted(ctx context.Context, c Command, out exchangeOutcome, res *CommandResult, start time.Time) error {
	limit := s.timeoutFor(c).Round(time.Millisecond)
	tail, rerr := s.resync(ctx)
	res.Output, _, _ = s.profile.exitStatus(joinOutput(res.Output, tail))
	res.Duration = time.Since(start)
	res.Stopped = true
	switch {
	case out.overflow:
		res.Output = joinOutput(firstBytes(res.Output, s.opts.MaxOutput), fmt.Sprintf("[output cut at %d bytes]", s.opts.MaxOutput))
		if !s.profile.OpenEnded(res.Command) {
			res.Failed = true
			res.Error = fmt.Sprintf("the command printed more than %d bytes and was stopped with %s (the first %d are shown)",
				s.opts.MaxOutput, keyName(s.profile.Interrupt), s.opts.MaxOutput)
		}
	case out.unanswered != "":
		res.Failed = true
		res.Error = fmt.Sprintf("the device asked %q and no answer was given for it; the command was interrupted", out.unanswered)
	case c.Timeout == 0 && s.profile.OpenEnded(res.Command):
		// Its expected end: what it printed is the answer.
		res.Output = joinOutput(res.Output, fmt.Sprintf("[stopped after %s with %s: this command runs until interrupted]", limit, keyName(s.profile.Interrupt)))
	default:
		res.Failed, res.TimedOut = true, true
		res.Error = fmt.Sprintf("no prompt within %s; the command was stopped with %s (its output so far is shown)", limit, keyName(s.profile.Interrupt))
	}
	if rerr != nil {
		return s.fail(fmt.Errorf("console did not return to a prompt after an interrupt: %w", rerr))
	}
	return nil
}

// judge reads a finished command's outcome from its output: the exit status a shell printed,
// and the platform's error messages.
func (s *Session) judge(res *CommandResult) {
	output, status, ok := s.profile.exitStatus(res.Output)
	res.Output = output
	if msg, failed := s.profile.failure(res.Output); failed {
		res.Failed, res.Error = true, msg
	} else if ok && status != 0 {
		res.Failed, res.Error = true, fmt.Sprintf("exit status %d", status)
	}
}

// firstBytes is at most the first n bytes of text, cut at a line break (or a rune boundary
// when a single line is longer).
func firstBytes(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		return cut[:i]
	}
	return strings.ToValidUTF8(cut, "")
}
