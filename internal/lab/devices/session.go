package devices

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Options tune a console session. The zero value suits GNS3 consoles.
type Options struct {
	// DialTimeout bounds the TCP connect (default 5 s).
	DialTimeout time.Duration
	// SettleQuiet is how long the console must stay silent after connecting
	// (and after telnet negotiation) before the first write (default 50 ms).
	// A write glued to our negotiation replies is dropped by vpcs.
	SettleQuiet time.Duration
	// SettleMax caps the settle phase on a console that keeps talking (default 2 s).
	SettleMax time.Duration
	// WakeTimeout is the wait for a prompt after the first wake-up Enter; it
	// doubles on every retry (default 1 s).
	WakeTimeout time.Duration
	// WakeAttempts is how many wake-up Enters are sent (default 3).
	WakeAttempts int
	// BusyTimeout: a console that has sent nothing at all (not even telnet
	// negotiation) this long after connecting is reported busy (default 2 s).
	BusyTimeout time.Duration
	// PromptSettle is the silence that confirms a prompt that differs from
	// the previous one, so a prompt-like line inside output is not taken as
	// the end of a command (default 30 ms).
	PromptSettle time.Duration
	// DefaultTimeout replaces the platform's timeout for commands that have
	// no specific rule; TimeoutScale multiplies every derived timeout.
	DefaultTimeout time.Duration
	TimeoutScale   float64
	// ResyncTimeout bounds the recovery after a timeout (default 5 s).
	ResyncTimeout time.Duration
	// Username and Password answer a console login; EnableSecret answers
	// the password prompt of "enable".
	Username, Password, EnableSecret string
	// Answers reply to interim prompts for every command of the session.
	Answers []Answer
	// NoEnable keeps a Cisco-like console in user mode after connecting.
	NoEnable bool
	// SkipSetup skips the platform's setup commands (paging off and such).
	SkipSetup bool
	// Policy, when set, refuses forbidden commands before they are sent.
	Policy *Policy
	// Consoles, when set, is the process-wide bound on open consoles that Use waits on.
	Consoles *ConsoleLimit
	// DisableQuickAck turns off TCP_QUICKACK.
	DisableQuickAck bool
	// Transcript receives every byte exchanged, for debugging.
	Transcript io.Writer
	// Dial replaces the TCP dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.DialTimeout, 5*time.Second)
	def(&o.SettleQuiet, 50*time.Millisecond)
	def(&o.SettleMax, 2*time.Second)
	def(&o.WakeTimeout, time.Second)
	def(&o.BusyTimeout, 2*time.Second)
	def(&o.PromptSettle, 30*time.Millisecond)
	def(&o.ResyncTimeout, 5*time.Second)
	if o.WakeAttempts <= 0 {
		o.WakeAttempts = 3
	}
	if o.TimeoutScale <= 0 {
		o.TimeoutScale = 1
	}
	return o
}

// Errors a session reports. Command-level problems (a device error
// message, a timeout the console recovered from, a blocked command) are
// not errors: they are reported in CommandResult.
var (
	// ErrConsoleBusy: the TCP connect succeeded but the console said
	// nothing at all, which is how a single-client console (raw vpcs)
	// behaves while someone else is connected.
	ErrConsoleBusy = errors.New("console busy")
	// ErrNoPrompt: the console talked but never showed a prompt.
	ErrNoPrompt = errors.New("no prompt on console")
	// ErrSessionClosed: the connection is gone or the session was closed.
	ErrSessionClosed = errors.New("console session closed")
	// ErrLoginRequired: the console asks for credentials that were not given.
	ErrLoginRequired = errors.New("console asks for a login")
)

// CommandResult is the outcome of one command.
type CommandResult struct {
	Command string `json:"command"`
	// Output is the device's answer without echo, prompt, pager prompts,
	// carriage returns or escape sequences.
	Output string `json:"output"`
	// Failed is set when the output matches one of the platform's error
	// patterns, when the command timed out, was blocked or left unanswered.
	Failed bool   `json:"failed"`
	Error  string `json:"error,omitempty"`
	// Blocked means the command was refused by the safety policy and never sent.
	Blocked bool `json:"blocked,omitempty"`
	// TimedOut means the command was interrupted after its timeout.
	TimedOut bool `json:"timed_out,omitempty"`
	// Stopped means the driver interrupted the command (a command that
	// never ends by itself, or one that timed out); Output then holds what
	// it printed before and after the interrupt, and ends with a note.
	Stopped  bool          `json:"stopped,omitempty"`
	Duration time.Duration `json:"duration"`
	// Prompt is the prompt the console showed after the command.
	Prompt string `json:"prompt,omitempty"`
}

// Command is a command with per-command settings.
type Command struct {
	Text string
	// Timeout overrides the timeout derived from the command.
	Timeout time.Duration
	// Answers reply to interim prompts this command may raise; they are
	// tried before the session's and the platform's answers.
	Answers []Answer
}

// Stats counts the console quirks a session has dealt with.
type Stats struct {
	Commands     int
	DupEchoes    int // commands whose echo came twice (vpcs readline race)
	NoEcho       int // commands whose echo never came
	Pages        int // pager prompts answered
	Answers      int // interim prompts answered
	Interrupts   int // interrupts sent to recover from timeouts
	Negotiations int // telnet option requests received
}

// Session is one telnet connection to one device console. Its methods are
// safe for concurrent use but run strictly one command at a time: consoles
// lose input that arrives while a command runs.
type Session struct {
	mu      sync.Mutex
	addr    string
	conn    net.Conn
	opts    Options
	profile *Profile
	qa      *quickAcker

	tn    telnetParser
	scr   screenText
	rbuf  []byte
	data  []byte
	reply []byte

	prompt string
	mode   Mode
	// hinted: the profile was guessed from the node (template, image, node
	// type), so the console's own prompt may still correct it.
	hinted bool
	// seen keeps the first bytes the console printed while opening, where
	// a banner can name the platform.
	seen      []byte
	collect   bool
	textDelim string
	lastIAC   time.Time
	opened    time.Time
	received  int
	broken    error
	stats     Stats
}

const iacGap = 30 * time.Millisecond

var (
	loginPrompt    = regexp.MustCompile(`(?i)(user ?name|login)\s*:\s*$`)
	passwordPrompt = regexp.MustCompile(`(?i)password\s*:\s*$`)
	pressReturn    = regexp.MustCompile(`(?i)press (return|enter) to (get started|activate this console)`)
	errQuiet       = errors.New("quiet")
)

// Open connects to a telnet console at addr ("host:port") and brings it to
// a usable prompt: it lets the telnet negotiation settle, wakes the console
// with Enter (retrying, because the first input after a banner can be
// lost), detects the platform from the prompt when p is nil, leaves any
// configuration mode someone else left behind, enters privileged mode where
// the platform has one, and turns paging off.
func Open(ctx context.Context, addr string, p *Profile, opts Options) (*Session, error) {
	return open(ctx, addr, p, false, opts)
}

// open is Open; with hinted set, p is a guess the console's prompt may overrule.
func open(ctx context.Context, addr string, p *Profile, hinted bool, opts Options) (*Session, error) {
	opts = opts.withDefaults()
	dial := opts.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: opts.DialTimeout}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	conn, err := dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connect to console %s: %w", addr, err)
	}
	s := &Session{
		addr:    addr,
		conn:    conn,
		opts:    opts,
		profile: p,
		hinted:  hinted && p != nil,
		rbuf:    make([]byte, 32*1024),
		opened:  time.Now(),
	}
	if !opts.DisableQuickAck {
		s.qa = newQuickAcker(conn)
	}
	if err := s.open(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func (s *Session) open(ctx context.Context) error {
	stop := s.watch(ctx)
	defer stop()
	s.collect = true
	defer func() { s.collect, s.seen = false, nil }()

	if err := s.settle(ctx, s.opts.SettleMax); err != nil {
		return err
	}
	line, attempts, err := s.wake(ctx)
	if err != nil {
		return err
	}
	if attempts > 1 {
		// Earlier wake-ups may still be queued on the console; their
		// prompts must not be mistaken for the first command's.
		if err := s.settle(ctx, time.Second); err != nil {
			return err
		}
		if l, _ := lastLine(s.scr.buf); s.isPrompt(l) {
			line = l
		}
	}
	if s.profile == nil {
		s.profile = detectFromConsole(s.seen, line)
		if s.profile == nil {
			return &DetectError{Device: s.addr, Tried: []string{fmt.Sprintf("console prompt %q", line)}}
		}
	} else if other := s.correction(line); other != nil {
		s.profile = other
	}
	s.setPrompt(line)

	if s.mode == ModeConfig {
		if _, err := s.leaveConfig(ctx, false); err != nil {
			return fmt.Errorf("console %s was left in configuration mode and could not leave it: %w", s.addr, err)
		}
	}
	if s.mode == ModeUser && s.profile.Enable != "" && !s.opts.NoEnable {
		if _, err := s.enable(ctx); err != nil {
			return err
		}
	}
	if !s.opts.SkipSetup {
		for _, c := range s.profile.Setup {
			if _, err := s.runLocked(ctx, Command{Text: c}); err != nil {
				return fmt.Errorf("setup command %q: %w", c, err)
			}
		}
	}
	return nil
}

// wake sends Enter until the console shows a fresh prompt.
func (s *Session) wake(ctx context.Context) (string, int, error) {
	wake := " \r\n" // unknown platform: one Enter everywhere, three bytes for vpcs
	if s.profile != nil {
		wake = s.profile.Wake
	}
	wait := s.opts.WakeTimeout
	logins := 0
	var tail, unknown string
	busyAt := s.opened.Add(s.opts.BusyTimeout)
	for attempt := 1; attempt <= s.opts.WakeAttempts; attempt++ {
		if s.received == 0 && !time.Now().Before(busyAt) {
			break
		}
		s.scr.reset()
		if err := s.send(wake, false); err != nil {
			return "", attempt, err
		}
		deadline := time.Now().Add(wait)
		if s.received == 0 && deadline.After(busyAt) {
			deadline = busyAt
		}
		for {
			line, ok, err := s.awaitPrompt(ctx, deadline)
			if err == errQuiet {
				break
			}
			if err != nil {
				return "", attempt, err
			}
			if ok {
				return line, attempt, nil
			}
			if line == "" {
				// Output ended with a line break and stopped: a console
				// that says "Press RETURN to get started" wants an Enter.
				if pressReturn.Match(s.scr.buf) {
					s.scr.reset()
					if err := s.send(s.newline(), false); err != nil {
						return "", attempt, err
					}
					deadline = time.Now().Add(wait)
				}
				continue
			}
			// A login or a first-boot question stands between us and the prompt.
			handled, err := s.answerLogin(line, &logins)
			if err != nil {
				return "", attempt, err
			}
			if !handled {
				if other := s.correction(line); other != nil {
					// The node's template or image guessed wrong; its prompt tells.
					s.profile = other
					return line, attempt, nil
				}
				if s.profile != nil {
					if other := detectFromConsole(s.seen, line); other != nil {
						return "", attempt, fmt.Errorf("%w: %s shows the prompt %q, which looks like %s, not %s; check the node's device_type tag",
							ErrNoPrompt, s.addr, strings.TrimSpace(line), other.Name, s.profile.Name)
					}
				}
				unknown = line
				break
			}
			deadline = time.Now().Add(wait)
		}
		if t := strings.TrimSpace(string(s.scr.buf)); t != "" {
			tail = t
		}
		wait *= 2
	}
	if s.received == 0 {
		return "", 0, fmt.Errorf("%w: %s accepted the connection but sent neither telnet negotiation nor a prompt within %s; another client is probably connected to it",
			ErrConsoleBusy, s.addr, time.Since(s.opened).Round(time.Millisecond))
	}
	if len(tail) > 200 {
		tail = "…" + tail[len(tail)-200:]
	}
	err := fmt.Errorf("%w: %s after %d wake-up attempts; last output %q", ErrNoPrompt, s.addr, s.opts.WakeAttempts, tail)
	if s.profile == nil && unknown != "" {
		// The console did show a line and waited: most likely a prompt of a
		// platform we cannot recognise.
		return "", 0, &DetectError{Device: s.addr, Tried: []string{fmt.Sprintf("console prompt %q", unknown)}, Cause: err}
	}
	return "", 0, err
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

// fill performs one read with the given deadline. It returns errQuiet when
// the deadline passes without data.
func (s *Session) fill(ctx context.Context, deadline time.Time) (int, error) {
	if s.broken != nil {
		return 0, s.broken
	}
	if err := s.conn.SetReadDeadline(deadline); err != nil {
		return 0, s.fail(err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.qa.arm()
	n, err := s.conn.Read(s.rbuf)
	if n > 0 {
		s.received += n
		if s.opts.Transcript != nil {
			fmt.Fprintf(s.opts.Transcript, "<- %q\n", s.rbuf[:n])
		}
		before := s.tn.Negotiations
		s.data, s.reply = s.tn.feed(s.rbuf[:n], s.data[:0], s.reply[:0])
		s.stats.Negotiations += s.tn.Negotiations - before
		if len(s.reply) > 0 {
			if werr := s.write(s.reply, true); werr != nil {
				return n, werr
			}
		}
		s.scr.write(s.data)
		if s.collect && len(s.seen) < 4096 {
			s.seen = append(s.seen, s.data...)
		}
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if cerr := ctx.Err(); cerr != nil {
				return n, cerr
			}
			if n > 0 {
				return n, nil
			}
			return 0, errQuiet
		}
		return n, s.fail(err)
	}
	return n, nil
}

func (s *Session) interruptRead() {
	_ = s.conn.SetReadDeadline(time.Unix(1, 0))
}

// watch makes a cancelled ctx unblock the read in progress. The returned
// stop waits for a callback that already started, so a late cancellation
// cannot cut short the next operation's read.
func (s *Session) watch(ctx context.Context) func() {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		s.interruptRead()
	})
	return func() {
		if !stop() {
			<-done
		}
	}
}

func (s *Session) fail(err error) error {
	if s.broken == nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: %s closed the connection", ErrSessionClosed, s.addr)
		} else if !errors.Is(err, ErrSessionClosed) {
			err = fmt.Errorf("%w: %s: %v", ErrSessionClosed, s.addr, err)
		}
		s.broken = err
		_ = s.conn.Close()
	}
	return s.broken
}

// write sends raw bytes. Negotiation replies are written on their own; a
// command is never written within iacGap of them, because vpcs discards a
// whole read that starts with 0xFF and would lose a command glued to it.
func (s *Session) write(b []byte, negotiation bool) error {
	if !negotiation {
		if gap := iacGap - time.Since(s.lastIAC); gap > 0 {
			time.Sleep(gap)
		}
	}
	if err := s.conn.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return s.fail(err)
	}
	if _, err := s.conn.Write(b); err != nil {
		return s.fail(err)
	}
	if negotiation {
		s.lastIAC = time.Now()
		if s.opts.Transcript != nil {
			fmt.Fprintf(s.opts.Transcript, "-> %q\n", b)
		}
	}
	return nil
}

func (s *Session) send(text string, hidden bool) error {
	if s.opts.Transcript != nil {
		if hidden {
			fmt.Fprintf(s.opts.Transcript, "-> (hidden)\n")
		} else {
			fmt.Fprintf(s.opts.Transcript, "-> %q\n", text)
		}
	}
	return s.write(escapeIAC([]byte(text)), false)
}

// Addr is the console address the session is connected to.
func (s *Session) Addr() string { return s.addr }

// Profile is the platform profile in use (detected or given).
func (s *Session) Profile() *Profile { return s.profile }

// Prompt is the last prompt the console showed.
func (s *Session) Prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(s.prompt)
}

// Mode is the CLI mode of the last prompt.
func (s *Session) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// Stats reports how many console quirks the session has handled.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close drops the connection. It sends no "exit": on a shared GNS3 console
// that would log out everyone watching.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		if errors.Is(s.broken, ErrSessionClosed) {
			return nil
		}
	}
	s.broken = fmt.Errorf("%w: %s", ErrSessionClosed, s.addr)
	return s.conn.Close()
}

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
	out, err := s.exchange(ctx, text, s.timeoutFor(c), c.Answers, inText)
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
	case out.timedOut, out.unanswered != "":
		limit := s.timeoutFor(c).Round(time.Millisecond)
		tail, rerr := s.resync(ctx)
		res.Output = joinOutput(res.Output, tail)
		res.Duration = time.Since(start)
		res.Stopped = true
		switch {
		case out.unanswered != "":
			res.Failed = true
			res.Error = fmt.Sprintf("the device asked %q and no answer was given for it; the command was interrupted", out.unanswered)
		case c.Timeout == 0 && s.profile.OpenEnded(text):
			// Its expected end: what it printed is the answer.
			res.Output = joinOutput(res.Output, fmt.Sprintf("[stopped after %s with %s: this command runs until interrupted]", limit, keyName(s.profile.Interrupt)))
		default:
			res.Failed, res.TimedOut = true, true
			res.Error = fmt.Sprintf("no prompt within %s; the command was stopped with %s (its output so far is shown)", limit, keyName(s.profile.Interrupt))
		}
		if rerr != nil {
			err := s.fail(fmt.Errorf("console did not return to a prompt after an interrupt: %w", rerr))
			return res, err
		}
	case out.textEntry != "":
		s.textDelim = out.textEntry
	default:
		if inText && strings.Contains(text, s.textDelim) {
			s.textDelim = ""
		}
		if msg, failed := s.profile.failure(res.Output); failed {
			res.Failed, res.Error = true, msg
		}
	}
	if !inText || s.textDelim == "" {
		if out.prompt != "" {
			s.setPrompt(out.prompt)
		}
	}
	res.Prompt = strings.TrimSpace(s.prompt)
	return res, nil
}

type exchangeOutcome struct {
	output     string
	prompt     string
	timedOut   bool
	unanswered string
	textEntry  string
}

type scanState struct {
	echoPos, echoEnd int
	bodyStart        int
	answeredAt       int
	answers          int
}

// exchange writes one line and reads until the console is ready for the
// next. The reply is anchored on the echo of the line: anything before it
// (stale prompts, another client's output) is ignored, and the command is
// over when a prompt is the last line on the screen after the echo.
func (s *Session) exchange(ctx context.Context, cmd string, timeout time.Duration, extra []Answer, textLine bool) (exchangeOutcome, error) {
	var out exchangeOutcome
	s.scr.reset()
	line := cmd + s.profile.Newline
	if cmd == "" && s.profile.Wake != "" {
		line = s.profile.Wake // the platform's cheapest bare Enter
	}
	if err := s.send(line, false); err != nil {
		return out, err
	}
	deadline := time.Now().Add(timeout)
	st := scanState{echoPos: -1, echoEnd: -1, answeredAt: -1}
	if cmd == "" {
		st.echoPos, st.echoEnd = 0, 0
	}
	answers := append(append(append([]Answer(nil), extra...), s.opts.Answers...), s.profile.Answers...)
	needRead := true
	for {
		if needRead {
			if _, err := s.fill(ctx, deadline); err != nil {
				if err == errQuiet {
					out.timedOut = true
					out.output = s.partial(cmd, &st)
					return out, nil
				}
				out.output = s.partial(cmd, &st)
				return out, err
			}
		}
		needRead = true
		buf := s.scr.buf
		if st.echoEnd < 0 {
			if i := bytes.Index(buf, []byte(cmd)); i >= 0 {
				st.echoPos, st.echoEnd = i, i+len(cmd)
			}
		}
		last, ls := lastLine(buf)
		if st.echoEnd < 0 {
			// No echo (yet). A console that does not echo still ends with a
			// prompt; accept that only after a longer silence.
			if ls > 0 && s.profile.ModeOf(last) != ModeUnknown {
				if ok, err := s.quietFor(ctx, deadline, 10*s.opts.PromptSettle+200*time.Millisecond); err != nil {
					return out, err
				} else if ok {
					s.stats.NoEcho++
					st.bodyStart = 0
					out.output, out.prompt = s.body(cmd, &st, ls), last
					return out, nil
				}
				needRead = false
			}
			continue
		}
		nl := bytes.IndexByte(buf[st.echoEnd:], '\n')
		if nl < 0 {
			continue
		}
		st.bodyStart = st.echoEnd + nl + 1
		if textLine && !strings.Contains(cmd, s.textDelim) {
			// Free text (a banner body): the device echoes the line and
			// waits silently for the next one.
			if ok, err := s.quietFor(ctx, deadline, s.opts.PromptSettle); err != nil {
				return out, err
			} else if ok {
				out.textEntry = s.textDelim
				return out, nil
			}
			needRead = false
			continue
		}
		if last == "" {
			if s.profile.TextEntry != nil {
				tail := buf[st.bodyStart:]
				if len(tail) > 256 {
					tail = tail[len(tail)-256:]
				}
				if m := s.profile.TextEntry.FindSubmatch(tail); m != nil {
					if ok, err := s.quietFor(ctx, deadline, s.opts.PromptSettle); err != nil {
						return out, err
					} else if ok {
						out.textEntry = string(m[1])
						out.output = s.body(cmd, &st, len(buf))
						return out, nil
					}
					needRead = false
				}
			}
			continue
		}
		if ls < st.bodyStart {
			continue
		}
		if s.profile.Pager != nil {
			if loc := s.profile.Pager.FindStringIndex(last); loc != nil {
				s.scr.buf = buf[:ls+loc[0]]
				s.stats.Pages++
				if err := s.send(s.profile.PagerKey, false); err != nil {
					return out, err
				}
				continue
			}
		}
		if s.profile.ModeOf(last) != ModeUnknown {
			same := strings.TrimSpace(last) == strings.TrimSpace(s.prompt)
			if !same {
				ok, err := s.quietFor(ctx, deadline, s.opts.PromptSettle)
				if err != nil {
					return out, err
				}
				if !ok {
					needRead = false
					continue
				}
			}
			out.output, out.prompt = s.body(cmd, &st, ls), last
			return out, nil
		}
		if ls == st.answeredAt {
			continue
		}
		var answer *Answer
		for i := range answers {
			if answers[i].applies(cmd, last) {
				answer = &answers[i]
				break
			}
		}
		if answer == nil && !s.profile.interim(last) && !passwordPrompt.MatchString(last) {
			continue
		}
		ok, err := s.quietFor(ctx, deadline, s.opts.PromptSettle)
		if err != nil {
			return out, err
		}
		if !ok {
			needRead = false
			continue
		}
		if answer == nil || st.answers >= 8 {
			out.unanswered = strings.TrimSpace(last)
			out.output = s.body(cmd, &st, len(buf))
			return out, nil
		}
		st.answeredAt = ls
		st.answers++
		s.stats.Answers++
		if err := s.send(answer.Reply+s.profile.Newline, answer.Hidden); err != nil {
			return out, err
		}
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

// body extracts the command output between the echo line and the prompt,
// dropping repeated echoes (vpcs can echo a command twice when it arrives
// while readline switches terminal modes).
func (s *Session) body(cmd string, st *scanState, end int) string {
	buf := s.scr.buf
	if end < st.bodyStart {
		end = st.bodyStart
	}
	if end > len(buf) {
		end = len(buf)
	}
	if cmd != "" && st.echoPos >= 0 && st.bodyStart > st.echoPos &&
		strings.Count(string(buf[st.echoPos:st.bodyStart]), cmd) > 1 {
		s.stats.DupEchoes++
	}
	lines := strings.Split(string(buf[st.bodyStart:end]), "\n")
	i := 0
	for i < len(lines) {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			i++
			continue
		}
		if cmd != "" && (l == cmd || strings.Trim(strings.ReplaceAll(l, cmd, ""), " ") == "") {
			s.stats.DupEchoes++
			i++
			continue
		}
		break
	}
	lines = lines[i:]
	for len(lines) > 0 {
		l := strings.TrimSpace(lines[len(lines)-1])
		if l == "" || s.profile.PromptNoise != nil && s.profile.PromptNoise.MatchString(l) {
			lines = lines[:len(lines)-1]
			continue
		}
		break
	}
	return tidyOutput(strings.Join(lines, "\n"))
}

// partial returns what a command printed so far, for timeouts and errors.
func (s *Session) partial(cmd string, st *scanState) string {
	buf := s.scr.buf
	if st.echoEnd < 0 {
		return tidyOutput(string(buf))
	}
	if nl := bytes.IndexByte(buf[st.echoEnd:], '\n'); nl >= 0 {
		st.bodyStart = st.echoEnd + nl + 1
		return s.body(cmd, st, len(buf))
	}
	return ""
}

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
