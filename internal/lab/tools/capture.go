package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/capture"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// CaptureTool is the name of the packet-capture analysis tool.
const CaptureTool = "analyze_link_capture"

// Bounds of one capture.
const (
	minCaptureSeconds     = 1
	maxCaptureSeconds     = 120
	defaultCaptureSeconds = 10
	maxCapturePackets     = 10000
	// captureProgressEvery spaces the "packets so far" reports.
	captureProgressEvery = 250 * time.Millisecond
)

func newCaptureTool() Tool {
	return &captureTool{spec{
		name: CaptureTool,
		description: "Capture the packets crossing one link for a while and summarise them: protocol counts, conversations " +
			"(who talked to whom, packets and bytes), ARP requests nobody answered, ICMP unreachables and pings without reply, " +
			"TCP resets, retransmissions and handshakes that never completed, and the first and last packets decoded one per line. " +
			"Name the link by link_id, or by the two nodes it joins (node_a and node_b, with port_a/port_b when several links " +
			"join them). Capture for duration_seconds (1-120, default 10) or until packet_count packets arrived, whichever " +
			"comes first. Generate the traffic you want to see while it runs (for example ask for a ping in the same step). " +
			"An already running capture on the link is read and left running.",
		schema: `{"type":"object","properties":{` +
			`"link_id":{"type":"string","description":"Link ID."},` +
			`"node_a":{"type":"string","description":"One node of the link: name or node_id."},` +
			`"port_a":{"type":"string","description":"The link's port on node_a: name or short name (optional)."},` +
			`"node_b":{"type":"string","description":"The other node of the link: name or node_id."},` +
			`"port_b":{"type":"string","description":"The link's port on node_b (optional)."},` +
			`"duration_seconds":{"type":"integer","minimum":1,"maximum":120,"description":"How long to capture (default 10)."},` +
			`"packet_count":{"type":"integer","minimum":1,"maximum":10000,"description":"Stop after this many packets."},` +
			`"show_packets":{"type":"integer","minimum":1,"maximum":50,"description":"How many of the first and of the last packets to decode one per line (default 5)."}` +
			`},"additionalProperties":false}`,
		modes: bothModes,
	}}
}

type captureTool struct{ spec }

type captureArgs struct {
	projectArg
	linkRef
	DurationSeconds *int `json:"duration_seconds"`
	PacketCount     *int `json:"packet_count"`
	ShowPackets     *int `json:"show_packets"`
}

func (a captureArgs) validate() (time.Duration, int, int, error) {
	r := a.linkRef
	switch {
	case r.LinkID == "" && (r.NodeA == "" || r.NodeB == ""):
		return 0, 0, 0, errors.New("name the link: link_id, or node_a and node_b (the two nodes it joins)")
	case r.LinkID != "" && (r.NodeA != "" || r.NodeB != ""):
		return 0, 0, 0, errors.New("give either link_id or node_a/node_b, not both")
	case r.PortA != "" && r.NodeA == "", r.PortB != "" && r.NodeB == "":
		return 0, 0, 0, errors.New("port_a needs node_a and port_b needs node_b")
	}
	seconds, count, edge := defaultCaptureSeconds, 0, capture.DefaultEdge
	if a.PacketCount != nil {
		count = *a.PacketCount
		if count < 1 || count > maxCapturePackets {
			return 0, 0, 0, fmt.Errorf("packet_count must be 1 to %d, got %d", maxCapturePackets, count)
		}
		// A count alone may wait as long as a capture may last.
		seconds = maxCaptureSeconds
	}
	if a.DurationSeconds != nil {
		seconds = *a.DurationSeconds
		if seconds < minCaptureSeconds || seconds > maxCaptureSeconds {
			return 0, 0, 0, fmt.Errorf("duration_seconds must be %d to %d, got %d", minCaptureSeconds, maxCaptureSeconds, seconds)
		}
	}
	if a.ShowPackets != nil {
		edge = *a.ShowPackets
		if edge < 1 || edge > capture.MaxEdge {
			return 0, 0, 0, fmt.Errorf("show_packets must be 1 to %d, got %d", capture.MaxEdge, edge)
		}
	}
	return time.Duration(seconds) * time.Second, count, edge, nil
}

// CaptureCard is what the chat page draws for a capture (metadata.capture of the result).
type CaptureCard struct {
	LinkID          string                  `json:"link_id"`
	Link            string                  `json:"link"`
	Packets         int                     `json:"packets"`
	Bytes           int64                   `json:"bytes"`
	DurationSeconds float64                 `json:"duration_seconds"`
	Protocols       []capture.ProtocolCount `json:"protocols"`
	Conversations   []capture.Conversation  `json:"conversations"`
	StartedCapture  bool                    `json:"started_capture"`
}

func (ct *captureTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args captureArgs
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	duration, count, edge, err := args.validate()
	if err != nil {
		return failWith(err)
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	l, err := t.resolveLink(args.linkRef)
	if err != nil {
		return failWith(err)
	}
	id, name := l.LinkID, t.linkLine(l)

	// A capture that already runs belongs to someone else (the GNS3 GUI, a colleague) and is
	// left running; on a retried attempt it is this call's own, from the attempt that died.
	started := !l.Capturing || env.retried()
	if !l.Capturing {
		dlt := gns3.DLTEthernet
		if l.LinkType == "serial" {
			dlt = gns3.DLTCiscoHDLC
		}
		if _, err := env.GNS3.StartCapture(ctx, env.ProjectID, id, dlt); err != nil {
			return Collect([]Item{failed(id, name, "could not start a capture: "+describeGNS3Error(err))})
		}
	}
	env.progress(id, name, "capturing", packetsSoFar(0))

	sum, readErr := ct.read(ctx, env, id, name, duration, count, edge)

	stopNote := ""
	if started {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := env.GNS3.StopCapture(sctx, env.ProjectID, id); err != nil {
			stopNote = "\nThe capture could not be stopped (" + describeGNS3Error(err) + "); stop it in GNS3."
		}
		cancel()
	}
	if ctx.Err() != nil {
		return Collect([]Item{failed(id, name, "the capture was interrupted: "+ctx.Err().Error()+stopNote)})
	}
	if readErr != nil {
		return Collect([]Item{failed(id, name, readErr.Error()+stopNote)})
	}
	how := "an already running capture was read and left running"
	if started {
		how = "the capture was started for this and stopped again"
	}
	text := fmt.Sprintf("Capture on %s (%s).\n%s%s", name, how, sum.Text(), stopNote)
	res := Collect([]Item{ok(id, name, text)})
	res.Metadata["capture"] = CaptureCard{LinkID: id, Link: name, Packets: sum.Packets, Bytes: sum.Bytes,
		DurationSeconds: sum.DurationSeconds, Protocols: sum.Protocols, Conversations: sum.Conversations, StartedCapture: started}
	return res
}

// read follows the capture stream until the time is up, count packets arrived, or the stream
// ends. Running out of time is the normal end of a timed capture, not an error.
func (ct *captureTool) read(ctx context.Context, env Env, id, name string, duration time.Duration, count, edge int) (capture.Summary, error) {
	rctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	body, err := openPcapStream(rctx, env, id)
	if err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			return capture.Empty(), nil
		}
		return capture.Summary{}, fmt.Errorf("could not read the capture: %s", describeGNS3Error(err))
	}
	defer body.Close()
	var last time.Time
	sum, err := capture.Read(body, edge, count, func(n int) {
		// The first packet is reported at once, so a user sees traffic arrive; then a few times a second.
		if n == 1 || time.Since(last) >= captureProgressEvery {
			last = time.Now()
			env.progress(id, name, "capturing", packetsSoFar(n))
		}
	})
	timeUp := rctx.Err() != nil && ctx.Err() == nil
	switch {
	case err == nil, errors.Is(err, capture.ErrLimit), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	case timeUp && errors.Is(err, capture.ErrNotPcap):
		// No header arrived in time: nothing crossed the link.
		sum = capture.Empty()
	case timeUp:
	default:
		return sum, fmt.Errorf("could not decode the capture after %d packets: %v", sum.Packets, err)
	}
	return sum, nil
}

func packetsSoFar(n int) string {
	if n == 1 {
		return "1 packet so far"
	}
	return fmt.Sprintf("%d packets so far", n)
}
