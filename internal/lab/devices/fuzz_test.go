package devices

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
)

// RecordedSessions are the sessions testdata/transcripts holds, by file: what each ran on a
// real device, one command a line, "conf " before a configuration line. TestRecordTranscripts
// records them; FuzzConsole replays them as its seeds.
var RecordedSessions = map[string]string{
	"vpcs.txt": "show ip\nip 10.0.0.1/24 10.0.0.254\nshow ip\nshow arp",
	"frr.txt": "show running-config\nconf interface eth0\nconf ip address 10.1.0.1/24\nconf exit\nconf router ospf\n" +
		"conf network 10.1.0.0/24 area 0\nconf exit\nshow running-config\nshow ip route\nshow interface brief",
}

// Bounds of one console fuzz input: a replayed session takes milliseconds (reads never wait);
// the memory is the session's buffers (a 32 KB read buffer, the screen, MaxOutput).
const (
	fuzzDeadline  = 30 * time.Second
	fuzzMemory    = 16 << 20
	fuzzMaxOutput = 16 << 10
	fuzzCommands  = 8
)

// Cuts of a console script: how its bytes arrive. A cut of 1 to 252 bytes is one read; the
// others are events between reads.
const (
	// cutAwaitWrite: the console says nothing more until the session writes to it, as a
	// console answers what it is sent.
	cutAwaitWrite = 0
	// cutEndless, twice in a row: the console prints the rest of the script again and again (a
	// log storm, `yes` at a shell), endlessBytes in all, read as fast as memory goes whatever
	// the deadlines, so that the input costs the same on any machine. Twice, because such an
	// input costs milliseconds where others cost microseconds: mutations should seldom make one
	// by chance. Once, it is nothing.
	cutEndless   = 253
	endlessBytes = 4 << 20
	// cutQuiet: one read finds nothing (a pause in the output).
	cutQuiet = 254
	// cutClose: the console closes the connection.
	cutClose = 255
	maxCut   = 252
)

// timeoutError is a read deadline passing, as net reports it.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// scriptedConn is a console that plays a script: its reads return the script's bytes as the
// cuts say, and where the console would wait (for a write, or past the end of the script) a
// read times out at once, so a session runs through the script without waiting on a clock.
type scriptedConn struct {
	endless     []byte
	endlessLeft int
	script      []byte
	cuts        []byte
	// waiting: the console waits for a write before it goes on; unread counts the writes it has
	// not waited for yet (a command written before the console's last output was read).
	waiting bool
	unread  int
	closed  bool
	written int
	// read is every byte the console printed.
	read int
}

func (c *scriptedConn) Read(b []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	if c.endless != nil {
		if c.endlessLeft <= 0 {
			return 0, timeoutError{}
		}
		b = b[:min(len(b), c.endlessLeft)]
		n := 0
		for n < len(b) {
			n += copy(b[n:], c.endless)
		}
		c.endlessLeft -= n
		c.read += n
		return n, nil
	}
	for {
		if c.waiting {
			return 0, timeoutError{}
		}
		if len(c.cuts) == 0 {
			if len(c.script) == 0 {
				return 0, timeoutError{}
			}
			n := copy(b, c.script)
			c.script = c.script[n:]
			c.read += n
			return n, nil
		}
		cut := c.cuts[0]
		c.cuts = c.cuts[1:]
		switch cut {
		case cutAwaitWrite:
			if c.unread > 0 {
				c.unread--
			} else {
				c.waiting = true
			}
			continue
		case cutQuiet:
			return 0, timeoutError{}
		case cutEndless:
			if len(c.cuts) > 0 && c.cuts[0] == cutEndless && len(c.script) > 0 {
				c.endless, c.endlessLeft = c.script, endlessBytes
				return c.Read(b)
			}
			continue
		case cutClose:
			c.closed = true
			return 0, errors.New("EOF") // not io.EOF: the session words a closed console itself
		}
		n := copy(b, c.script[:min(int(cut), len(c.script))])
		c.script = c.script[n:]
		if n == 0 {
			continue
		}
		c.read += n
		return n, nil
	}
}

func (c *scriptedConn) Write(b []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	c.written += len(b)
	if c.waiting {
		c.waiting = false
	} else {
		c.unread++
	}
	return len(b), nil
}

func (c *scriptedConn) Close() error        { c.closed = true; return nil }
func (c *scriptedConn) LocalAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (c *scriptedConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
}
func (c *scriptedConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptedConn) SetWriteDeadline(time.Time) error { return nil }

// parseTranscript turns a transcript (Options.Transcript's "<- " and "-> " lines) into a script
// and its cuts: every read as it arrived, and before every write the console waiting for it.
func parseTranscript(text string) (script, cuts []byte, err error) {
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "<- "):
			b, err := strconv.Unquote(strings.TrimPrefix(line, "<- "))
			if err != nil {
				return nil, nil, err
			}
			script = append(script, b...)
			for n := len(b); n > 0; n -= maxCut {
				cuts = append(cuts, byte(min(n, maxCut)))
			}
		case strings.HasPrefix(line, "-> "):
			cuts = append(cuts, cutAwaitWrite)
		}
	}
	return script, cuts, nil
}

// consoleRun is what one fuzz input's session did.
type consoleRun struct {
	openErr error
	results []CommandResult
	errs    []error
	prompt  string
	written int
	printed int
}

// runScript opens a session on the scripted console with the given profile (nil: detected)
// and runs the commands: one a line, the lines starting "conf " given together to Configure.
func runScript(p *Profile, script, cuts []byte, commands string) consoleRun {
	conn := &scriptedConn{script: script, cuts: cuts}
	opts := Options{
		Dial:            func(context.Context, string, string) (net.Conn, error) { return conn, nil },
		DisableQuickAck: true,
		Username:        "admin", Password: "fuzz", EnableSecret: "fuzz",
		Policy:    DefaultPolicy(),
		MaxOutput: fuzzMaxOutput,
		// Only loops that count wall-clock time would wait these out; none should.
		SettleMax: 200 * time.Millisecond, ResyncTimeout: time.Second,
		// The script loses nothing glued to a negotiation reply: a gap would only make every
		// input wait 30 ms.
		NegotiationGap: time.Nanosecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline/2)
	defer cancel()
	var run consoleRun
	s, err := OpenConsole(ctx, Endpoint{Addr: "console:5000", Type: ConsoleTelnet}, p, opts)
	if err != nil {
		run.openErr = err
		run.written, run.printed = conn.written, conn.read
		return run
	}
	defer s.Close()
	var conf []string
	flush := func() {
		if len(conf) == 0 {
			return
		}
		res, err := s.Configure(ctx, conf)
		run.results = append(run.results, res...)
		run.errs = append(run.errs, err)
		conf = nil
	}
	lines := strings.Split(commands, "\n")
	for _, line := range lines[:min(len(lines), fuzzCommands)] {
		if c, ok := strings.CutPrefix(line, "conf "); ok {
			conf = append(conf, c)
			continue
		}
		flush()
		r, err := s.Run(ctx, line)
		run.results = append(run.results, r)
		run.errs = append(run.errs, err)
	}
	flush()
	run.prompt = s.Prompt()
	run.written, run.printed = conn.written, conn.read
	return run
}

// FuzzConsole replays any console output to a session, as a device (or a student at its
// console, or another client on a shared console) could print it: telnet negotiation, banners,
// logins, prompts of every platform, pagers, echoes, questions, escape sequences, cut anywhere,
// or output that never stops.
// The session opens (detecting the platform, or with the one given), runs commands and
// configuration lines, and must neither panic nor hang nor write without bound. What it
// reports is console text as a person reads it: no carriage return or escape sequence, and
// no more than the console printed (plus the driver's own notes). The telnet layer's round
// trip holds on the commands: what is escaped to be sent reads back as itself, in one read or
// two. The seeds are sessions recorded on a real VPCS and a real FRR router.
func FuzzConsole(f *testing.F) {
	names := map[string]uint8{}
	for i, p := range Profiles() {
		names[p.Name] = uint8(i + 1)
	}
	for file, commands := range RecordedSessions {
		text, err := os.ReadFile(filepath.Join("testdata", "transcripts", file))
		if err != nil {
			f.Fatal(err)
		}
		script, cuts, err := parseTranscript(string(text))
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		f.Add(uint8(0), script, cuts, commands)
		f.Add(names[strings.TrimSuffix(file, ".txt")], script, cuts, commands)
	}
	profiles := Profiles()
	f.Fuzz(func(t *testing.T, platform uint8, script, cuts []byte, commands string) {
		var p *Profile
		if platform > 0 {
			p = profiles[int(platform-1)%len(profiles)]
		}
		var run consoleRun
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(script)+len(commands)), func() {
			run = runScript(p, script, cuts, commands)
		})
		// Each command line written, its answers and interrupts, and a few keys per byte read
		// (pagers, wake-ups): a session that keeps writing to a quiet console is a loop.
		if limit := 64*run.printed + 64*len(commands) + 4096; run.written > limit {
			t.Fatalf("wrote %d bytes to a console that printed %d", run.written, run.printed)
		}
		for _, r := range run.results {
			for _, text := range []string{r.Output, r.Prompt} {
				if strings.ContainsAny(text, "\r\x1b") {
					t.Fatalf("%q: a carriage return or escape left in %q", r.Command, text)
				}
			}
			// The notes a stopped command gets, and the interrupt's statistics read after it,
			// come on top of what it printed.
			if len(r.Output) > run.printed+512 {
				t.Fatalf("%q: %d bytes of output from %d bytes of console", r.Command, len(r.Output), run.printed)
			}
		}
		if strings.ContainsAny(run.prompt, "\r\x1b") {
			t.Fatalf("prompt %q", run.prompt)
		}

		var tn telnetParser
		raw := []byte(commands)
		escaped := escapeIAC(slices.Clone(raw))
		cut := len(escaped) / 2
		data, reply := tn.feed(escaped[:cut], nil, nil)
		data, reply = tn.feed(escaped[cut:], data, reply)
		if !bytes.Equal(data, raw) || len(reply) != 0 {
			t.Fatalf("telnet round trip: %q read back as %q (replies %q)", raw, data, reply)
		}
	})
}

// TestTranscriptsReplay holds the replay to the sessions it was recorded from: each transcript
// played to a session that runs the same commands finds the platform, its prompt, and every
// command answered as it was on the real device, so FuzzConsole's seeds start from sessions
// that work.
func TestTranscriptsReplay(t *testing.T) {
	for file, commands := range RecordedSessions {
		text, err := os.ReadFile(filepath.Join("testdata", "transcripts", file))
		if err != nil {
			t.Fatal(err)
		}
		script, cuts, err := parseTranscript(string(text))
		if err != nil {
			t.Fatal(err)
		}
		run := runScript(nil, script, cuts, commands)
		if run.openErr != nil {
			t.Fatalf("%s: %v", file, run.openErr)
		}
		for i, r := range run.results {
			if run.errs[min(i, len(run.errs)-1)] != nil || r.Failed || r.TimedOut || r.Stopped {
				t.Errorf("%s: %+v (%v)", file, r, run.errs)
			}
		}
		want := map[string]string{"vpcs.txt": "PC1>", "frr.txt": "frr#"}[file]
		if run.prompt != want {
			t.Errorf("%s: prompt %q, want %q", file, run.prompt, want)
		}
	}
}

// FuzzReadBack reads a configuration as a device printed it, for every platform: its lines for
// the diff, a sent line's verdict against them, and the diff against another read-back. Any
// output must be read without a panic or a hang; the lines have no carriage return and no
// surrounding space; every verdict is one of the three; and the diff is a round trip: the lines
// before, less the removed, plus the added, are the lines after, one for one. The seeds are
// the read-backs of the recorded sessions, before and after their configuration.
func FuzzReadBack(f *testing.F) {
	for file, commands := range RecordedSessions {
		text, err := os.ReadFile(filepath.Join("testdata", "transcripts", file))
		if err != nil {
			f.Fatal(err)
		}
		script, cuts, err := parseTranscript(string(text))
		if err != nil {
			f.Fatal(err)
		}
		run := runScript(nil, script, cuts, commands)
		var outputs, sent []string
		for _, r := range run.results {
			outputs = append(outputs, r.Output)
			sent = append(sent, r.Command)
		}
		for i := range outputs {
			for _, line := range sent {
				f.Add(uint8(0), outputs[i], outputs[len(outputs)-1-i], line)
				f.Add(uint8(1), outputs[i], outputs[len(outputs)-1-i], line)
			}
		}
	}
	profiles := Profiles()
	f.Fuzz(func(t *testing.T, platform uint8, before, after, line string) {
		p := profiles[int(platform)%len(profiles)]
		var old, cfg, added, removed []string
		var verdict Verdict
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(before)+len(after)+len(line)), func() {
			old, cfg = p.ConfigLines(before), p.ConfigLines(after)
			verdict = p.Verify(line, cfg)
			added, removed = DiffConfig(old, cfg)
			_ = ReadBy(p.ConfigCommand(), after)
			_, _ = p.ResumeContext(append(slices.Clone(old), line))
			_ = ChangesConfig(p.Name, line)
		})
		for _, l := range slices.Concat(old, cfg) {
			if l == "" || strings.ContainsRune(l, '\r') || strings.TrimSpace(l) != l {
				t.Fatalf("%s: config line %q", p.Name, l)
			}
		}
		switch verdict {
		case VerdictTook, VerdictNotTook, VerdictUnknown:
		default:
			t.Fatalf("%s: verdict %d", p.Name, verdict)
		}
		count := map[string]int{}
		for _, l := range old {
			count[l]++
		}
		for _, l := range removed {
			count[l]--
		}
		for _, l := range added {
			count[l]++
		}
		for _, l := range cfg {
			count[l]--
		}
		for l, n := range count {
			if n != 0 {
				t.Fatalf("%s: diff round trip: %q is %+d off (before %q, after %q, +%q -%q)", p.Name, l, n, old, cfg, added, removed)
			}
		}
	})
}
