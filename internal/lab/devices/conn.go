package devices

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// errQuiet is a read deadline passing without data: the console was quiet.
var errQuiet = errors.New("quiet")

// fill performs one read with the given deadline. It returns errQuiet when
// the deadline passes without data. A read that brings only telnet commands
// needing no answer (a keepalive NOP, an offer already answered) is no data:
// it must not break the silence a prompt is confirmed by.
func (s *Session) fill(ctx context.Context, deadline time.Time) (int, error) {
	if s.broken != nil {
		return 0, s.broken
	}
	if err := s.conn.SetReadDeadline(deadline); err != nil {
		return 0, s.fail(err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		s.qa.arm()
		n, err := s.conn.Read(s.rbuf)
		if n > 0 {
			if werr := s.take(s.rbuf[:n]); werr != nil {
				return n, werr
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if cerr := ctx.Err(); cerr != nil {
					return n, cerr
				}
				if n > 0 {
					return n, nil
				}
				return 0, errQuiet
			}
			return n, s.fail(err)
		}
		if len(s.data) > 0 || len(s.reply) > 0 {
			return n, nil
		}
	}
}

// take decodes bytes read from the console: telnet commands are answered (on telnet), and the
// payload goes to the screen.
func (s *Session) take(raw []byte) error {
	s.received += len(raw)
	if s.opts.Transcript != nil {
		fmt.Fprintf(s.opts.Transcript, "<- %q\n", raw)
	}
	before := s.tn.Negotiations
	s.data, s.reply = s.tn.feed(raw, s.data[:0], s.reply[:0])
	s.stats.Negotiations += s.tn.Negotiations - before
	// Over SSH the bytes are the node's telnet console relayed as they are: its commands
	// are dropped, but not answered, since every client of the console shares the relay.
	if len(s.reply) > 0 && s.transport == ConsoleTelnet {
		if err := s.write(s.reply, true); err != nil {
			return err
		}
	}
	s.scr.write(s.data)
	if s.collect && len(s.seen) < 4096 {
		s.seen = append(s.seen, s.data...)
	}
	return nil
}

func (s *Session) interruptRead() {
	_ = s.conn.SetReadDeadline(time.Unix(1, 0))
}

// watch makes a cancelled ctx unblock the read in progress. The returned
// stop waits for a callback that already started, so a late cancellation
// cannot cut short the next operation's read.
func (s *Session) watch(ctx context.Context) func() {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		s.interruptRead()
	})
	return func() {
		if !stop() {
			<-done
		}
	}
}

func (s *Session) fail(err error) error {
	if s.broken == nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: %s closed the connection", ErrSessionClosed, s.addr)
		} else if !errors.Is(err, ErrSessionClosed) {
			err = fmt.Errorf("%w: %s: %v", ErrSessionClosed, s.addr, err)
		}
		s.broken = err
		_ = s.conn.Close()
	}
	return s.broken
}

// write sends raw bytes. Negotiation replies are written on their own; a
// command is never written within NegotiationGap of them, because vpcs discards a
// whole read that starts with 0xFF and would lose a command glued to it.
func (s *Session) write(b []byte, negotiation bool) error {
	if !negotiation {
		if gap := s.opts.NegotiationGap - time.Since(s.lastIAC); gap > 0 {
			time.Sleep(gap)
		}
	}
	if err := s.conn.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return s.fail(err)
	}
	if _, err := s.conn.Write(b); err != nil {
		return s.fail(err)
	}
	if negotiation {
		s.lastIAC = time.Now()
		if s.opts.Transcript != nil {
			fmt.Fprintf(s.opts.Transcript, "-> %q\n", b)
		}
	}
	return nil
}

func (s *Session) send(text string, hidden bool) error {
	if s.opts.Transcript != nil {
		if hidden {
			fmt.Fprintf(s.opts.Transcript, "-> (hidden)\n")
		} else {
			fmt.Fprintf(s.opts.Transcript, "-> %q\n", text)
		}
	}
	return s.write(escapeIAC([]byte(text)), false)
}
