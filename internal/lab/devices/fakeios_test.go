package devices_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeios"
)

func openIOS(t *testing.T, srv *fakeios.Server, opts devices.Options) *devices.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := devices.Open(ctx, srv.Addr(), nil, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, s *devices.Session, cmd string) devices.CommandResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := s.Run(ctx, cmd)
	if err != nil {
		t.Fatalf("run %q: %v", cmd, err)
	}
	return r
}

func TestIOSEnableSetupAndShow(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{EnableSecret: "cisco"})
	s := openIOS(t, srv, devices.Options{EnableSecret: "cisco"})
	if s.Profile().Name != "cisco_ios" {
		t.Fatalf("detected platform %q, want cisco_ios", s.Profile().Name)
	}
	if s.Mode() != devices.ModePrivileged || s.Prompt() != "R1#" {
		t.Fatalf("after open: mode %s prompt %q", s.Mode(), s.Prompt())
	}
	lines := srv.Lines()
	for _, want := range []string{"enable", "(password)", "terminal length 0", "terminal width 512"} {
		if !slices.Contains(lines, want) {
			t.Errorf("console never received %q (got %q)", want, lines)
		}
	}
	r := run(t, s, "show running-config")
	if r.Failed || !strings.Contains(r.Output, "hostname R1") || !strings.HasSuffix(r.Output, "end") {
		t.Fatalf("show running-config: %+v", r)
	}
	if strings.Contains(r.Output, "More") || strings.HasPrefix(r.Output, "show") {
		t.Fatalf("output not clean: %q", r.Output)
	}
	if r.Prompt != "R1#" {
		t.Fatalf("prompt after command %q", r.Prompt)
	}
}

func TestIOSPagingAnswered(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	paged := openIOS(t, srv, devices.Options{SkipSetup: true})
	got := run(t, paged, "show running-config")

	srv2 := fakeios.Start(t, fakeios.Options{PageLength: -1})
	flat := openIOS(t, srv2, devices.Options{SkipSetup: true})
	want := run(t, flat, "show running-config")

	if got.Output != want.Output {
		t.Fatalf("paged output differs from unpaged:\n--- paged\n%s\n--- unpaged\n%s", got.Output, want.Output)
	}
	if st := paged.Stats(); st.Pages == 0 {
		t.Fatalf("expected --More-- pages to be answered, stats %+v", st)
	}
	if n := strings.Count(got.Output, "\n") + 1; n < 40 {
		t.Fatalf("only %d lines", n)
	}
}

func TestIOSConfigure(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	ctx := context.Background()
	var seen []string
	res, err := s.ConfigureWith(ctx, []string{
		"interface GigabitEthernet0/0\n ip address 10.0.0.1 255.255.255.0\r\n\n no shutdown",
		"hostname R2",
	}, devices.ConfigureOptions{OnResult: func(r devices.CommandResult) { seen = append(seen, r.Command) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || len(seen) != 4 {
		t.Fatalf("results %+v", res)
	}
	for _, r := range res {
		if r.Failed {
			t.Fatalf("line failed: %+v", r)
		}
	}
	if s.Mode() != devices.ModePrivileged || s.Prompt() != "R2#" {
		t.Fatalf("after configure: mode %s prompt %q", s.Mode(), s.Prompt())
	}
	if cfg := srv.InterfaceConfig("GigabitEthernet0/0"); !slices.Contains(cfg, " ip address 10.0.0.1 255.255.255.0") {
		t.Fatalf("interface config %q", cfg)
	}
	r := run(t, s, "show ip interface brief")
	if !regexp.MustCompile(`GigabitEthernet0/0\s+10\.0\.0\.1\s+YES manual up\s+up`).MatchString(r.Output) {
		t.Fatalf("show ip interface brief:\n%s", r.Output)
	}
	lines := srv.Lines()
	if i := slices.Index(lines, "configure terminal"); i < 0 || lines[len(lines)-2] != "end" {
		t.Fatalf("config mode not entered and left: %q", lines)
	}
}

func TestIOSConfigureStopsAtFirstError(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	res, err := s.Configure(context.Background(), []string{"interface Gi0/1", "ip adress 10.0.0.1 255.0.0.0", "no shutdown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[1].Failed || !strings.Contains(res[1].Error, "% Invalid input detected") {
		t.Fatalf("results %+v", res)
	}
	if s.Mode() != devices.ModePrivileged {
		t.Fatalf("left in mode %s", s.Mode())
	}
	if slices.Contains(srv.Lines(), "no shutdown") {
		t.Fatal("a line after the failed one was sent")
	}
}

func TestIOSInvalidCommand(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	r := run(t, s, "show bogus")
	if !r.Failed || r.Error != "% Invalid input detected at '^' marker." {
		t.Fatalf("%+v", r)
	}
}

func TestIOSInterimPrompts(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	ctx := context.Background()

	r := run(t, s, "clear counters")
	if !r.Failed || !strings.Contains(r.Error, "[confirm]") {
		t.Fatalf("unanswered confirm: %+v", r)
	}
	if strings.Contains(r.Output, "CLEAR-5-COUNTERS") {
		t.Fatal("the interrupt confirmed the question")
	}
	if r := run(t, s, "show clock"); r.Failed || !strings.Contains(r.Output, "UTC") {
		t.Fatalf("console unusable after interrupt: %+v", r)
	}

	r, err := s.RunCommand(ctx, devices.Command{Text: "clear counters", Answers: []devices.Answer{
		{Prompt: regexp.MustCompile(`\[confirm\]$`), Reply: ""},
	}})
	if err != nil || r.Failed || !strings.Contains(r.Output, "CLEAR-5-COUNTERS") {
		t.Fatalf("answered confirm: %+v %v", r, err)
	}
	r, err = s.RunCommand(ctx, devices.Command{Text: "copy running-config startup-config", Answers: []devices.Answer{
		{Prompt: regexp.MustCompile(`Destination filename \[.*\]\?\s*$`), Reply: ""},
	}})
	if err != nil || r.Failed || !strings.HasSuffix(r.Output, "[OK]") {
		t.Fatalf("answered filename: %+v %v", r, err)
	}
}

func TestIOSLeftInConfigMode(t *testing.T) {
	for _, mode := range []string{"config", "config-if"} {
		t.Run(mode, func(t *testing.T) {
			srv := fakeios.Start(t, fakeios.Options{StartMode: mode})
			s := openIOS(t, srv, devices.Options{})
			if s.Mode() != devices.ModePrivileged || s.Prompt() != "R1#" {
				t.Fatalf("mode %s prompt %q", s.Mode(), s.Prompt())
			}
			if lines := srv.Lines(); len(lines) == 0 || lines[0] != "end" {
				t.Fatalf("expected the driver to send end first, got %q", lines)
			}
			if r := run(t, s, "show version"); r.Failed {
				t.Fatalf("%+v", r)
			}
		})
	}
}

func TestIOSFirstBootDialogAndLogin(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{FirstBoot: true, Username: "admin", Password: "secret"})
	s := openIOS(t, srv, devices.Options{Username: "admin", Password: "secret"})
	if s.Prompt() != "R1#" {
		t.Fatalf("prompt %q", s.Prompt())
	}
	if lines := srv.Lines(); !slices.Contains(lines, "no") || !slices.Contains(lines, "admin") {
		t.Fatalf("lines %q", lines)
	}

	srv2 := fakeios.Start(t, fakeios.Options{Username: "admin", Password: "secret"})
	_, err := devices.Open(context.Background(), srv2.Addr(), nil, devices.Options{})
	if !errors.Is(err, devices.ErrLoginRequired) {
		t.Fatalf("want ErrLoginRequired, got %v", err)
	}
}

func TestIOSQuirkyStream(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{Intro: fakeios.GNS3ProxyIntro, MidStreamIAC: true, ANSI: true, DoubleEcho: true, PageLength: -1})
	s := openIOS(t, srv, devices.Options{})
	ref := fakeios.Start(t, fakeios.Options{PageLength: -1})
	want := run(t, openIOS(t, ref, devices.Options{}), "show version").Output

	for i := 0; i < 5; i++ {
		r := run(t, s, "show version")
		if r.Output != want {
			t.Fatalf("output differs:\n%q\nwant\n%q", r.Output, want)
		}
	}
	if st := s.Stats(); st.DupEchoes < 5 {
		t.Fatalf("double echoes not seen: %+v", st)
	}
	// The GNS3 proxy's WILL ECHO/SGA/BINARY and DO BINARY are accepted;
	// the device's own mid-stream DO ECHO is refused, and the repeated
	// WILL ECHO is not answered twice.
	replies := srv.Replies()
	want2 := []byte{255, 253, 1, 255, 253, 3, 255, 253, 0, 255, 251, 0, 255, 252, 1}
	if !bytes.Equal(replies, want2) {
		t.Fatalf("negotiation replies % x, want % x", replies, want2)
	}
}

func TestIOSRefusesTerminalOptions(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	openIOS(t, srv, devices.Options{})
	// DO ECHO, DO SGA accepted; DO TTYPE and DO NAWS refused.
	want := []byte{255, 253, 1, 255, 253, 3, 255, 252, 24, 255, 252, 31}
	if got := srv.Replies(); !bytes.Equal(got, want) {
		t.Fatalf("replies % x, want % x", got, want)
	}
}

func TestIOSTimeoutInterruptsAndResyncs(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	r, err := s.RunCommand(context.Background(), devices.Command{Text: "show slow", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || !r.Failed || !strings.Contains(r.Output, "Working") {
		t.Fatalf("%+v", r)
	}
	if r := run(t, s, "show clock"); r.Failed || !strings.Contains(r.Output, "UTC") {
		t.Fatalf("after resync: %+v", r)
	}
	if s.Stats().Interrupts != 1 {
		t.Fatalf("stats %+v", s.Stats())
	}
}

func TestIOSContextCancelKeepsSessionUsable(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.Run(ctx, "show slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want deadline exceeded, got %v", err)
	}
	if r := run(t, s, "show clock"); r.Failed {
		t.Fatalf("after cancel: %+v", r)
	}
}

func TestIOSBanner(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{Policy: devices.DefaultPolicy()})
	res, err := s.Configure(context.Background(), []string{"banner motd #\nWelcome to the test lab\nAuthorized use only#", "hostname R9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Failed {
			t.Fatalf("%+v", r)
		}
	}
	if got := srv.Banner(); got != "Welcome to the test lab\nAuthorized use only" {
		t.Fatalf("banner %q", got)
	}
	if s.Prompt() != "R9#" {
		t.Fatalf("prompt %q", s.Prompt())
	}
}

func TestIOSEnableWithoutSecret(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{EnableSecret: "cisco"})
	s := openIOS(t, srv, devices.Options{})
	if s.Mode() != devices.ModeUser {
		t.Fatalf("mode %s", s.Mode())
	}
	_, err := s.Configure(context.Background(), []string{"hostname X"})
	if err == nil || !strings.Contains(err.Error(), "enable secret") {
		t.Fatalf("want a clear enable error, got %v", err)
	}
	if r := run(t, s, "show version"); r.Failed {
		t.Fatalf("session unusable: %+v", r)
	}
}

func TestPolicyEnforcedBySession(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{Policy: devices.DefaultPolicy()})
	for _, cmd := range []string{"reload", "debug ip packet", "traceroute 10.0.0.1", "wr er"} {
		r := run(t, s, cmd)
		if !r.Blocked || !r.Failed || r.Error == "" {
			t.Fatalf("%q not blocked: %+v", cmd, r)
		}
		if slices.Contains(srv.Lines(), cmd) {
			t.Fatalf("%q reached the device", cmd)
		}
	}
	res, err := s.Configure(context.Background(), []string{"do reload", "hostname R5"})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Blocked || res[1].Failed || s.Prompt() != "R5#" {
		t.Fatalf("%+v", res)
	}
}

func TestConsoleBusyAndNoPrompt(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	fast := devices.Options{WakeTimeout: 100 * time.Millisecond, SettleQuiet: 20 * time.Millisecond}
	_, err = devices.Open(context.Background(), silent.Addr().String(), nil, fast)
	if !errors.Is(err, devices.ErrConsoleBusy) || !strings.Contains(err.Error(), "console busy") {
		t.Fatalf("want console busy, got %v", err)
	}

	chatty, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer chatty.Close()
	go func() {
		for {
			c, err := chatty.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					c.Write([]byte("booting, please wait...\r\n"))
				}
			}()
		}
	}()
	_, err = devices.Open(context.Background(), chatty.Addr().String(), nil, fast)
	if !errors.Is(err, devices.ErrNoPrompt) || !strings.Contains(err.Error(), "booting") {
		t.Fatalf("want no prompt with the last output, got %v", err)
	}
}

func TestOpenUndetectablePrompt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			c.Write([]byte("\r\nA:admin@SROS# "))
		}
	}()
	_, err = devices.Connect(context.Background(), devices.Target{
		Name: "SR1", NodeType: "qemu", Image: "sros-vm-22.10.qcow2", ConsoleType: "telnet", ConsoleHost: "127.0.0.1",
		ConsolePort: ln.Addr().(*net.TCPAddr).Port,
	}, "", devices.Options{WakeTimeout: 200 * time.Millisecond, WakeAttempts: 1})
	var derr *devices.DetectError
	if !errors.As(err, &derr) || !errors.Is(err, devices.ErrPlatformUnknown) {
		t.Fatalf("want DetectError, got %v", err)
	}
	for _, want := range []string{`node type "qemu"`, `image "sros-vm-22.10.qcow2"`, `console prompt "A:admin@SROS# "`, "device_type:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenWithWrongProfileFailsFast(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	vpcs, _ := devices.ProfileByName("vpcs")
	start := time.Now()
	_, err := devices.Open(context.Background(), srv.Addr(), vpcs, devices.Options{})
	if !errors.Is(err, devices.ErrNoPrompt) || !strings.Contains(err.Error(), "looks like cisco_ios, not vpcs") {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %s", el)
	}
}

func TestRunRejectsControlCharacters(t *testing.T) {
	srv := fakeios.Start(t, fakeios.Options{})
	s := openIOS(t, srv, devices.Options{})
	for _, cmd := range []string{"show version\nreload", "show\x03", "\xffshow"} {
		r := run(t, s, cmd)
		if !r.Failed || r.Error == "" {
			t.Fatalf("%q accepted: %+v", cmd, r)
		}
	}
	if slices.ContainsFunc(srv.Lines(), func(l string) bool { return strings.Contains(l, "reload") }) {
		t.Fatal("a rejected command reached the device")
	}
}
