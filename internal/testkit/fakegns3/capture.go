package fakegns3

import (
	_ "embed"
	"fmt"
	"net/http"
	"time"
)

// Capture routes. Starting answers 201 with the link, now capturing, as in
// link-capture-start-201.json; stopping answers 204; the stream serves the link's CaptureFeed
// like GNS3 serves a capture file it is still writing: the pcap header at once (or, with
// EmptyFirst, first an empty body, as before uBridge wrote the header), then the records in
// pieces, and it stays open until the capture stops or the client leaves.
const (
	OpStartCapture  Op = "POST /v3/projects/{project_id}/links/{link_id}/capture/start"
	OpStopCapture   Op = "POST /v3/projects/{project_id}/links/{link_id}/capture/stop"
	OpStreamCapture Op = "GET /v3/projects/{project_id}/links/{link_id}/capture/stream"
)

//go:embed testdata/v3.0.6/link-capture-stream-PC1_to_PC2.pcap
var samplePcap []byte

// SampleCapture returns the real capture of shared/gns3/samples (PC1 pinging PC2 over VPCS:
// 41 frames of ARP, ICMP, TCP, UDP and IPv6). Every link's stream serves it unless a test
// sets another feed.
func SampleCapture() []byte { return append([]byte(nil), samplePcap...) }

// CaptureFeed is what a link's capture stream serves.
type CaptureFeed struct {
	// Data is a pcap file: its 24-byte header, then records.
	Data []byte
	// Chunk is how many bytes go out in each write after the header (default 100), so records
	// arrive split across writes as they do from a real server.
	Chunk int
	// Delay is the pause between writes (default 5 ms).
	Delay time.Duration
	// EmptyFirst makes the first EmptyFirst stream requests after each start of the capture
	// answer 200 with an empty body, as GNS3 does while uBridge has not yet written the pcap
	// header.
	EmptyFirst int
}

type captureState struct {
	running  bool
	fileName string
	stopped  chan struct{} // closed when the running capture stops
	streams  int           // stream requests since the capture started
}

// SetCaptureFeed sets what the capture stream of linkID serves ("" = every link without its
// own feed).
func (s *Server) SetCaptureFeed(linkID string, f CaptureFeed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feeds == nil {
		s.feeds = map[string]CaptureFeed{}
	}
	s.feeds[linkID] = f
}

// StartCaptureOn marks a link as already capturing, as if someone had started it in the GNS3 GUI.
func (s *Server) StartCaptureOn(linkID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.mustLink(linkID)
	s.startCapture(p, l)
	s.emitLink(p, l, "link.updated")
}

// Capturing tells whether a capture runs on the link.
func (s *Server) Capturing(linkID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.captures[linkID]
	return c != nil && c.running
}

func (s *Server) captureRoutes(mux *http.ServeMux, add func(Op, bool, handler)) {
	add(OpStartCapture, true, s.startCaptureHandler)
	add(OpStopCapture, true, s.stopCaptureHandler)
	mux.HandleFunc(string(OpStreamCapture), s.streamCapture)
}

func (s *Server) startCapture(p *project, l *link) *captureState {
	if s.captures == nil {
		s.captures = map[string]*captureState{}
	}
	c := s.captures[l.id]
	if c != nil && c.running {
		return c
	}
	name := func(e LinkEnd) string {
		n := p.node(e.NodeID)
		if n == nil {
			return e.NodeID
		}
		return fmt.Sprintf("%s_%d-%d", n.name, e.Adapter, e.Port)
	}
	c = &captureState{running: true, stopped: make(chan struct{}),
		fileName: name(l.ends[0]) + "_to_" + name(l.ends[1]) + ".pcap"}
	s.captures[l.id] = c
	return c
}

func (s *Server) startCaptureHandler(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Capture")
	if e != nil {
		return reply{}, e
	}
	if _, e := bodyObject(body); e != nil {
		return reply{}, e
	}
	s.startCapture(p, l)
	s.emitLink(p, l, "link.updated")
	return reply{201, s.linkJSON(p, l, true)}, nil
}

func (s *Server) stopCaptureHandler(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Capture")
	if e != nil {
		return reply{}, e
	}
	if s.stopCapture(l) {
		s.emitLink(p, l, "link.updated")
	}
	return reply{status: http.StatusNoContent}, nil
}

// stopCapture ends the link's capture; false when none ran.
func (s *Server) stopCapture(l *link) bool {
	c := s.captures[l.id]
	if c == nil || !c.running {
		return false
	}
	c.running = false
	close(c.stopped)
	return true
}

// captureFields fills a link's capture fields from its state.
func (s *Server) captureFields(p *project, l *link, out *linkOut) {
	c := s.captures[l.id]
	if c == nil || !c.running {
		return
	}
	path := "/home/gns3/GNS3/projects/" + p.id + "/project-files/captures/" + c.fileName
	compute := "local"
	out.Capturing = true
	out.CaptureFileName, out.CaptureFilePath, out.CaptureComputeID = &c.fileName, &path, &compute
}

// streamCapture is not wrapped like the other routes: it must not hold the server's lock while
// it streams.
func (s *Server) streamCapture(w http.ResponseWriter, r *http.Request) {
	c, feed, empty, e := s.captureSource(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if empty {
		w.Header().Set("Content-Type", "application/vnd.tcpdump.pcap")
		w.WriteHeader(http.StatusOK)
		return
	}
	if feed.Chunk <= 0 {
		feed.Chunk = 100
	}
	if feed.Delay <= 0 {
		feed.Delay = 5 * time.Millisecond
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/vnd.tcpdump.pcap")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	data := feed.Data
	head := min(24, len(data))
	if !send(data[:head]) {
		return
	}
	wait := time.NewTicker(feed.Delay)
	defer wait.Stop()
	for rest := data[head:]; len(rest) > 0; {
		select {
		case <-r.Context().Done():
			return
		case <-c.stopped:
			return
		case <-wait.C:
		}
		n := min(feed.Chunk, len(rest))
		if !send(rest[:n]) {
			return
		}
		rest = rest[n:]
	}
	select {
	case <-r.Context().Done():
	case <-c.stopped:
	}
}

// captureSource checks a stream request under the lock, as every route is checked, and says what
// it serves: the running capture, its feed, and whether this request gets the empty body GNS3
// sends before the pcap header exists.
func (s *Server) captureSource(r *http.Request) (c *captureState, feed CaptureFeed, empty bool, e *httpErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[OpStreamCapture]++
	u, e := s.authUser(r)
	if e != nil {
		return nil, feed, false, e
	}
	_, l, e := s.linkFor(r, u, "Link.Capture")
	if e != nil {
		return nil, feed, false, e
	}
	if f := s.takeFailure(OpStreamCapture, r); f != nil {
		return nil, feed, false, &httpErr{f.Status, f.Message}
	}
	c = s.captures[l.id]
	if c == nil || !c.running {
		return nil, feed, false, errf(http.StatusConflict, "Link %s is not capturing", l.id)
	}
	var ok bool
	if feed, ok = s.feeds[l.id]; !ok {
		if feed, ok = s.feeds[""]; !ok {
			feed = CaptureFeed{Data: samplePcap}
		}
	}
	c.streams++
	return c, feed, c.streams <= feed.EmptyFirst, nil
}
