package devices_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
)

// scriptedConsole is a line-oriented telnet console whose replies come
// from a function, for platforms without a richer emulator.
type scriptedConsole struct {
	ln     net.Listener
	mu     sync.Mutex
	prompt string
	lines  []string
	reply  func(c *scriptedConsole, line string) string
	// greeting is printed to every new connection.
	greeting string
	// running, set by a reply, keeps the command going (no prompt) until
	// Ctrl-C, which prints running and then the prompt.
	running string
	// stopKey ends a running command: Ctrl-C unless a reply set another.
	stopKey byte
	// status is the exit status a shell prints for the command being answered.
	status int
}

// keepRunning makes the command being answered run until Ctrl-C, which
// prints stats.
func (c *scriptedConsole) keepRunning(stats string) { c.running, c.stopKey = stats, 3 }

// keepPaging makes the command wait in a pager that only "q" leaves.
func (c *scriptedConsole) keepPaging() { c.running, c.stopKey = "\r", 'q' }

func startScripted(t *testing.T, prompt string, reply func(c *scriptedConsole, line string) string) *scriptedConsole {
	t.Helper()
	return startGreeting(t, "", prompt, reply)
}

// startGreeting is startScripted with a banner printed to every new connection.
func startGreeting(t *testing.T, greeting, prompt string, reply func(c *scriptedConsole, line string) string) *scriptedConsole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &scriptedConsole{ln: ln, prompt: prompt, reply: reply, greeting: greeting}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.serve(conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return c
}

func (c *scriptedConsole) setPrompt(p string) { c.prompt = p }

func (c *scriptedConsole) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func (c *scriptedConsole) serve(conn net.Conn) {
	defer conn.Close()
	conn.Write([]byte{255, 251, 1, 255, 251, 3})
	if c.greeting != "" {
		conn.Write([]byte(strings.ReplaceAll(c.greeting, "\n", "\r\n")))
	}
	buf := make([]byte, 1024)
	var line []byte
	iac, skipLF := 0, false
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:n] {
			switch {
			case iac > 0:
				iac--
				continue
			case b == 255:
				iac = 2
				continue
			case skipLF && (b == '\n' || b == 0):
				skipLF = false
				continue
			}
			skipLF = false
			if b == c.stopKey && c.running != "" {
				echo := "^C\r\n"
				if b != 3 {
					echo = ""
				}
				conn.Write([]byte(echo + strings.ReplaceAll(c.running, "\n", "\r\n") + "\r\n" + c.prompt))
				c.running = ""
				line = line[:0]
				continue
			}
			if c.running != "" {
				continue // a running command does not read the line
			}
			if b != '\r' && b != '\n' {
				if b >= 0x20 {
					line = append(line, b)
					conn.Write([]byte{b})
				}
				continue
			}
			skipLF = b == '\r'
			l := strings.TrimSpace(string(line))
			line = line[:0]
			// A shell asked for its exit status runs the command, then prints it, as sh does
			// for "cmd; echo __rc=$?": 127 for a command it does not know, else what the reply
			// set (0 by default).
			l, askedStatus := strings.CutSuffix(l, "; echo __rc=$?")
			c.mu.Lock()
			c.lines = append(c.lines, l)
			c.mu.Unlock()
			out := ""
			c.status = 0
			if l != "" {
				out = c.reply(c, l)
			}
			if askedStatus && c.running == "" {
				if strings.HasSuffix(out, ": not found") {
					c.status = 127
				}
				if out != "" {
					out += "\n"
				}
				out += fmt.Sprintf("__rc=%d", c.status)
			}
			if out != "" {
				out = strings.ReplaceAll(out, "\n", "\r\n") + "\r\n"
			}
			if c.running != "" {
				if c.stopKey != 3 {
					out = strings.TrimSuffix(out, "\r\n") // a pager's prompt ends no line
				}
				conn.Write([]byte("\r\n" + out))
				continue
			}
			conn.Write([]byte("\r\n" + out + c.prompt))
		}
	}
}

func openScripted(t *testing.T, c *scriptedConsole) *devices.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := devices.Open(ctx, c.ln.Addr().String(), nil, devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestHuaweiTwoStageConfigure(t *testing.T) {
	iface := ""
	dirty := false
	c := startScripted(t, "<HUAWEI>", func(c *scriptedConsole, l string) string {
		view := func() {
			mark := "~"
			if dirty {
				mark = "*"
			}
			name := "HUAWEI"
			if iface != "" {
				name += "-" + iface
			}
			c.setPrompt("[" + mark + name + "]")
		}
		switch {
		case l == "screen-length 0 temporary":
			return "Info: The configuration takes effect on the current user terminal interface only."
		case l == "undo terminal monitor":
			return "Info: Current terminal monitor is off."
		case l == "system-view":
			view()
			return "Enter system view, return user view with return command."
		case strings.HasPrefix(l, "interface "):
			iface = strings.TrimPrefix(l, "interface ")
			view()
		case strings.HasPrefix(l, "ip address "):
			dirty = true
			view()
		case l == "commit":
			dirty = false
			view()
		case l == "return":
			if dirty {
				return "Error: uncommitted configuration"
			}
			iface = ""
			c.setPrompt("<HUAWEI>")
		case strings.HasPrefix(l, "display version"):
			return "Huawei Versatile Routing Platform Software\nVRP (R) software, Version 8.180 (CE6800 V200R005C10SPC607B607)"
		default:
			return "              ^\nError: Unrecognized command found at '^' position."
		}
		return ""
	})
	s := openScripted(t, c)
	if s.Profile().Name != "huawei_vrp" || s.Mode() != devices.ModeUser {
		t.Fatalf("profile %s mode %s", s.Profile().Name, s.Mode())
	}
	r := mustRun(t, s, "display version")
	if r.Failed || !strings.HasPrefix(r.Output, "Huawei Versatile Routing Platform") {
		t.Fatalf("%+v", r)
	}
	res, err := s.Configure(context.Background(), []string{"interface GE1/0/0", "ip address 10.0.0.1 24"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[2].Command != "commit" || res[2].Failed {
		t.Fatalf("%+v", res)
	}
	if s.Prompt() != "<HUAWEI>" {
		t.Fatalf("prompt %q", s.Prompt())
	}
	if r := mustRun(t, s, "dis foo"); !r.Failed || r.Error != "Error: Unrecognized command found at '^' position." {
		t.Fatalf("%+v", r)
	}
}

func TestJunosConfigureCommits(t *testing.T) {
	c := startScripted(t, "root@vMX> ", func(c *scriptedConsole, l string) string {
		switch {
		case strings.HasPrefix(l, "set cli "):
			return ""
		case l == "configure":
			c.setPrompt("root@vMX# ")
			return "Entering configuration mode\n\n[edit]"
		case strings.HasPrefix(l, "set interfaces "):
			return "\n[edit]"
		case l == "commit":
			return "commit complete\n\n[edit]"
		case l == "exit configuration-mode":
			c.setPrompt("root@vMX> ")
			return "Exiting configuration mode\n\n{master:0}"
		case l == "show version":
			return "Hostname: vMX\nModel: vmx\nJunos: 21.1R1.11\n\n{master:0}"
		default:
			return "                    ^\nunknown command.\n\n{master:0}"
		}
	})
	s := openScripted(t, c)
	if s.Profile().Name != "juniper_junos" {
		t.Fatalf("profile %s", s.Profile().Name)
	}
	if r := mustRun(t, s, "show version"); r.Output != "Hostname: vMX\nModel: vmx\nJunos: 21.1R1.11" {
		t.Fatalf("prompt noise not dropped: %q", r.Output)
	}
	res, err := s.Configure(context.Background(), []string{"set interfaces ge-0/0/0 unit 0 family inet address 10.0.0.1/24"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Output != "" || res[1].Output != "commit complete" {
		t.Fatalf("%+v", res)
	}
	if s.Mode() != devices.ModeUser {
		t.Fatalf("mode %s", s.Mode())
	}
	sent := c.sent()
	want := []string{"set cli complete-on-space off", "configure", "commit", "exit configuration-mode"}
	for _, w := range want {
		if !slices.Contains(sent, w) {
			t.Fatalf("never sent %q: %q", w, sent)
		}
	}
	if r := mustRun(t, s, "shwo route"); !r.Failed || r.Error != "unknown command." {
		t.Fatalf("%+v", r)
	}
}

func TestLinuxShell(t *testing.T) {
	c := startScripted(t, "root@box:/# ", func(c *scriptedConsole, l string) string {
		switch l {
		case "uname -s":
			return "Linux"
		case "ls --color":
			return "\x1b[0m\x1b[01;34mbin\x1b[0m  \x1b[01;34metc\x1b[0m"
		case "echo 50%":
			return "50%"
		case "false":
			c.status = 1
			return ""
		case "ls /nope":
			c.status = 2
			return "ls: /nope: No such file or directory"
		}
		return "sh: " + strings.Fields(l)[0] + ": not found"
	})
	s := openScripted(t, c)
	if s.Profile().Name != "linux" {
		t.Fatalf("profile %s", s.Profile().Name)
	}
	for cmd, want := range map[string]string{"uname -s": "Linux", "ls --color": "bin  etc", "echo 50%": "50%"} {
		if r := mustRun(t, s, cmd); r.Failed || r.Output != want {
			t.Fatalf("%q: %+v", cmd, r)
		}
	}
	if r := mustRun(t, s, "frobnicate"); !r.Failed {
		t.Fatalf("%+v", r)
	}
	// A shell tells a failure only by the exit status, which is taken out of the output.
	if r := mustRun(t, s, "false"); !r.Failed || r.Error != "exit status 1" || r.Output != "" {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "ls /nope"); !r.Failed || r.Error != "exit status 2" || r.Output != "ls: /nope: No such file or directory" {
		t.Fatalf("%+v", r)
	}
	if _, err := s.Configure(context.Background(), []string{"uname -s"}); err != nil {
		t.Fatal(err)
	}
}

// A command that prints without end is stopped at the output bound with Ctrl-C, keeps its first
// bytes, and leaves the shell at its prompt.
func TestOutputBoundStopsARunawayCommand(t *testing.T) {
	c := startScripted(t, "root@box:/# ", func(c *scriptedConsole, l string) string {
		if l == "yes" {
			c.keepRunning("")
			return strings.Repeat("y\n", 100000)
		}
		return "ok"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := devices.Open(ctx, c.ln.Addr().String(), nil, devices.Options{MaxOutput: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := mustRun(t, s, "yes")
	if !r.Failed || !r.Stopped || r.TimedOut || !strings.Contains(r.Error, "more than 65536 bytes") ||
		len(r.Output) > 64<<10+100 || !strings.HasPrefix(r.Output, "y\ny\n") || !strings.HasSuffix(r.Output, "[output cut at 65536 bytes]") {
		t.Fatalf("%d bytes: %s %+v", len(r.Output), r.Error, r.Stopped)
	}
	if r.Duration > 5*time.Second {
		t.Fatalf("stopped after %s", r.Duration)
	}
	if r := mustRun(t, s, "echo hi"); r.Output != "ok" || r.Failed {
		t.Fatalf("after the stop: %+v", r)
	}
}
