package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/relay"
)

// streamTurn relays a turn's events as SSE until its terminal event. Every frame carries the
// log's id, so Last-Event-ID resumes exactly where the client left. Hanging up only ends this
// relay; the turn goes on.
func (s *Server) streamTurn(c *gin.Context, sessionID, turnID, afterID string) {
	w := c.Writer
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()

	ctx := c.Request.Context()
	follow, closed := s.followStream(c)
	defer closed()
	heartbeat, _ := json.Marshal(relay.Payload{Type: relay.TypeHeartbeat, SessionID: sessionID})
	last := afterID
	for {
		events, err := s.deps.Events.Range(ctx, turnID, last, 256)
		if err == nil && len(events) == 0 {
			events, err = s.deps.Events.Wait(ctx, turnID, last, s.deps.Heartbeat)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading a turn's events", "turn", turnID, "error", err)
				msg, _ := json.Marshal(relay.Payload{Type: relay.TypeError, SessionID: sessionID,
					Error: "The copilot lost its event stream; reload to rejoin the turn."})
				writeFrame(w, last, relay.TypeError, msg)
				w.Flush()
			}
			return
		}
		if len(events) == 0 {
			writeFrame(w, last, relay.TypeHeartbeat, heartbeat)
			w.Flush()
			continue
		}
		follow.delivered(events)
		for _, ev := range events {
			writeFrame(w, ev.ID, ev.Type, ev.Data)
			last = ev.ID
			if relay.IsTerminal(ev.Type) {
				w.Flush()
				return
			}
		}
		w.Flush()
	}
}

func writeFrame(w io.Writer, id, typ string, data []byte) {
	if id != "" {
		fmt.Fprintf(w, "id: %s\n", id)
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
}
