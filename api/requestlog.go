package api

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// RequestIDHeader carries the id of a request: taken from the client when it sends a usable
// one (a proxy in front may already have assigned it), otherwise made here, and always answered.
const RequestIDHeader = "X-Request-ID"

const ctxRequestID = "gns3copilot.requestid"

// requestLog gives every request an id and, when the handler returns, writes one log line and
// the request metrics. It logs the route template, never the URL's query, headers or body, so
// neither a token nor a message can end up in the log.
func (s *Server) requestLog(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader(RequestIDHeader)
	if !usableRequestID(id) {
		id = uuid.NewString()
	}
	c.Set(ctxRequestID, id)
	c.Header(RequestIDHeader, id)

	c.Next()

	d := time.Since(start)
	route, status := c.FullPath(), c.Writer.Status()
	s.deps.Metrics.HTTPRequest(c.Request.Method, route, status, d)
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case route == "/healthz" || route == "/metrics":
		level = slog.LevelDebug // probes and scrapes would drown everything else
	}
	attrs := []slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.String("user_id", auth.UserID(c)),
		slog.String("request_id", id),
	}
	if route == "" {
		attrs = append(attrs, slog.String("path", c.Request.URL.Path))
	}
	s.log.LogAttrs(c.Request.Context(), level, "request", attrs...)
}

// usableRequestID accepts a client's id only when it is short and made of characters that are
// safe in a log line and a header.
func usableRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return false
		}
	}
	return true
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

const ctxTurnStart = "gns3copilot.turnstart"

// turnStarted writes the turn's opening log line and metric, and marks the request so its
// stream measures the time to the first answer text.
func (s *Server) turnStarted(c *gin.Context, in workflows.ChatTurnInput) {
	c.Set(ctxTurnStart, time.Now())
	s.deps.Metrics.TurnStarted(in.Mode)
	s.log.Info("turn", "event", "start", "turn_id", in.TurnID, "session_id", in.SessionID, "project_id", in.ProjectID,
		"user_id", in.UserID, "mode", in.Mode, "request_id", requestID(c))
}

// streamMetrics follows one SSE stream: it counts it open, and observes each event's delivery
// lag and, on a new turn's stream, the time to its first answer text. Events a rejoining client
// catches up on are not a delivery lag, so the first batch of a join is not observed.
type streamMetrics struct {
	s        *Server
	started  time.Time
	live     bool
	measured bool
}

func (s *Server) followStream(c *gin.Context) (*streamMetrics, func()) {
	m := &streamMetrics{s: s, started: c.GetTime(ctxTurnStart)}
	m.live = !m.started.IsZero()
	return m, s.deps.Metrics.StreamOpened()
}

func (m *streamMetrics) delivered(batch []relay.Event) {
	now := time.Now()
	for _, ev := range batch {
		if m.live {
			m.s.deps.Metrics.EventDelivered(ev.ID, now)
		}
		if !m.measured && !m.started.IsZero() && ev.Type == relay.TypeContent {
			m.measured = true
			m.s.deps.Metrics.FirstToken(now.Sub(m.started))
		}
	}
	m.live = true
}
