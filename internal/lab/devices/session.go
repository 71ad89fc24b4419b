package devices

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

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

// Session is one connection (telnet or SSH) to one device console. Its methods are
// safe for concurrent use but run strictly one command at a time: consoles
// lose input that arrives while a command runs.
type Session struct {
	mu   sync.Mutex
	addr string
	// transport is ConsoleTelnet or ConsoleSSH.
	transport string
	// hostKey is an SSH console's host key fingerprint, for the audit.
	hostKey string
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

// Open connects to a telnet console at addr ("host:port") and brings it to
// a usable prompt: it lets the telnet negotiation settle, wakes the console
// with Enter (retrying, because the first input after a banner can be
// lost), detects the platform from the prompt when p is nil, leaves any
// configuration mode someone else left behind, enters privileged mode where
// the platform has one, and turns paging off.
func Open(ctx context.Context, addr string, p *Profile, opts Options) (*Session, error) {
	return open(ctx, Endpoint{Addr: addr, Type: ConsoleTelnet}, p, false, opts)
}

// OpenConsole is Open for a console of either type: over SSH, the session opens a shell with a
// terminal and drives it as it drives a telnet console.
func OpenConsole(ctx context.Context, ep Endpoint, p *Profile, opts Options) (*Session, error) {
	return open(ctx, ep, p, false, opts)
}

// open is OpenConsole; with hinted set, p is a guess the console's prompt may overrule.
func open(ctx context.Context, ep Endpoint, p *Profile, hinted bool, opts Options) (*Session, error) {
	opts = opts.withDefaults()
	if ep.Type == "" {
		ep.Type = ConsoleTelnet
	}
	conn, hostKey, err := dialConsole(ctx, ep, opts)
	if err != nil {
		return nil, err
	}
	s := &Session{
		addr:      ep.Addr,
		transport: ep.Type,
		hostKey:   hostKey,
		conn:      conn,
		opts:      opts,
		profile:   p,
		hinted:    hinted && p != nil,
		rbuf:      make([]byte, 32*1024),
		opened:    time.Now(),
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

// Addr is the console address the session is connected to.
func (s *Session) Addr() string { return s.addr }

// Transport is the console type the session speaks: ConsoleTelnet or ConsoleSSH.
func (s *Session) Transport() string { return s.transport }

// HostKey is the fingerprint of an SSH console's host key ("ssh-ed25519 SHA256:…"), "" on
// telnet.
func (s *Session) HostKey() string { return s.hostKey }

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
