package fakegns3

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// OpNotifications is a project's notification stream: one JSON object a line, as in
// shared/gns3/samples/v3.0.6/project-notifications.ndjson. Every change of the fake's state
// (through HTTP or the Go helpers) is announced on it the way GNS3 announces it: node.created,
// node.updated (status, move, rename), node.deleted (after the link.deleted of its links),
// link.created, link.updated (capture on/off), link.deleted, project.closed; a ping with compute
// statistics when nothing happened for the ping interval.
const OpNotifications Op = "GET /v3/projects/{project_id}/notifications"

// DefaultNotificationPing is GNS3's own interval between pings on an idle stream.
const DefaultNotificationPing = 5 * time.Second

// WithNotificationPing sets the ping interval of the notification stream.
func WithNotificationPing(d time.Duration) Option {
	return func(s *Server) { s.notes.ping = d }
}

// notifier holds the open notification streams; guarded by Server.mu.
type notifier struct {
	ping time.Duration
	subs map[string]map[*subscriber]bool // by project ID
}

type subscriber struct {
	lines chan []byte
	drop  chan struct{} // closed to end the stream from the server's side
}

func (sub *subscriber) close() {
	select {
	case <-sub.drop:
	default:
		close(sub.drop)
	}
}

// emit sends one notification to the project's listeners; the caller holds s.mu. A listener
// too slow to keep up is dropped, as a client that cannot keep up loses its stream.
func (s *Server) emit(projectID, action string, event any) {
	subs := s.notes.subs[projectID]
	if len(subs) == 0 {
		return
	}
	b, err := json.Marshal(map[string]any{"action": action, "event": event})
	if err != nil {
		s.t.Errorf("fakegns3: encoding a notification: %v", err)
		return
	}
	for sub := range subs {
		select {
		case sub.lines <- b:
		default:
			sub.close()
		}
	}
}

// emitNode announces a node in the shape the stream uses (the node list's, with its real
// status: a node that is still booting is announced when GNS3 marks it started).
func (s *Server) emitNode(p *project, n *node, action string) {
	if len(s.notes.subs[p.id]) == 0 {
		return
	}
	polls := n.pendingPolls
	out := s.nodeJSON(p, n, shapeList)
	n.pendingPolls = polls
	out.Status = n.status
	s.emit(p.id, action, out)
}

func (s *Server) emitLink(p *project, l *link, action string) {
	if len(s.notes.subs[p.id]) == 0 {
		return
	}
	s.emit(p.id, action, s.linkJSON(p, l, false))
}

// SetCapturing starts or stops a capture on a link, as the GNS3 GUI does (capture.go keeps the
// capture), announcing it with link.updated.
func (s *Server) SetCapturing(linkID string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.mustLink(linkID)
	if on {
		s.startCapture(p, l)
	} else {
		s.stopCapture(l)
	}
	s.emitLink(p, l, "link.updated")
}

// MoveNode moves a node as a user dragging it in the GNS3 GUI does.
func (s *Server) MoveNode(nodeID string, x, y int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, n := s.mustNode(nodeID)
	n.x, n.y = x, y
	s.emitNode(p, n, "node.updated")
}

// Notify sends a raw line to the project's notification listeners (e.g. a line that is not
// JSON, to test a client's recovery).
func (s *Server) Notify(projectID, rawLine string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.notes.subs[projectID] {
		select {
		case sub.lines <- []byte(rawLine):
		default:
			sub.close()
		}
	}
}

// DropNotifications ends every open notification stream of the project, as a network failure
// or a GNS3 restart does.
func (s *Server) DropNotifications(projectID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.notes.subs[projectID] {
		sub.close()
	}
}

// NotificationListeners counts the project's open notification streams.
func (s *Server) NotificationListeners(projectID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.notes.subs[projectID])
}

// notifications serves OpNotifications with the checks every route shares (count, latency,
// authentication, injected failures, Project.Audit), then streams until the client leaves or
// the stream is dropped.
func (s *Server) notifications(w http.ResponseWriter, r *http.Request) {
	if !s.countAndWait(OpNotifications, r) {
		return
	}
	s.mu.Lock()
	u, herr := s.authUser(r)
	if herr == nil {
		if f := s.takeFailure(OpNotifications, r); f != nil {
			herr = &httpErr{f.Status, f.Message}
		}
	}
	var p *project
	if herr == nil {
		p, herr = s.projectFor(r, u, "Project.Audit", false)
	}
	if herr != nil {
		s.mu.Unlock()
		writeErr(w, herr)
		return
	}
	sub := s.subscribe(p.id)
	ping := s.notes.ping
	s.mu.Unlock()
	defer s.unsubscribe(p.id, sub)

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	s.pump(r.Context(), sub, ping, func(b []byte) error {
		// A fresh slice: appending to the shared ping line would race with other streams.
		line := append(append(make([]byte, 0, len(b)+1), b...), '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
}

// subscribe adds a listener of the project's notifications ("" hears only pings); the caller
// holds s.mu.
func (s *Server) subscribe(projectID string) *subscriber {
	sub := &subscriber{lines: make(chan []byte, 1024), drop: make(chan struct{})}
	if s.notes.subs == nil {
		s.notes.subs = map[string]map[*subscriber]bool{}
	}
	if s.notes.subs[projectID] == nil {
		s.notes.subs[projectID] = map[*subscriber]bool{}
	}
	s.notes.subs[projectID][sub] = true
	return sub
}

func (s *Server) unsubscribe(projectID string, sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.notes.subs[projectID], sub)
}

// pump hands send every notification of sub, and a ping with compute statistics when nothing
// was sent for the ping interval, as GNS3 does, until the client leaves, the stream is dropped
// or send fails.
func (s *Server) pump(ctx context.Context, sub *subscriber, ping time.Duration, send func([]byte) error) {
	if ping <= 0 {
		ping = DefaultNotificationPing
	}
	pingLine, _ := json.Marshal(map[string]any{"action": "ping",
		"event": map[string]float64{"cpu_usage_percent": 13.2, "disk_usage_percent": 20.0, "memory_usage_percent": 3.7}})
	t := time.NewTimer(ping)
	defer t.Stop()
	for {
		var b []byte
		select {
		case <-ctx.Done():
			return
		case <-sub.drop:
			return
		case b = <-sub.lines:
		case <-t.C:
			b = pingLine
		}
		if send(b) != nil {
			return
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(ping)
	}
}
