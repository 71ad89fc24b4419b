package devices

import (
	"context"
	"time"
)

func (s *Session) newline() string {
	if s.profile != nil {
		return s.profile.Newline
	}
	return "\r\n"
}

func (s *Session) isPrompt(line string) bool {
	if s.profile != nil {
		return s.profile.ModeOf(line) != ModeUnknown
	}
	return anyPrompt(line)
}

func (s *Session) setPrompt(line string) {
	s.prompt = line
	if s.profile != nil {
		s.mode = s.profile.ModeOf(line)
	}
}

// awaitPrompt reads until the screen ends with a prompt line that stays
// quiet, answering pagers on the way. When the screen ends with a
// non-prompt line and goes quiet, it returns that line with ok=false.
// errQuiet means the deadline passed.
func (s *Session) awaitPrompt(ctx context.Context, deadline time.Time) (string, bool, error) {
	for {
		if _, err := s.fill(ctx, deadline); err != nil {
			return "", false, err
		}
		for {
			s.boundScreen()
			line, start := lastLine(s.scr.buf)
			if len(s.scr.buf) == 0 || start == 0 && line == "" {
				break
			}
			if s.profile != nil && s.profile.Pager != nil {
				if loc := s.profile.Pager.FindStringIndex(line); loc != nil {
					s.scr.buf = s.scr.buf[:start+loc[0]]
					s.stats.Pages++
					if err := s.send(s.profile.PagerKey, false); err != nil {
						return "", false, err
					}
					break
				}
			}
			quiet, err := s.quietFor(ctx, deadline, s.opts.PromptSettle)
			if err != nil {
				return "", false, err
			}
			if !quiet {
				continue
			}
			return line, s.isPrompt(line), nil
		}
	}
}

// settle reads until the console has been silent for SettleQuiet.
func (s *Session) settle(ctx context.Context, max time.Duration) error {
	end := time.Now().Add(max)
	for {
		d := time.Now().Add(s.opts.SettleQuiet)
		if d.After(end) {
			d = end
		}
		_, err := s.fill(ctx, d)
		s.boundScreen()
		if err == errQuiet {
			return nil
		}
		if err != nil {
			return err
		}
		if !time.Now().Before(end) {
			return nil
		}
	}
}

// boundScreen keeps the last MaxOutput bytes of the screen while only its last line is read
// (waiting for a prompt, letting a console settle). A console that never stops printing (a log
// storm, `yes` at a shell) otherwise grew the screen by all it printed until the deadline, and
// a line without end made every look at the last line copy all of it: 64 MB of console output
// cost 283 MB, or 10 GB and 15 s as one line. A command's own exchange bounds its output
// itself, and keeps positions in the screen that this would move.
func (s *Session) boundScreen() {
	if over := len(s.scr.buf) - s.opts.MaxOutput; over > 0 {
		s.scr.buf = append(s.scr.buf[:0], s.scr.buf[over:]...)
	}
}

// quietFor reports whether no data arrives within d (bounded by deadline).
// When data does arrive it has been added to the screen.
func (s *Session) quietFor(ctx context.Context, deadline time.Time, d time.Duration) (bool, error) {
	until := time.Now().Add(d)
	if until.After(deadline) {
		until = deadline
	}
	_, err := s.fill(ctx, until)
	if err == errQuiet {
		return true, nil
	}
	return false, err
}
