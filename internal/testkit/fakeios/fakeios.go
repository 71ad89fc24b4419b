// Package fakeios is an IOS-like telnet console on 127.0.0.1 for tests of
// console drivers: user/privileged/configuration modes, paging with
// --More--, interim prompts ([confirm], Password:, filename?), IOS error
// messages and telnet option negotiation. It is an emulator, not IOS.
package fakeios

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Telnet negotiation a real IOS console sends: WILL ECHO, WILL SGA,
// DO TERMINAL-TYPE, DO NAWS.
var IOSIntro = []byte{255, 251, 1, 255, 251, 3, 255, 253, 24, 255, 253, 31}

// GNS3ProxyIntro is what the GNS3 console proxy sends on connect.
var GNS3ProxyIntro = []byte{255, 251, 1, 255, 251, 3, 255, 251, 0, 255, 253, 0}

// Options shape the emulated console.
type Options struct {
	// Hostname is the initial hostname (default "R1").
	Hostname string
	// EnableSecret makes "enable" ask for a password.
	EnableSecret string
	// StartMode is the mode each connection starts in: "user" (default),
	// "privileged", "config" or "config-if" — a console left in
	// configuration mode by someone else.
	StartMode string
	// PageLength is the initial "terminal length" (default 24, negative
	// for 0 = no paging).
	PageLength int
	// Intro replaces the negotiation sent on connect; NoNegotiation sends none.
	Intro         []byte
	NoNegotiation bool
	// MidStreamIAC puts telnet commands in the middle of command output,
	// as the GNS3 proxy does when it forwards a device's own negotiation.
	MidStreamIAC bool
	// DoubleEcho echoes every command line twice.
	DoubleEcho bool
	// ANSI colours output lines with escape sequences.
	ANSI bool
	// FirstBoot shows the initial configuration dialog before the first prompt.
	FirstBoot bool
	// Banner is printed right after negotiation.
	Banner string
	// SlowFor is how long "show slow" runs unless interrupted (default 10 min).
	SlowFor time.Duration
	// Username and Password, when set, make the line ask for a login.
	Username, Password string
}

// Server is a running fake console.
type Server struct {
	ln   net.Listener
	opts Options

	mu        sync.Mutex
	hostname  string
	config    map[string][]string // interface -> lines
	global    []string
	banner    string
	lines     []string
	replies   []byte
	firstBoot bool
	conns     map[net.Conn]bool
	wg        sync.WaitGroup
	closed    bool
}

// Start runs a fake console for the duration of the test.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := New(opts)
	if err != nil {
		tb.Fatalf("fakeios: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// New starts a fake console on a free port of 127.0.0.1.
func New(opts Options) (*Server, error) {
	if opts.Hostname == "" {
		opts.Hostname = "R1"
	}
	if opts.PageLength == 0 {
		opts.PageLength = 24
	} else if opts.PageLength < 0 {
		opts.PageLength = 0
	}
	if opts.Intro == nil {
		opts.Intro = IOSIntro
	}
	if opts.SlowFor <= 0 {
		opts.SlowFor = 10 * time.Minute
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		ln: ln, opts: opts, hostname: opts.Hostname, firstBoot: opts.FirstBoot,
		config: map[string][]string{
			"GigabitEthernet0/0": {" no ip address", " shutdown"},
			"GigabitEthernet0/1": {" no ip address", " shutdown"},
			"Loopback0":          {" ip address 1.1.1.1 255.255.255.255"},
		},
		conns: map[net.Conn]bool{},
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the listener and every open connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Lines returns every line the console received, in order.
func (s *Server) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// Replies returns the telnet negotiation bytes clients sent.
func (s *Server) Replies() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.replies...)
}

// Hostname is the current hostname.
func (s *Server) Hostname() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostname
}

// InterfaceConfig returns the configuration lines of an interface.
func (s *Server) InterfaceConfig(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.config[name]...)
}

// Banner is the configured MOTD banner.
func (s *Server) Banner() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.banner
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// ---- one connection -------------------------------------------------------

type session struct {
	srv     *Server
	conn    net.Conn
	in      chan []byte
	pending []byte
	skipLF  bool
	mode    string // user, privileged, config, config-if, config-router, config-line
	iface   string
	termLen int
}

var errClosed = errors.New("connection closed")

func (s *Server) serve(c net.Conn) {
	ss := &session{srv: s, conn: c, in: make(chan []byte, 16), mode: "user", termLen: s.opts.PageLength}
	switch s.opts.StartMode {
	case "privileged", "config", "config-if":
		ss.mode = s.opts.StartMode
		if ss.mode == "config-if" {
			ss.iface = "GigabitEthernet0/0"
		}
	}
	go ss.read()
	if !s.opts.NoNegotiation {
		ss.write(string(s.opts.Intro))
	}
	if s.opts.Banner != "" {
		ss.write(s.opts.Banner)
	}
	_ = ss.run()
}

// read strips telnet commands from the client stream.
func (ss *session) read() {
	defer close(ss.in)
	buf := make([]byte, 4096)
	state := 0
	for {
		n, err := ss.conn.Read(buf)
		var data []byte
		for _, b := range buf[:n] {
			switch state {
			case 0:
				if b == 255 {
					state = 1
					continue
				}
				data = append(data, b)
			case 1:
				switch {
				case b == 255:
					data = append(data, b)
					state = 0
				case b >= 251 && b <= 254:
					ss.srv.mu.Lock()
					ss.srv.replies = append(ss.srv.replies, 255, b)
					ss.srv.mu.Unlock()
					state = 2
				case b == 250:
					state = 3
				default:
					state = 0
				}
			case 2:
				ss.srv.mu.Lock()
				ss.srv.replies = append(ss.srv.replies, b)
				ss.srv.mu.Unlock()
				state = 0
			case 3:
				if b == 255 {
					state = 4
				}
			case 4:
				if b == 240 {
					state = 0
				} else {
					state = 3
				}
			}
		}
		if len(data) > 0 {
			ss.in <- data
		}
		if err != nil {
			return
		}
	}
}

func (ss *session) write(text string) {
	_, _ = ss.conn.Write([]byte(text))
}

// next returns the next input byte, waiting at most d (d<=0: forever).
func (ss *session) next(d time.Duration) (byte, error) {
	for len(ss.pending) == 0 {
		var timeout <-chan time.Time
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case b, ok := <-ss.in:
			if !ok {
				return 0, errClosed
			}
			ss.pending = append(ss.pending, b...)
		case <-timeout:
			return 0, errTimeout
		}
	}
	b := ss.pending[0]
	ss.pending = ss.pending[1:]
	return b, nil
}

var errTimeout = errors.New("timeout")

// readLine edits one input line like a terminal: echo, backspace, Enter
// as CR, LF, CR LF or CR NUL. Control keys end the line early.
func (ss *session) readLine(hidden bool) (string, byte, error) {
	var line []byte
	for {
		b, err := ss.next(0)
		if err != nil {
			return "", 0, err
		}
		if ss.skipLF {
			ss.skipLF = false
			if b == '\n' || b == 0 {
				continue
			}
		}
		switch {
		case b == '\r' || b == '\n':
			ss.skipLF = b == '\r'
			return string(line), 0, nil
		case b == 0x03 || b == 0x1a || b == 0x1e:
			return string(line), b, nil
		case b == 0x08 || b == 0x7f:
			if len(line) > 0 {
				line = line[:len(line)-1]
				if !hidden {
					ss.write("\b \b")
				}
			}
		case b >= 0x20:
			line = append(line, b)
			if !hidden {
				ss.write(string([]byte{b}))
			}
		}
	}
}

func (ss *session) prompt() string {
	h := ss.srv.Hostname()
	switch ss.mode {
	case "user":
		return h + ">"
	case "privileged":
		return h + "#"
	default:
		return h + "(" + ss.mode + ")#"
	}
}

func (ss *session) run() error {
	// Like a console line, nothing is shown until the first Enter.
	for {
		line, ctrl, err := ss.readLine(true)
		if err != nil {
			return err
		}
		_ = line
		if ctrl == 0 {
			break
		}
	}
	ss.srv.mu.Lock()
	first := ss.srv.firstBoot
	ss.srv.firstBoot = false
	ss.srv.mu.Unlock()
	if first {
		ss.write("\r\n         --- System Configuration Dialog ---\r\n\r\nWould you like to enter the initial configuration dialog? [yes/no]: ")
		for {
			ans, _, err := ss.readLine(false)
			if err != nil {
				return err
			}
			ss.record(ans)
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ans)), "n") {
				break
			}
			ss.write("\r\n% Please answer 'yes' or 'no'.\r\nWould you like to enter the initial configuration dialog? [yes/no]: ")
		}
		ss.write("\r\n\r\nPress RETURN to get started!\r\n\r\n\r\n")
		if _, _, err := ss.readLine(true); err != nil {
			return err
		}
	}
	for ss.srv.opts.Username != "" {
		ss.write("\r\n\r\nUser Access Verification\r\n\r\nUsername: ")
		user, _, err := ss.readLine(false)
		if err != nil {
			return err
		}
		ss.record(user)
		ss.write("\r\nPassword: ")
		pw, _, err := ss.readLine(true)
		if err != nil {
			return err
		}
		ss.record("(password)")
		if user == ss.srv.opts.Username && pw == ss.srv.opts.Password {
			break
		}
		ss.write("\r\n% Login invalid\r\n")
	}
	ss.write("\r\n" + ss.prompt())
	for {
		line, ctrl, err := ss.readLine(false)
		if err != nil {
			return err
		}
		if ctrl != 0 {
			// Ctrl-C or Ctrl-Z leave configuration mode; Ctrl-^ does nothing at a prompt.
			if ctrl != 0x1e && strings.HasPrefix(ss.mode, "config") {
				ss.mode = "privileged"
			}
			ss.write("^C\r\n" + ss.prompt())
			continue
		}
		ss.record(line)
		if ss.srv.opts.DoubleEcho && strings.TrimSpace(line) != "" {
			ss.write("\r\n" + line)
		}
		ss.write("\r\n")
		out, err := ss.exec(strings.TrimSpace(line))
		if err != nil {
			return err
		}
		ss.output(out)
		ss.write(ss.prompt())
	}
}

func (ss *session) record(line string) {
	ss.srv.mu.Lock()
	ss.srv.lines = append(ss.srv.lines, line)
	ss.srv.mu.Unlock()
}

// output writes lines with paging, optional colour and optional telnet
// commands in the middle.
func (ss *session) output(lines []string) {
	const more = " --More-- "
	count := 0
	for i, l := range lines {
		if ss.srv.opts.ANSI && l != "" {
			l = "\x1b[1;32m" + l + "\x1b[0m"
		}
		if ss.srv.opts.MidStreamIAC && i == len(lines)/2 {
			// DO ECHO, WILL ECHO, NOP, and an unknown subnegotiation.
			ss.write(l[:len(l)/2] + "\xff\xfd\x01\xff\xfb\x01\xff\xf1\xff\xfa\x18\x01\xff\xf0" + l[len(l)/2:] + "\r\n")
		} else {
			ss.write(l + "\r\n")
		}
		count++
		if ss.termLen > 0 && count >= ss.termLen-1 && i < len(lines)-1 {
			ss.write(more)
			b, err := ss.next(0)
			erase := strings.Repeat("\b", len(more)) + strings.Repeat(" ", len(more)) + strings.Repeat("\b", len(more))
			ss.write(erase)
			if err != nil || b == 'q' || b == 0x03 {
				return
			}
			if b == '\r' || b == '\n' {
				count--
			} else {
				count = 0
			}
		}
	}
}

// ---- commands ------------------------------------------------------------

// kw reports whether words start with abbreviations of the keywords.
func kw(words []string, keywords ...string) bool {
	if len(words) < len(keywords) {
		return false
	}
	for i, k := range keywords {
		w := strings.ToLower(words[i])
		if w == "" || !strings.HasPrefix(k, w) {
			return false
		}
	}
	return true
}

func invalid(line string, at int) []string {
	return []string{strings.Repeat(" ", at+len("R1#")) + "^", "% Invalid input detected at '^' marker.", ""}
}

func (ss *session) exec(line string) ([]string, error) {
	words := strings.Fields(line)
	if len(words) == 0 {
		return nil, nil
	}
	if strings.HasPrefix(ss.mode, "config") {
		return ss.configCmd(line, words)
	}
	priv := ss.mode == "privileged"
	switch {
	case kw(words, "enable") && len(words[0]) >= 2:
		return ss.enable()
	case kw(words, "disable") && len(words[0]) >= 4:
		ss.mode = "user"
		return nil, nil
	case kw(words, "terminal", "length") && len(words) == 3:
		n, err := strconv.Atoi(words[2])
		if err != nil || n < 0 || n > 512 {
			return invalid(line, len(line)-len(words[2])), nil
		}
		ss.termLen = n
		return nil, nil
	case kw(words, "terminal", "width") && len(words) == 3:
		return nil, nil
	case kw(words, "show", "version") && len(words[0]) >= 2:
		return ss.showVersion(), nil
	case kw(words, "show", "ip", "interface", "brief") && len(words[0]) >= 2:
		return ss.showIPIntBrief(), nil
	case kw(words, "show", "clock") && len(words[0]) >= 2:
		return []string{"*12:00:00.000 UTC Mon Mar 1 2026"}, nil
	case kw(words, "show", "slow") && len(words[0]) >= 2:
		return ss.slow()
	case priv && kw(words, "show", "running-config") && len(words[0]) >= 2 && len(words[1]) >= 2:
		return ss.runningConfig(), nil
	case kw(words, "ping") && len(words) == 2:
		return []string{"Type escape sequence to abort.",
			"Sending 5, 100-byte ICMP Echos to " + words[1] + ", timeout is 2 seconds:",
			"!!!!!",
			"Success rate is 100 percent (5/5), round-trip min/avg/max = 1/1/2 ms"}, nil
	case priv && kw(words, "configure", "terminal") && len(words[0]) >= 4:
		ss.mode = "config"
		return []string{"Enter configuration commands, one per line.  End with CNTL/Z."}, nil
	case priv && kw(words, "clear", "counters") && len(words[0]) >= 3:
		ss.write("Clear \"show interface\" counters on all interfaces [confirm]")
		ans, ctrl, err := ss.readLine(false)
		if err != nil {
			return nil, err
		}
		ss.record(ans)
		ss.write("\r\n")
		if a := strings.ToLower(strings.TrimSpace(ans)); ctrl != 0 || a != "" && a != "y" && a != "yes" {
			return nil, nil
		}
		return []string{"*Mar  1 12:00:00.000: %CLEAR-5-COUNTERS: Clear counter on all interfaces by console"}, nil
	case priv && kw(words, "copy", "running-config", "startup-config") && len(words[0]) >= 2:
		ss.write("Destination filename [startup-config]? ")
		ans, ctrl, err := ss.readLine(false)
		if err != nil {
			return nil, err
		}
		ss.record(ans)
		ss.write("\r\n")
		if ctrl != 0 {
			return []string{"%Error: aborted"}, nil
		}
		return []string{"Building configuration...", "[OK]"}, nil
	case priv && kw(words, "write") && len(words[0]) >= 2 && (len(words) == 1 || kw(words[1:], "memory")):
		return []string{"Building configuration...", "[OK]"}, nil
	case priv && kw(words, "reload") && len(words[0]) >= 3:
		ss.write("Proceed with reload? [confirm]")
		ans, ctrl, err := ss.readLine(false)
		if err != nil {
			return nil, err
		}
		ss.record(ans)
		if a := strings.ToLower(strings.TrimSpace(ans)); ctrl == 0 && (a == "" || a == "y") {
			ss.write("\r\n\r\n*Mar  1 12:00:00: %SYS-5-RELOAD: Reload requested by console.\r\n")
			return nil, errClosed
		}
		return nil, nil
	case kw(words, "exit"), kw(words, "logout") && len(words[0]) >= 2:
		ss.mode = "user"
		ss.write("\r\n\r\n" + ss.srv.Hostname() + " con0 is now available\r\n\r\n\r\n\r\n\r\nPress RETURN to get started.\r\n\r\n\r\n")
		for {
			if _, ctrl, err := ss.readLine(true); err != nil {
				return nil, err
			} else if ctrl == 0 {
				break
			}
		}
		return nil, nil
	}
	return invalid(line, 0), nil
}

func (ss *session) enable() ([]string, error) {
	secret := ss.srv.opts.EnableSecret
	if secret == "" {
		ss.mode = "privileged"
		return nil, nil
	}
	for i := 0; i < 3; i++ {
		ss.write("Password: ")
		pw, _, err := ss.readLine(true)
		if err != nil {
			return nil, err
		}
		ss.record("(password)")
		ss.write("\r\n")
		if pw == secret {
			ss.mode = "privileged"
			return nil, nil
		}
	}
	return []string{"% Bad secrets", ""}, nil
}

func (ss *session) slow() ([]string, error) {
	ss.write("Working")
	deadline := time.Now().Add(ss.srv.opts.SlowFor)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return []string{"", "done"}, nil
		}
		b, err := ss.next(left)
		if err == errTimeout {
			continue
		}
		if err != nil {
			return nil, err
		}
		if b == 0x03 || b == 0x1e {
			return []string{"", "% Aborted"}, nil
		}
		ss.write(".")
	}
}

func (ss *session) configCmd(line string, words []string) ([]string, error) {
	s := ss.srv
	switch {
	case kw(words, "end"):
		ss.mode = "privileged"
		return nil, nil
	case kw(words, "exit") && len(words[0]) >= 2:
		if ss.mode == "config" {
			ss.mode = "privileged"
		} else {
			ss.mode = "config"
		}
		return nil, nil
	case kw(words, "do") && len(words) > 1:
		mode := ss.mode
		ss.mode = "privileged"
		out, err := ss.exec(strings.Join(words[1:], " "))
		if ss.mode == "privileged" {
			ss.mode = mode
		}
		return out, err
	case kw(words, "hostname") && len(words) == 2:
		s.mu.Lock()
		s.hostname = words[1]
		s.mu.Unlock()
		return nil, nil
	case kw(words, "interface") && len(words) >= 2 && len(words[0]) >= 3:
		name := normalizeInterface(strings.Join(words[1:], ""))
		if name == "" {
			return invalid(line, len(words[0])+1), nil
		}
		s.mu.Lock()
		if _, ok := s.config[name]; !ok {
			s.config[name] = nil
		}
		s.mu.Unlock()
		ss.iface = name
		ss.mode = "config-if"
		return nil, nil
	case kw(words, "router", "ospf") && len(words) == 3:
		ss.mode = "config-router"
		s.mu.Lock()
		s.global = append(s.global, "router ospf "+words[2])
		s.mu.Unlock()
		return nil, nil
	case ss.mode == "config-router" && kw(words, "network"):
		s.mu.Lock()
		s.global = append(s.global, " "+line)
		s.mu.Unlock()
		return nil, nil
	case kw(words, "banner", "motd") && len(words) >= 3:
		rest := strings.TrimSpace(line[strings.Index(line, words[2]):])
		delim := rest[:1]
		body := rest[1:]
		if i := strings.Index(body, delim); i >= 0 {
			s.mu.Lock()
			s.banner = body[:i]
			s.mu.Unlock()
			return nil, nil
		}
		ss.write("Enter TEXT message.  End with the character '" + delim + "'.\r\n")
		var text []string
		if body != "" {
			text = append(text, body)
		}
		for {
			l, _, err := ss.readLine(false)
			if err != nil {
				return nil, err
			}
			ss.record(l)
			ss.write("\r\n")
			if i := strings.Index(l, delim); i >= 0 {
				text = append(text, l[:i])
				break
			}
			text = append(text, l)
		}
		s.mu.Lock()
		s.banner = strings.Join(text, "\n")
		s.mu.Unlock()
		return nil, nil
	case ss.mode == "config-if" && (kw(words, "ip", "address") && len(words) == 4 || kw(words, "no", "shutdown") ||
		kw(words, "shutdown") && len(words[0]) >= 4 || kw(words, "description") && len(words[0]) >= 4):
		if kw(words, "ip", "address") && net.ParseIP(words[2]) == nil {
			return invalid(line, len(words[0])+len(words[1])+2), nil
		}
		s.mu.Lock()
		drop := func(prefix string) {
			var kept []string
			for _, l := range s.config[ss.iface] {
				if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
					kept = append(kept, l)
				}
			}
			s.config[ss.iface] = kept
		}
		switch {
		case kw(words, "ip"):
			drop("ip address")
			drop("no ip address")
			s.config[ss.iface] = append(s.config[ss.iface], " ip address "+words[2]+" "+words[3])
		case kw(words, "no"):
			drop("shutdown")
		case kw(words, "shutdown"):
			drop("shutdown")
			s.config[ss.iface] = append(s.config[ss.iface], " shutdown")
		default:
			drop("description")
			s.config[ss.iface] = append(s.config[ss.iface], " "+line)
		}
		s.mu.Unlock()
		return nil, nil
	case kw(words, "line", "vty"):
		ss.mode = "config-line"
		return nil, nil
	}
	return invalid(line, 0), nil
}

func normalizeInterface(s string) string {
	l := strings.ToLower(s)
	for _, full := range []string{"GigabitEthernet", "Loopback", "FastEthernet", "Ethernet"} {
		for i := len(l); i > 0; i-- {
			if strings.HasPrefix(strings.ToLower(full), l[:i]) && i < len(l) && (l[i] >= '0' && l[i] <= '9') {
				return full + s[i:]
			}
		}
	}
	return ""
}

func (ss *session) showVersion() []string {
	h := ss.srv.Hostname()
	return []string{
		"Cisco IOS Software, IOSv Software (VIOS-ADVENTERPRISEK9-M), Version 15.9(3)M6, RELEASE SOFTWARE (fc1)",
		"Technical Support: http://www.cisco.com/techsupport",
		"Copyright (c) 1986-2022 by Cisco Systems, Inc.",
		"Compiled Wed 26-Oct-22 08:21 by prod_rel_team",
		"",
		"",
		"ROM: Bootstrap program is IOSv",
		"",
		h + " uptime is 5 minutes",
		"System returned to ROM by reload",
		"System image file is \"flash0:/vios-adventerprisek9-m\"",
		"Last reload reason: Unknown reason",
		"",
		"This product contains cryptographic features and is subject to United",
		"States and local country laws governing import, export, transfer and",
		"use. Delivery of Cisco cryptographic products does not imply",
		"third-party authority to import, export, distribute or use encryption.",
		"",
		"Cisco IOSv (revision 1.0) with  with 460137K/62464K bytes of memory.",
		"Processor board ID 9ABCDEFGHIJ",
		"4 Gigabit Ethernet interfaces",
		"DRAM configuration is 72 bits wide with parity disabled.",
		"256K bytes of non-volatile configuration memory.",
		"2097152K bytes of ATA System CompactFlash 0 (Read/Write)",
		"0K bytes of ATA CompactFlash 1 (Read/Write)",
		"",
		"Configuration register is 0x0",
	}
}

func (ss *session) showIPIntBrief() []string {
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.config))
	for n := range s.config {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []string{"Interface                  IP-Address      OK? Method Status                Protocol"}
	for _, n := range names {
		ip, status, proto := "unassigned", "up", "up"
		for _, l := range s.config[n] {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "ip" {
				ip = f[2]
			}
			if strings.TrimSpace(l) == "shutdown" {
				status, proto = "administratively down", "down"
			}
		}
		out = append(out, fmt.Sprintf("%-26s %-15s YES manual %-21s %s", n, ip, status, proto))
	}
	return out
}

func (ss *session) runningConfig() []string {
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{"Building configuration...", "", "Current configuration : 1834 bytes", "!",
		"! Last configuration change at 12:00:00 UTC Mon Mar 1 2026", "!", "version 15.9",
		"service timestamps debug datetime msec", "service timestamps log datetime msec",
		"no service password-encryption", "!", "hostname " + s.hostname, "!", "boot-start-marker", "boot-end-marker",
		"!", "!", "no aaa new-model", "!", "!", "mmi polling-interval 60", "no mmi auto-configure",
		"no mmi pvc", "mmi snmp-timeout 180", "!", "!", "ip cef", "no ipv6 cef", "!", "multilink bundle-name authenticated", "!"}
	names := make([]string, 0, len(s.config))
	for n := range s.config {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, "interface "+n)
		out = append(out, s.config[n]...)
		out = append(out, "!")
	}
	out = append(out, s.global...)
	if s.banner != "" {
		out = append(out, "banner motd ^C"+s.banner+"^C")
	}
	out = append(out, "!", "line con 0", "line aux 0", "line vty 0 4", " login", " transport input none", "!", "!", "end")
	return out
}
