// Package consoleproxy serves a device's telnet console the way GNS3 3.1's console proxy does,
// over SSH (a node whose console_type is "ssh") or over telnet: one connection to the node's own
// console, opened when the proxy starts (as GNS3 opens it when the node starts) and shared by
// every client, who all see all output; the console's bytes relayed as they are; nothing shown
// to a client until it types, since what was printed before it joined went to nobody. Stop
// refuses new connections, as a stopped node does.
//
// Over SSH: no authentication (any user name, no password; or an empty password when asked
// for), a new ed25519 host key at every start, the terminal a client asks for accepted but
// changing nothing, a command given on the SSH line ignored. Over telnet: the connection opens
// with IAC DO TTYPE alone, the rest of the negotiation follows the client's answer (or a second
// without one), and IAC NOP keeps idle connections alive.
package consoleproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Server is a running console proxy.
type Server struct {
	ln       net.Listener
	upstream net.Conn
	// handle serves one accepted connection until it ends.
	handle func(net.Conn)

	mu      sync.Mutex
	clients map[io.WriteCloser]bool
	conns   map[net.Conn]bool
	wg      sync.WaitGroup
	stopped bool
}

func newServer(tb testing.TB, upstream string) *Server {
	tb.Helper()
	up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		tb.Fatalf("consoleproxy: the console behind the proxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		up.Close()
		tb.Fatalf("consoleproxy: %v", err)
	}
	s := &Server{ln: ln, upstream: up, clients: map[io.WriteCloser]bool{}, conns: map[net.Conn]bool{}}
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) run() {
	s.wg.Add(2)
	go s.broadcast()
	go s.accept()
}

// Addr is "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Port is the proxy's port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// broadcast relays the console's output to every client joined at the time.
func (s *Server) broadcast() {
	defer s.wg.Done()
	buf := make([]byte, 1024)
	for {
		n, err := s.upstream.Read(buf)
		s.mu.Lock()
		for c := range s.clients {
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr == nil {
					continue
				}
			} else if err == nil {
				continue
			}
			c.Close()
			delete(s.clients, c)
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// join adds a client to the broadcast; the returned function removes it.
func (s *Server) join(c io.WriteCloser) func() {
	s.mu.Lock()
	s.clients[c] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.clients, c)
		s.mu.Unlock()
	}
}

// toConsole writes a client's keys to the console.
func (s *Server) toConsole(keys []byte) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := s.upstream.Write(keys)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
				conn.Close()
			}()
			s.handle(conn)
		}()
	}
}

// Stop closes the port, every client and the connection to the console, and waits for the
// proxy's goroutines. Safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	for c := range s.clients {
		c.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.upstream.Close()
	s.wg.Wait()
}
