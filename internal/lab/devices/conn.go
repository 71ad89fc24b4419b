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
// the deadline passes without data.
func (s *Session) fill(ctx context.Context, deadline time.Time) (int, error) {
	if s.broken != nil {
		return 0, s.broken
	}
	if err := s.conn.SetReadDeadline(deadline); err != nil {
		return 0, s.fail(err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.qa.arm()
	n, err := s.conn.Read(s.rbuf)
	if n > 0 {
		s.received += n
		if s.opts.Transcript != nil {
			fmt.Fprintf(s.opts.Transcript, "<- %q\n", s.rbuf[:n])
		}
		before := s.tn.Negotiations
		s.data, s.reply = s.tn.feed(s.rbuf[:n], s.data[:0], s.reply[:0])
		s.stats.Negotiations += s.tn.Negotiations - before
		if len(s.reply) > 0 {
			if werr := s.write(s.reply, true); werr != nil {
				return n, werr
			}
		}
		s.scr.write(s.data)
		if s.collect && len(s.seen) < 4096 {
			s.seen = append(s.seen, s.data...)
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
	return n, nil
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
// command is never written within iacGap of them, because vpcs discards a
// whole read that starts with 0xFF and would lose a command glued to it.
func (s *Session) write(b []byte, negotiation bool) error {
	if !negotiation {
		if gap := iacGap - time.Since(s.lastIAC); gap > 0 {
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
