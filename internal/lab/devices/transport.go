package devices

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// The console types a session can drive. GNS3 3.1 runs an SSH server on a node's console port
// in front of the same serial console that its telnet consoles show, for networks that block
// telnet.
const (
	ConsoleTelnet = "telnet"
	ConsoleSSH    = "ssh"
)

// Endpoint is where a console listens and how it is spoken to.
type Endpoint struct {
	// Addr is "host:port".
	Addr string
	// Type is ConsoleTelnet or ConsoleSSH; empty means telnet.
	Type string
}

// DefaultSSHUser is the user name an SSH console is asked for when the session has none: GNS3's
// consoles accept any.
const DefaultSSHUser = "gns3"

// dialConsole connects to an endpoint and returns a connection that carries the console's bytes
// with read and write deadlines, whichever the transport, and for SSH the host key's
// fingerprint.
func dialConsole(ctx context.Context, ep Endpoint, opts Options) (net.Conn, string, error) {
	dial := opts.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: opts.DialTimeout}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	conn, err := dial(dctx, "tcp", ep.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("connect to console %s: %w", ep.Addr, err)
	}
	if ep.Type != ConsoleSSH {
		return conn, "", nil
	}
	sc, fp, err := sshConsole(dctx, conn, ep.Addr, opts)
	if err != nil {
		conn.Close()
		return nil, "", fmt.Errorf("SSH console %s: %w", ep.Addr, err)
	}
	return sc, fp, nil
}

// sshConsole opens a shell with a terminal on an SSH connection. Authentication is the "none"
// method (what GNS3's consoles accept, for any user name), then an empty password. The host
// key is accepted and its fingerprint returned: GNS3 makes a new key every time a node starts,
// so no key can be pinned, and the console's address is the one GNS3 gave for the node.
func sshConsole(ctx context.Context, conn net.Conn, addr string, opts Options) (net.Conn, string, error) {
	user := opts.Username
	if user == "" {
		user = DefaultSSHUser
	}
	var fingerprint string
	cfg := &ssh.ClientConfig{
		User: user,
		// The client always tries "none" first; this is the fallback.
		Auth: []ssh.AuthMethod{ssh.Password("")},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			fingerprint = key.Type() + " " + ssh.FingerprintSHA256(key)
			return nil
		},
	}
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, "", err
	}
	// A cancelled ctx cuts the handshake short, as it cuts a read.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		return nil, "", err
	}
	client := ssh.NewClient(c, chans, reqs)
	sess, err := openShell(client)
	if err != nil {
		client.Close()
		return nil, "", err
	}
	if !stop() {
		sess.Close()
		return nil, "", fmt.Errorf("opening the shell: %w", context.Cause(ctx))
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		sess.Close()
		return nil, "", err
	}
	return sess, fingerprint, nil
}

// openShell starts a shell with a terminal (a wide one, so that long command lines are not
// wrapped) and joins its input and output to one end of an in-memory pipe, whose other end
// gives the session the deadlines it reads and writes with.
func openShell(client *ssh.Client) (net.Conn, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, err
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	sess.Stderr = io.Discard
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := sess.RequestPty("vt100", 50, 250, modes); err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	if err := sess.Shell(); err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	local, remote := net.Pipe()
	sc := &sshConn{Conn: local, remote: remote, sess: sess, client: client}
	go func() {
		_, _ = io.Copy(remote, stdout)
		remote.Close() // the console ended: the session reads EOF
	}()
	go func() {
		_, _ = io.Copy(stdin, remote)
		stdin.Close()
	}()
	return sc, nil
}

// sshConn is an SSH shell as a net.Conn.
type sshConn struct {
	net.Conn
	remote net.Conn
	sess   *ssh.Session
	client *ssh.Client
	once   sync.Once
}

func (c *sshConn) Close() error {
	var err error
	c.once.Do(func() {
		err = c.Conn.Close()
		c.remote.Close()
		c.sess.Close()
		c.client.Close()
	})
	return err
}
