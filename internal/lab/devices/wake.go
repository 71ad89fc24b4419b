package devices

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

var (
	loginPrompt    = regexp.MustCompile(`(?i)(user ?name|login)\s*:\s*$`)
	passwordPrompt = regexp.MustCompile(`(?i)password\s*:\s*$`)
	pressReturn    = regexp.MustCompile(`(?i)press (return|enter) to (get started|activate this console)`)
)

// waking is the wake-up of a console in progress: Enters sent with a wait that doubles each
// attempt, the logins answered, and what the console last showed, for the error if no prompt comes.
type waking struct {
	s *Session
	// key is the Enter sent: the platform's, or one that suits every platform when it is not known.
	key  string
	wait time.Duration
	// busyAt is when a console that has sent nothing at all counts as busy.
	busyAt        time.Time
	logins        int
	tail, unknown string
}

// wakeStep is what a wake-up attempt does after a line the console showed that is no prompt.
type wakeStep int

const (
	// wakeWait: keep waiting until the attempt's deadline.
	wakeWait wakeStep = iota
	// wakeAnswered: the console was answered (a login, an Enter it asked for); wait afresh.
	wakeAnswered
	// wakeUnknown: the line is nothing this session can answer; the attempt is over.
	wakeUnknown
	// wakePrompt: the line is the prompt of the platform the console turned out to be.
	wakePrompt
)

// wake sends Enter until the console shows a fresh prompt. It returns the prompt line and how
// many attempts it took.
func (s *Session) wake(ctx context.Context) (string, int, error) {
	w := &waking{s: s, key: " \r\n", wait: s.opts.WakeTimeout, busyAt: s.opened.Add(s.opts.BusyTimeout)}
	if s.profile != nil {
		w.key = s.profile.Wake
	} // else: one Enter everywhere, three bytes for vpcs
	for attempt := 1; attempt <= s.opts.WakeAttempts; attempt++ {
		if s.received == 0 && !time.Now().Before(w.busyAt) {
			break
		}
		line, ok, err := w.attempt(ctx)
		if err != nil {
			return "", attempt, err
		}
		if ok {
			return line, attempt, nil
		}
		if t := strings.TrimSpace(string(s.scr.buf)); t != "" {
			w.tail = t
		}
		w.wait *= 2
	}
	return "", 0, w.failure()
}

// attempt sends one wake-up Enter and follows the console until it shows a prompt (ok), a line
// it cannot answer, or silence.
func (w *waking) attempt(ctx context.Context) (string, bool, error) {
	s := w.s
	s.scr.reset()
	if err := s.send(w.key, false); err != nil {
		return "", false, err
	}
	deadline := time.Now().Add(w.wait)
	if s.received == 0 && deadline.After(w.busyAt) {
		deadline = w.busyAt
	}
	for {
		line, ok, err := s.awaitPrompt(ctx, deadline)
		switch {
		case err == errQuiet:
			return "", false, nil
		case err != nil:
			return "", false, err
		case ok:
			return line, true, nil
		}
		next, err := w.onLine(line)
		switch {
		case err != nil:
			return "", false, err
		case next == wakePrompt:
			return line, true, nil
		case next == wakeUnknown:
			return "", false, nil
		case next == wakeAnswered:
			deadline = time.Now().Add(w.wait)
		}
	}
}

// onLine handles a line the console showed and waits on that is not a prompt of the session's
// platform.
func (w *waking) onLine(line string) (wakeStep, error) {
	s := w.s
	if line == "" {
		// Output ended with a line break and stopped: a console that says "Press RETURN to get
		// started" wants an Enter.
		if !pressReturn.Match(s.scr.buf) {
			return wakeWait, nil
		}
		s.scr.reset()
		return wakeAnswered, s.send(s.newline(), false)
	}
	// A login or a first-boot question stands between us and the prompt.
	if handled, err := s.answerLogin(line, &w.logins); err != nil || handled {
		return wakeAnswered, err
	}
	if other := s.correction(line); other != nil {
		// The node's template or image guessed wrong; its prompt tells.
		s.profile = other
		return wakePrompt, nil
	}
	if s.profile != nil {
		if other := detectFromConsole(s.seen, line); other != nil {
			return wakeUnknown, fmt.Errorf("%w: %s shows the prompt %q, which looks like %s, not %s; check the node's device_type tag",
				ErrNoPrompt, s.addr, strings.TrimSpace(line), other.Name, s.profile.Name)
		}
	}
	w.unknown = line
	return wakeUnknown, nil
}

// failure is the error of a wake-up that never saw a prompt.
func (w *waking) failure() error {
	s := w.s
	if s.received == 0 {
		what := "neither telnet negotiation nor a prompt"
		if s.transport == ConsoleSSH {
			what = "nothing after Enter"
		}
		return fmt.Errorf("%w: %s accepted the connection but sent %s within %s; another client is probably connected to it",
			ErrConsoleBusy, s.addr, what, time.Since(s.opened).Round(time.Millisecond))
	}
	tail := w.tail
	if len(tail) > 200 {
		tail = "…" + tail[len(tail)-200:]
	}
	err := fmt.Errorf("%w: %s after %d wake-up attempts; last output %q", ErrNoPrompt, s.addr, s.opts.WakeAttempts, tail)
	if s.profile == nil && w.unknown != "" {
		// The console did show a line and waited: most likely a prompt of a
		// platform we cannot recognise.
		return &DetectError{Device: s.addr, Tried: []string{fmt.Sprintf("console prompt %q", w.unknown)}, Cause: err}
	}
	return err
}

// answerLogin handles the non-prompt lines a console can show on connect.
func (s *Session) answerLogin(line string, logins *int) (bool, error) {
	// A new slice: appending to s.opts.Answers could write into the caller's array.
	fallback := profiles["cisco_ios"].Answers
	if s.profile != nil {
		fallback = s.profile.Answers
	}
	answers := slices.Concat(s.opts.Answers, fallback)
	for _, a := range answers {
		if a.applies("", line) {
			s.stats.Answers++
			return true, s.send(a.Reply+s.newline(), a.Hidden)
		}
	}
	switch {
	case loginPrompt.MatchString(line):
		if s.opts.Username == "" {
			return false, fmt.Errorf("%w: %s shows %q and no username is configured", ErrLoginRequired, s.addr, strings.TrimSpace(line))
		}
		*logins++
		if *logins > 3 {
			return false, fmt.Errorf("%w: %s keeps asking for a login; check the credentials", ErrLoginRequired, s.addr)
		}
		return true, s.send(s.opts.Username+s.newline(), false)
	case passwordPrompt.MatchString(line):
		if s.opts.Password == "" {
			return false, fmt.Errorf("%w: %s asks for a password and none is configured", ErrLoginRequired, s.addr)
		}
		return true, s.send(s.opts.Password+s.newline(), true)
	}
	return false, nil
}

// correction returns the profile the console's prompt line shows when the
// session's profile was only guessed and the prompt belongs to another
// platform. A Linux guess gives way to any other match, since a shell
// prompt pattern also accepts "frr# ".
func (s *Session) correction(line string) *Profile {
	if !s.hinted || s.profile == nil {
		return nil
	}
	other := detectFromConsole(s.seen, line)
	if other == nil || other == s.profile {
		return nil
	}
	if s.profile.ModeOf(line) != ModeUnknown && s.profile.Name != "linux" {
		return nil
	}
	return other
}
