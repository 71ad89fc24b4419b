package api

import (
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

	ctx := c.Request.Context()
	follow, closed := s.followStream(c)
	defer closed()
	heartbeat, _ := json.Marshal(relay.Payload{Type: relay.TypeHeartbeat, SessionID: sessionID})
	last := afterID
	var failingSince time.Time
	for {
		events, err := s.deps.Events.Range(ctx, turnID, last, 256)
		if err == nil && len(events) == 0 {
			events, err = s.deps.Events.Wait(ctx, turnID, last, s.deps.Heartbeat)
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, relay.ErrInvalidID) {
			// The log may come back (Redis restarting): keep the client, with heartbeats, and
			// go on from the same id, for a while.
			if failingSince.IsZero() {
				failingSince = time.Now()
				s.log.Warn("the event log does not answer; the stream waits for it", "turn", turnID, "error", err)
			}
			if time.Since(failingSince) < logOutageLimit {
				w.frame(last, relay.TypeHeartbeat, heartbeat)
				if err := w.send(); err != nil {
					s.dropStream(err, "turn", turnID)
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(logRetryEvery):
				}
				continue
			}
		}
		if err == nil {
			failingSince = time.Time{}
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading a turn's events", "turn", turnID, "error", err)
				msg, _ := json.Marshal(relay.Payload{Type: relay.TypeError, SessionID: sessionID,
					Error: "The copilot lost its event stream; reload to rejoin the turn."})
				w.frame(last, relay.TypeError, msg)
				_ = w.send()
			}
			return
		}
		if len(events) == 0 {
			w.frame(last, relay.TypeHeartbeat, heartbeat)
		}
		ended := false
		follow.delivered(events)
		for _, ev := range events {
			last = ev.ID
			if !cards {
				frames, waiting := panelFrames(ev)
				stop := waiting != "" && !s.decidedLater(ctx, turnID, ev.ID, waiting)
				if waiting != "" && !stop {
					frames = frames[:len(frames)-1] // answered since: no done, the turn goes on
				}
				for _, f := range frames {
					w.frame(f.ID, f.Type, f.Data)
				}
				if stop {
					ended = true
					break
				}
			} else {
				w.frame(ev.ID, ev.Type, ev.Data)
			}
			if relay.IsTerminal(ev.Type) {
				ended = true
				break
			}
		}
		if err := w.send(); err != nil {
			s.dropStream(err, "turn", turnID)
			return
		}
		if ended {
			return
		}
	}
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
