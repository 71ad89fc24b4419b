package consoleproxy

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Telnet bytes the proxy speaks.
const (
	tIAC  = 255
	tDONT = 254
	tDO   = 253
	tWONT = 252
	tWILL = 251
	tSB   = 250
	tSE   = 240
	tNOP  = 241

	optBinary  = 0
	optEcho    = 1
	optSGA     = 3
	optTTYPE   = 24
	optNAWS    = 31
	optEnviron = 39
)

// TelnetOptions shape a telnet console.
type TelnetOptions struct {
	// Keepalive is how often an idle client gets IAC NOP (GNS3: 60 s; default 60 s).
	Keepalive time.Duration
}

// StartTelnet serves the telnet console at upstream ("127.0.0.1:port") as GNS3 3.1's telnet
// console proxy does; tb.Cleanup stops it.
func StartTelnet(tb testing.TB, upstream string, opts TelnetOptions) *Server {
	tb.Helper()
	if opts.Keepalive <= 0 {
		opts.Keepalive = 60 * time.Second
	}
	s := newServer(tb, upstream)
	s.handle = func(conn net.Conn) { serveTelnet(s, conn, opts) }
	s.run()
	return s
}

// telnetClient is one telnet client: its writes are serialised, since the broadcast and the
// keepalive both write to it.
type telnetClient struct {
	mu   sync.Mutex
	conn net.Conn
}

func (c *telnetClient) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.conn.Write(b)
}

func (c *telnetClient) Close() error { return c.conn.Close() }

// serveTelnet opens with IAC DO TTYPE alone, waits up to a second for the client's answer, then
// offers the rest (echo, go-ahead suppression, binary, no window size) and joins the client to
// the console, passing its keys on without telnet commands.
func serveTelnet(s *Server, conn net.Conn, opts TelnetOptions) {
	c := &telnetClient{conn: conn}
	if _, err := c.Write([]byte{tIAC, tDO, optTTYPE}); err != nil {
		return
	}
	var p telnetReader
	buf := make([]byte, 1024)
	var early []byte
	deadline := time.Now().Add(time.Second)
	for !p.answeredTTYPE && time.Now().Before(deadline) {
		_ = conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		early = append(early, p.keys(buf[:n])...)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				break
			}
			return
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	if _, err := c.Write([]byte{tIAC, tWILL, optSGA, tIAC, tWILL, optEcho, tIAC, tDO, optEnviron, tIAC, tDONT, optNAWS,
		tIAC, tWILL, optBinary, tIAC, tDO, optBinary}); err != nil {
		return
	}
	defer s.join(c)()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(opts.Keepalive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := c.Write([]byte{tIAC, tNOP}); err != nil {
					return
				}
			}
		}
	}()
	if s.toConsole(early) != nil {
		return
	}
	for {
		n, err := conn.Read(buf)
		if werr := s.toConsole(p.keys(buf[:n])); werr != nil || err != nil {
			return
		}
	}
}

// telnetReader strips telnet commands from what a client sends.
type telnetReader struct {
	state         int
	verb          byte
	answeredTTYPE bool
}

func (p *telnetReader) keys(in []byte) []byte {
	var out []byte
	for _, b := range in {
		switch p.state {
		case 1: // after IAC
			switch b {
			case tWILL, tWONT, tDO, tDONT:
				p.verb, p.state = b, 2
			case tSB:
				p.state = 3
			case tIAC:
				out, p.state = append(out, b), 0
			default:
				p.state = 0
			}
		case 2: // the option of a verb
			if b == optTTYPE && (p.verb == tWILL || p.verb == tWONT) {
				p.answeredTTYPE = true
			}
			p.state = 0
		case 3: // subnegotiation, until IAC SE
			if b == tIAC {
				p.state = 4
			}
		case 4:
			p.state = 3
			if b == tSE {
				p.state = 0
			}
		default:
			if b == tIAC {
				p.state = 1
				continue
			}
			out = append(out, b)
		}
	}
	return out
}
