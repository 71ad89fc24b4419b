package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// streamTurn relays a turn's events as SSE until its terminal event. Every frame carries the
// log's id, so Last-Event-ID resumes exactly where the client left. Hanging up only ends this
// relay; the turn goes on. Each burst of frames must reach the connection within WriteTimeout:
// a client that stops reading (a stalled browser, a dead network path) is dropped then instead
// of holding this goroutine and its buffers forever, and rejoins with Last-Event-ID like any
// other.
//
// A client without approval cards (cards false) gets each approval event as the chat's plain
// events too, and its stream ends while the turn waits for a decision (panelFrames).
func (s *Server) streamTurn(c *gin.Context, sessionID, turnID, afterID string, cards bool) {
	w, err := s.startSSE(c)
	defer w.end()
	if err != nil {
		s.dropStream(err, "turn", turnID)
		return
	}
	follow, closed := s.followStream(c)
	defer closed()
	heartbeat, _ := json.Marshal(relay.Payload{Type: relay.TypeHeartbeat, SessionID: sessionID})
	ts := &turnStream{s: s, w: w, ctx: c.Request.Context(), sessionID: sessionID, turnID: turnID,
		last: afterID, cards: cards, heartbeat: heartbeat}
	for {
		events, err := ts.next()
		if err != nil {
			if ts.outage(err) {
				continue
			}
			return
		}
		follow.delivered(events)
		ended := ts.relay(events)
		if err := w.send(); err != nil {
			s.dropStream(err, "turn", turnID)
			return
		}
		if ended {
			return
		}
	}
}

// turnStream is one client's relay of one turn: where it is in the log, and since when the log
// has not answered.
type turnStream struct {
	s                 *Server
	w                 *sseWriter
	ctx               context.Context
	sessionID, turnID string
	last              string // the id of the last event sent
	cards             bool
	heartbeat         []byte
	failingSince      time.Time
}

// next is the events after last, waiting up to a heartbeat's interval for some.
func (ts *turnStream) next() ([]relay.Event, error) {
	events, err := ts.s.deps.Events.Range(ts.ctx, ts.turnID, ts.last, 256)
	if err == nil && len(events) == 0 {
		events, err = ts.s.deps.Events.Wait(ts.ctx, ts.turnID, ts.last, ts.s.deps.Heartbeat)
	}
	if err == nil {
		ts.failingSince = time.Time{}
	}
	return events, err
}

// outage handles a failed read and reports whether to read again. The log may come back (Redis
// restarting): the client is kept, with heartbeats, and the stream goes on from the same id,
// for logOutageLimit; after that, or for an error that will not pass, it gets an error frame.
func (ts *turnStream) outage(err error) (retry bool) {
	if ts.ctx.Err() != nil {
		return false
	}
	if !errors.Is(err, relay.ErrInvalidID) {
		if ts.failingSince.IsZero() {
			ts.failingSince = time.Now()
			ts.s.log.Warn("the event log does not answer; the stream waits for it", "turn", ts.turnID, "error", err)
		}
		if time.Since(ts.failingSince) < logOutageLimit {
			ts.w.frame(ts.last, relay.TypeHeartbeat, ts.heartbeat)
			if err := ts.w.send(); err != nil {
				ts.s.dropStream(err, "turn", ts.turnID)
				return false
			}
			select {
			case <-ts.ctx.Done():
				return false
			case <-time.After(logRetryEvery):
				return true
			}
		}
	}
	ts.s.log.Error("reading a turn's events", "turn", ts.turnID, "error", err)
	msg, _ := json.Marshal(relay.Payload{Type: relay.TypeError, SessionID: ts.sessionID,
		Error: "The copilot lost its event stream; reload to rejoin the turn."})
	ts.w.frame(ts.last, relay.TypeError, msg)
	_ = ts.w.send()
	return false
}

// relay queues a batch's frames (a heartbeat for an empty one) and reports whether the stream
// has ended: the turn's terminal event, or, for a client without cards, an approval it waits
// for that nobody has decided since.
func (ts *turnStream) relay(events []relay.Event) (ended bool) {
	if len(events) == 0 {
		ts.w.frame(ts.last, relay.TypeHeartbeat, ts.heartbeat)
	}
	for _, ev := range events {
		ts.last = ev.ID
		if !ts.cards {
			frames, waiting := panelFrames(ev)
			stop := waiting != "" && !ts.s.decidedLater(ts.ctx, ts.turnID, ev.ID, waiting)
			if waiting != "" && !stop {
				frames = frames[:len(frames)-1] // answered since: no done, the turn goes on
			}
			for _, f := range frames {
				ts.w.frame(f.ID, f.Type, f.Data)
			}
			if stop {
				return true
			}
		} else {
			ts.w.frame(ev.ID, ev.Type, ev.Data)
		}
		if relay.IsTerminal(ev.Type) {
			return true
		}
	}
	return false
}

// How long a stream waits for an event log that stopped answering before it gives up with an
// error frame, and how often it asks again meanwhile.
const (
	logOutageLimit = 30 * time.Second
	logRetryEvery  = 500 * time.Millisecond
)

// sseWriter is the one way the API writes an event stream (a turn's, the topology's). Frames go
// into the response's own buffer (no second one per idle client) and leave in bursts; each
// burst must reach the connection within WriteTimeout, so a client that stops reading (a
// stalled browser, a dead network path) is dropped then instead of holding its goroutine and
// buffers forever. A write error sticks and ends the stream at the next send.
type sseWriter struct {
	rc      *http.ResponseController
	frames  frameWriter
	timeout time.Duration
	armed   bool // the current burst's deadline is set
}

// startSSE answers 200 with the event-stream headers and sends them. The caller ends the
// writer (deferred) whatever the error.
func (s *Server) startSSE(c *gin.Context) (*sseWriter, error) {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w := &sseWriter{rc: http.NewResponseController(c.Writer), frames: frameWriter{w: c.Writer}, timeout: s.deps.WriteTimeout}
	w.arm()
	c.Writer.WriteHeader(http.StatusOK)
	return w, w.send()
}

// frame queues one frame of the current burst.
func (w *sseWriter) frame(id, typ string, data []byte) {
	w.arm()
	w.frames.frame(id, typ, data)
}

// send flushes the burst; the next frame starts a new one with a deadline of its own.
func (w *sseWriter) send() error {
	w.arm()
	w.armed = false
	if w.frames.err != nil {
		return w.frames.err
	}
	return w.rc.Flush()
}

func (w *sseWriter) arm() {
	if !w.armed && w.timeout > 0 {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
		w.armed = true
	}
}

// end clears the deadline: the connection may serve other requests after this stream.
func (w *sseWriter) end() { _ = w.rc.SetWriteDeadline(time.Time{}) }

// dropStream logs why a stream ended on a write error; what names the stream (e.g. "turn", id).
func (s *Server) dropStream(err error, what ...any) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.log.Warn("dropped an SSE client that stopped reading", append(what, "timeout", s.deps.WriteTimeout)...)
		return
	}
	s.log.Debug("an SSE client went away", append(what, "error", err)...)
}

// frameWriter writes SSE frames and keeps the first write error; nothing is written after it.
type frameWriter struct {
	w   io.Writer
	err error
}

func (f *frameWriter) frame(id, typ string, data []byte) {
	if id != "" {
		f.write("id: " + id + "\n")
	}
	f.write("event: " + typ + "\ndata: ")
	if f.err == nil {
		_, f.err = f.w.Write(data)
	}
	f.write("\n\n")
}

func (f *frameWriter) write(s string) {
	if f.err == nil {
		_, f.err = io.WriteString(f.w, s)
	}
}
