package devices_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/consoleproxy"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// sshTarget is a VPCS node as GNS3 3.1 describes it with an SSH console.
func sshTarget(name string, port int) devices.Target {
	return devices.Target{NodeID: "n-" + name, Name: name, NodeType: "vpcs", ConsoleType: "ssh", ConsoleHost: "0.0.0.0", ConsolePort: port}
}

// A real VPCS behind an SSH console as GNS3 3.1 serves it: the node is reached, detected and
// driven as over telnet (show, a change, a bad command), the host
// key is accepted and its fingerprint kept, and after the node restarts (a new key) it is
// reached again. A stopped node refuses.
func TestVPCSOverSSH(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	srv := consoleproxy.StartSSH(t, lab.Nodes[0].Addr(), consoleproxy.SSHOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := devices.Connect(ctx, sshTarget("PC1", srv.Port()), "127.0.0.1", devices.Options{Policy: devices.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Transport() != devices.ConsoleSSH || s.Profile().Name != "vpcs" || s.Prompt() != "PC1>" {
		t.Fatalf("transport %s profile %s prompt %q", s.Transport(), s.Profile().Name, s.Prompt())
	}
	if s.HostKey() != srv.Fingerprint() || !strings.HasPrefix(s.HostKey(), "ssh-ed25519 SHA256:") {
		t.Fatalf("host key %q, server's %q", s.HostKey(), srv.Fingerprint())
	}
	if users := srv.Users(); len(users) != 1 || users[0] != devices.DefaultSSHUser {
		t.Fatalf("logged in as %q", users)
	}
	if r := mustRun(t, s, "set pcname Web1"); r.Failed || r.Prompt != "Web1>" {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "show ip"); r.Failed || !strings.HasPrefix(r.Output, "NAME        : Web1[1]") || strings.Count(r.Output, "\n") != 7 {
		t.Fatalf("%+v", r)
	}
	if r := mustRun(t, s, "foo"); !r.Failed || r.Error != `Bad command: "foo". Use ? for help.` {
		t.Fatalf("%+v", r)
	}
	first := s.HostKey()
	s.Close()

	// The node restarts behind a server that wants an empty password rather than no
	// authentication: a new key, accepted as the first was, and the password fallback.
	srv.Stop()
	srv = consoleproxy.StartSSH(t, lab.Nodes[0].Addr(), consoleproxy.SSHOptions{EmptyPassword: true})
	s, err = devices.Connect(ctx, sshTarget("PC1", srv.Port()), "127.0.0.1", devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.HostKey() == first || s.HostKey() != srv.Fingerprint() {
		t.Fatalf("host key %q after a restart, before %q", s.HostKey(), first)
	}
	if r := mustRun(t, s, "show ip"); r.Failed || !strings.HasPrefix(r.Output, "NAME        : Web1[1]") {
		t.Fatalf("%+v", r)
	}
	s.Close()

	srv.Stop()
	if _, err := devices.Connect(ctx, sshTarget("PC1", srv.Port()), "127.0.0.1", devices.Options{}); err == nil ||
		!strings.Contains(err.Error(), "connect to console") {
		t.Fatalf("a stopped node: %v", err)
	}
}

// GNS3 3.1's telnet consoles open with IAC DO TTYPE alone and negotiate the rest after the
// client's answer, and send IAC NOP to idle clients (here every 20 ms, so that keepalives land
// in the middle of commands): a real VPCS behind such a console is driven as before.
func TestVPCSBehindGNS3TelnetProxy(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	proxy := consoleproxy.StartTelnet(t, lab.Nodes[0].Addr(), consoleproxy.TelnetOptions{Keepalive: 20 * time.Millisecond})
	var transcript strings.Builder
	s := openVPCS(t, &vpcslab.Node{Name: "PC1", ConsolePort: proxy.Port()}, nil, devices.Options{Transcript: &transcript})
	if s.Profile().Name != "vpcs" || s.Prompt() != "PC1>" {
		t.Fatalf("profile %s prompt %q", s.Profile().Name, s.Prompt())
	}
	for i := 0; i < 20; i++ {
		if r := mustRun(t, s, "show ip"); r.Failed || !strings.HasPrefix(r.Output, "NAME        : PC1[1]") || strings.Count(r.Output, "\n") != 7 {
			t.Fatalf("%d: %+v", i, r)
		}
	}
	if st := s.Stats(); st.Negotiations < 7 {
		t.Fatalf("negotiations %d: %+v", st.Negotiations, st)
	}
	if !strings.Contains(transcript.String(), `-> "\xff\xfc\x18"`) {
		t.Fatalf("IAC DO TTYPE was not refused with IAC WONT TTYPE:\n%s", transcript.String())
	}
}
