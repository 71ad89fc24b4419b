package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/relay"
)

// streamTurn relays a turn's events as SSE until its terminal event. Every frame carries the
// log's id, so Last-Event-ID resumes exactly where the client left. Hanging up only ends this
// relay; the turn goes on. Each burst of frames must reach the connection within WriteTimeout:
// a client that stops reading (a stalled browser, a dead network path) is dropped then instead
// of holding this goroutine and its buffers forever, and rejoins with Last-Event-ID like any
// other.
func (s *Server) streamTurn(c *gin.Context, sessionID, turnID, afterID string) {
	w := c.Writer
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	// The connection may serve other requests after this stream: leave it without a deadline.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	// Frames go into the response's own buffer (no second one per idle client); a write error
	// sticks in buf and ends the stream at the next send.
	buf := &frameWriter{w: w}
	send := func() error {
		if buf.err != nil {
			return buf.err
		}
		return rc.Flush()
	}
	s.armWriteDeadline(rc)
	w.WriteHeader(http.StatusOK)
	if err := send(); err != nil {
		s.dropStream(turnID, err)
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
		s.armWriteDeadline(rc)
		if err != nil && ctx.Err() == nil && !errors.Is(err, relay.ErrInvalidID) {
			// The log may come back (Redis restarting): keep the client, with heartbeats, and
			// go on from the same id, for a while.
			if failingSince.IsZero() {
				failingSince = time.Now()
				s.log.Warn("the event log does not answer; the stream waits for it", "turn", turnID, "error", err)
			}
			if time.Since(failingSince) < logOutageLimit {
				buf.frame(last, relay.TypeHeartbeat, heartbeat)
				if err := send(); err != nil {
					s.dropStream(turnID, err)
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
				buf.frame(last, relay.TypeError, msg)
				_ = send()
			}
			return
		}
		if len(events) == 0 {
			buf.frame(last, relay.TypeHeartbeat, heartbeat)
		}
		ended := false
		follow.delivered(events)
		for _, ev := range events {
			buf.frame(ev.ID, ev.Type, ev.Data)
			last = ev.ID
			if relay.IsTerminal(ev.Type) {
				ended = true
				break
			}
		}
		if err := send(); err != nil {
			s.dropStream(turnID, err)
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

// armWriteDeadline gives the next burst of frames WriteTimeout to reach the connection.
func (s *Server) armWriteDeadline(rc *http.ResponseController) {
	if s.deps.WriteTimeout > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(s.deps.WriteTimeout))
	}
}

func (s *Server) dropStream(turnID string, err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.log.Warn("dropped an SSE client that stopped reading", "turn", turnID, "timeout", s.deps.WriteTimeout)
		return
	}
	s.log.Debug("an SSE client went away", "turn", turnID, "error", err)
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
