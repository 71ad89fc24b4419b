package consoleproxy

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHOptions shape an SSH console.
type SSHOptions struct {
	// EmptyPassword refuses the "none" method and accepts the password method with an empty
	// password instead, as some SSH servers in front of a console do.
	EmptyPassword bool
}

// SSH is an SSH console in front of a telnet console.
type SSH struct {
	*Server
	cfg         *ssh.ServerConfig
	fingerprint string

	umu   sync.Mutex
	users []string
}

// StartSSH serves the telnet console at upstream ("127.0.0.1:port") over SSH; tb.Cleanup stops it.
func StartSSH(tb testing.TB, upstream string, opts SSHOptions) *SSH {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	s := &SSH{Server: newServer(tb, upstream), fingerprint: signer.PublicKey().Type() + " " + ssh.FingerprintSHA256(signer.PublicKey())}
	s.cfg = &ssh.ServerConfig{NoClientAuth: !opts.EmptyPassword, ServerVersion: "SSH-2.0-AsyncSSH_2.20.0"}
	if opts.EmptyPassword {
		s.cfg.PasswordCallback = func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if len(pw) != 0 {
				return nil, errors.New("wrong password")
			}
			return nil, nil
		}
	}
	s.cfg.AddHostKey(signer)
	s.handle = s.serve
	s.run()
	return s
}

// Fingerprint is the host key's fingerprint as a client records it ("ssh-ed25519 SHA256:…").
func (s *SSH) Fingerprint() string { return s.fingerprint }

// Users lists the user names clients logged in with.
func (s *SSH) Users() []string {
	s.umu.Lock()
	defer s.umu.Unlock()
	return append([]string(nil), s.users...)
}

func (s *SSH) serve(conn net.Conn) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(conn, s.cfg)
	if err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	defer sc.Close()
	s.umu.Lock()
	s.users = append(s.users, sc.User())
	s.umu.Unlock()
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.session(ch, creqs)
		}()
	}
}

// session answers a client's requests (a terminal, a shell or a command: all lead to the
// console) and passes its keys to the console.
func (s *SSH) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	go func() {
		for r := range reqs {
			switch r.Type {
			case "pty-req", "shell", "exec", "window-change", "env":
				_ = r.Reply(true, nil)
			default:
				_ = r.Reply(false, nil)
			}
		}
	}()
	defer s.join(ch)()
	defer ch.Close()
	buf := make([]byte, 1024)
	for {
		n, err := ch.Read(buf)
		if werr := s.toConsole(buf[:n]); werr != nil || err != nil {
			return
		}
	}
}
