//go:build linux

package frrlab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/childproc"
	"golang.org/x/sys/unix"
)

// console is a router's serial console as GNS3 serves a QEMU node's: one shell on a pty that
// lives as long as the node, and a telnet server on 127.0.0.1 that shares it among clients.
// Output goes to whoever is connected when it is printed, so a fresh connection sees nothing
// until it presses Enter.
type console struct {
	ln     net.Listener
	master *os.File
	cmd    *exec.Cmd
	exited <-chan struct{}

	mu      sync.Mutex
	clients map[net.Conn]bool
	wg      sync.WaitGroup
	// ready is closed once the pty has printed readyMark (the first prompt), so a lab is handed
	// over booted, like a node that has been running for a while.
	ready     chan struct{}
	readyMark string
}

// openPTY returns a new pseudo-terminal's master and the path of its slave. The master is
// non-blocking, so that Go's poller serves it and closing it ends a read in progress: a blocked
// read keeps the master open, and a program on the console that outlives its shell (vtysh, when
// SIGHUP was ignored before the test started, as under nohup) would never get the hangup that
// ends it, nor the console's stop return.
func openPTY() (*os.File, string, error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("pty number: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), fmt.Sprintf("/dev/pts/%d", n), nil
}

// startConsole runs argv on a new pty as a session leader and serves the pty on a telnet port
// of 127.0.0.1.
func startConsole(argv []string, env []string, dir, readyMark string) (*console, error) {
	master, slavePath, err := openPTY()
	if err != nil {
		return nil, err
	}
	slave, err := os.OpenFile(slavePath, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, err
	}
	defer slave.Close()
	// A serial console's size: wide enough that vtysh does not wrap command lines.
	_ = unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 250})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		master.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	exited, err := childproc.Start(cmd)
	if err != nil {
		ln.Close()
		master.Close()
		return nil, err
	}
	c := &console{ln: ln, master: master, cmd: cmd, exited: exited, clients: map[net.Conn]bool{},
		ready: make(chan struct{}), readyMark: readyMark}
	c.wg.Add(2)
	go c.pump()
	go c.accept()
	return c, nil
}

func (c *console) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// bootConsole starts a console and waits until it shows ready (its first prompt), so the
// machine is handed over booted; a console that never does is stopped.
func bootConsole(name string, argv, env []string, dir, ready string) (*console, error) {
	c, err := startConsole(argv, env, dir, ready)
	if err != nil {
		return nil, fmt.Errorf("%s: console: %w", name, err)
	}
	select {
	case <-c.ready:
		return c, nil
	case <-c.exited:
		err = fmt.Errorf("%s: the console shell exited at start", name)
	case <-time.After(15 * time.Second):
		err = fmt.Errorf("%s: no %q on the console within 15s", name, ready)
	}
	_ = c.stop()
	return nil, err
}

// pump copies the pty's output to every connected client, doubling 0xFF as telnet wants.
func (c *console) pump() {
	defer c.wg.Done()
	buf := make([]byte, 4096)
	var boot []byte
	for {
		n, err := c.master.Read(buf)
		if c.readyMark != "" {
			if boot = append(boot, buf[:n]...); strings.Contains(string(boot), c.readyMark) {
				close(c.ready)
				c.readyMark, boot = "", nil
			}
		}
		if n > 0 {
			out := escapeIAC(buf[:n])
			c.mu.Lock()
			for conn := range c.clients {
				_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
				if _, werr := conn.Write(out); werr != nil {
					conn.Close()
					delete(c.clients, conn)
				}
			}
			c.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (c *console) accept() {
	defer c.wg.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		// GNS3's console server: the server echoes and suppresses go-ahead.
		if _, err := conn.Write([]byte{iac, will, 1, iac, will, 3}); err != nil {
			conn.Close()
			continue
		}
		c.mu.Lock()
		c.clients[conn] = true
		c.mu.Unlock()
		c.wg.Add(1)
		go c.serve(conn)
	}
}

const (
	iac  = 255
	will = 251
	wont = 252
	do   = 253
	dont = 254
	sb   = 250
	se   = 240
)

// serve passes a client's keys to the pty, without telnet commands, and with the CR of a
// telnet line end standing for the Enter key (its LF or NUL dropped).
func (c *console) serve(conn net.Conn) {
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		delete(c.clients, conn)
		c.mu.Unlock()
		conn.Close()
	}()
	buf := make([]byte, 1024)
	state, afterCR := 0, false
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		var keys []byte
		for _, b := range buf[:n] {
			switch state {
			case 1: // after IAC
				switch b {
				case will, wont, do, dont:
					state = 2
				case sb:
					state = 3
				case iac:
					keys, state = append(keys, b), 0
				default:
					state = 0
				}
				continue
			case 2: // option byte
				state = 0
				continue
			case 3: // subnegotiation until IAC SE
				if b == iac {
					state = 4
				}
				continue
			case 4:
				state = 3
				if b == se {
					state = 0
				}
				continue
			}
			if b == iac {
				state = 1
				continue
			}
			if afterCR && (b == '\n' || b == 0) {
				afterCR = false
				continue
			}
			afterCR = b == '\r'
			keys = append(keys, b)
		}
		if len(keys) > 0 {
			if _, err := c.master.Write(keys); err != nil {
				return
			}
		}
	}
}

// stop ends the console: no new clients, the shell hung up (SIGHUP, which an interactive bash
// obeys and passes to its jobs, vtysh among them), then killed by its PID if it lingers.
func (c *console) stop() error {
	c.ln.Close()
	c.mu.Lock()
	for conn := range c.clients {
		conn.Close()
	}
	c.mu.Unlock()
	_ = c.cmd.Process.Signal(syscall.SIGHUP)
	var err error
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		// Generous: a shell that obeys SIGHUP at once has been seen to take over 3 s to exit
		// on a loaded 2-core machine (CI's kind), and only one that ignores it should fail.
		_ = c.cmd.Process.Kill()
		<-c.exited
		err = errors.New("the console shell ignored SIGHUP and was killed")
	}
	c.master.Close()
	c.wg.Wait()
	return err
}

func escapeIAC(b []byte) []byte {
	out := b
	for i, x := range b {
		if x == iac {
			out = make([]byte, 0, len(b)+4)
			out = append(out, b[:i]...)
			for _, y := range b[i:] {
				out = append(out, y)
				if y == iac {
					out = append(out, iac)
				}
			}
			break
		}
	}
	return out
}
