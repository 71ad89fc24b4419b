package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func captureLab(t *testing.T) (*lab, fakegns3.Link) {
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", X: -200})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", X: 200})
	link := l.fake.AddLink(l.pid, a.ID, 0, 0, b.ID, 0, 0)
	l.fake.SetCaptureFeed("", fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 40, Delay: 4 * time.Millisecond})
	return l, link
}

func captureCard(t *testing.T, r Result) CaptureCard {
	t.Helper()
	b, err := json.Marshal(r.Metadata["capture"])
	if err != nil {
		t.Fatal(err)
	}
	var c CaptureCard
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCaptureByEndsStartsReadsAndStops(t *testing.T) {
	l, link := captureLab(t)
	r := l.runMode(t, TeachingAssistant, CaptureTool, map[string]any{"node_a": "PC1", "node_b": "pc2", "packet_count": 41, "show_packets": 2})
	mustSucceed(t, r)
	if r.Data[0].ID != link.ID || r.Data[0].Name != "PC1 Ethernet0 <-> PC2 Ethernet0" {
		t.Errorf("item: %+v", r.Data[0])
	}
	text := r.Data[0].Result
	for _, want := range []string{"the capture was started for this and stopped again", "41 packets", "who-has 10.5.0.9", "First 2 packet(s)", "Last 2 packet(s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	card := captureCard(t, r)
	total := 0
	for _, p := range card.Protocols {
		total += p.Packets
	}
	if card.Packets != 41 || total != 41 || len(card.Conversations) != 5 || !card.StartedCapture || card.LinkID != link.ID {
		t.Errorf("card: %+v", card)
	}
	if l.fake.Capturing(link.ID) || l.fake.Count(fakegns3.OpStartCapture) != 1 || l.fake.Count(fakegns3.OpStopCapture) != 1 {
		t.Errorf("the capture it started must be stopped: capturing %v, counts %v", l.fake.Capturing(link.ID), l.fake.Counts())
	}
	// Packets-so-far reports stream while it captures (the first one before any packet).
	var msgs []string
	l.mu.Lock()
	for _, p := range l.progress {
		if p.ItemID == link.ID && p.Status == "capturing" {
			msgs = append(msgs, p.Message)
		}
	}
	l.mu.Unlock()
	if len(msgs) < 3 || msgs[0] != "0 packets so far" || msgs[1] != "1 packet so far" || !strings.HasSuffix(msgs[2], "packets so far") {
		t.Errorf("progress: %q", msgs)
	}
}

func TestCaptureReusesARunningCaptureForADuration(t *testing.T) {
	l, link := captureLab(t)
	l.fake.StartCaptureOn(link.ID)
	start := time.Now()
	r := l.run(t, CaptureTool, map[string]any{"link_id": link.ID, "duration_seconds": 1})
	mustSucceed(t, r)
	if took := time.Since(start); took < time.Second {
		t.Errorf("a 1 s capture returned after %v", took)
	}
	if !strings.Contains(r.Data[0].Result, "an already running capture was read and left running") || captureCard(t, r).Packets != 41 {
		t.Errorf("result: %s", r.Data[0].Result)
	}
	if !l.fake.Capturing(link.ID) || l.fake.Count(fakegns3.OpStartCapture) != 0 || l.fake.Count(fakegns3.OpStopCapture) != 0 {
		t.Errorf("someone else's capture must be left alone: counts %v", l.fake.Counts())
	}
}

func TestCaptureOnAQuietLink(t *testing.T) {
	l, link := captureLab(t)
	// A header and no packet: the link is silent for the whole capture.
	l.fake.SetCaptureFeed(link.ID, fakegns3.CaptureFeed{Data: fakegns3.SampleCapture()[:24]})
	r := l.run(t, CaptureTool, map[string]any{"node_a": "PC1", "port_a": "e0", "node_b": "PC2", "duration_seconds": 1})
	mustSucceed(t, r)
	if c := captureCard(t, r); c.Packets != 0 || !strings.Contains(r.Data[0].Result, "0 packets") {
		t.Errorf("quiet link: %+v %s", c, r.Data[0].Result)
	}
	if l.fake.Capturing(link.ID) {
		t.Error("capture left running")
	}
}

func TestCaptureRefusesBadArgumentsWithoutTouchingGNS3(t *testing.T) {
	l, link := captureLab(t)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "name the link"},
		{map[string]any{"node_a": "PC1"}, "name the link"},
		{map[string]any{"link_id": link.ID, "node_a": "PC1"}, "either link_id or node_a/node_b"},
		{map[string]any{"link_id": link.ID, "duration_seconds": 0}, "duration_seconds must be 1 to 120"},
		{map[string]any{"link_id": link.ID, "duration_seconds": 121}, "duration_seconds must be 1 to 120"},
		{map[string]any{"link_id": link.ID, "packet_count": 0}, "packet_count must be 1 to 10000"},
		{map[string]any{"link_id": link.ID, "show_packets": 51}, "show_packets must be 1 to 50"},
		{map[string]any{"link_id": link.ID, "duration_seconds": "ten"}, `"duration_seconds" must be an integer`},
		{map[string]any{"link_id": link.ID, "filter": "icmp"}, `unknown field "filter"`},
		{map[string]any{"node_a": "PC1", "node_b": "PC9"}, `no node "PC9"`},
	} {
		mustFailWhole(t, l.run(t, CaptureTool, tc.args), tc.want)
	}
	if n := l.fake.Count(fakegns3.OpStartCapture) + l.fake.Count(fakegns3.OpStreamCapture); n != 0 {
		t.Errorf("refused calls reached the capture routes %d times", n)
	}
}

func TestCaptureStartRefusedByGNS3(t *testing.T) {
	l, link := captureLab(t)
	l.fake.Inject(fakegns3.Failure{Op: fakegns3.OpStartCapture, ID: link.ID, Status: http.StatusConflict, Message: "uBridge is not available"})
	r := l.run(t, CaptureTool, map[string]any{"link_id": link.ID, "duration_seconds": 1})
	if r.Success || r.Failed != 1 || !strings.Contains(r.Data[0].Error, "could not start a capture") || !strings.Contains(r.Data[0].Error, "uBridge is not available") {
		t.Fatalf("result: %+v", r)
	}
	if l.fake.Count(fakegns3.OpStreamCapture) != 0 {
		t.Error("read a capture that never started")
	}
}

func TestCaptureInterruptedStillStopsWhatItStarted(t *testing.T) {
	l, link := captureLab(t)
	l.fake.SetCaptureFeed(link.ID, fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 10, Delay: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	// The turn is aborted once the first packet was reported.
	env := l.env
	env.Progress = func(p Progress) {
		if p.Message == "1 packet so far" {
			cancel()
		}
	}
	r := l.reg.Execute(ctx, env, TeachingAssistant, CaptureTool, `{"link_id": "`+link.ID+`", "duration_seconds": 60}`)
	if r.Success || !strings.Contains(r.Data[0].Error, "interrupted") {
		t.Fatalf("result: %s", r.JSON())
	}
	if l.fake.Capturing(link.ID) || l.fake.Count(fakegns3.OpStopCapture) != 1 {
		t.Errorf("an interrupted capture must still be stopped: %v", l.fake.Counts())
	}
}

func TestARetriedCaptureStopsTheOneItsFirstAttemptLeft(t *testing.T) {
	l, link := captureLab(t)
	l.fake.StartCaptureOn(link.ID) // left running by the attempt whose worker died
	env := l.env
	env.Attempt = 2
	r := l.reg.Execute(context.Background(), env, TeachingAssistant, CaptureTool, `{"link_id": "`+link.ID+`", "packet_count": 5}`)
	mustSucceed(t, r)
	if captureCard(t, r).Packets != 5 || !captureCard(t, r).StartedCapture {
		t.Errorf("card: %+v", captureCard(t, r))
	}
	if l.fake.Capturing(link.ID) || l.fake.Count(fakegns3.OpStartCapture) != 0 {
		t.Errorf("retry must reuse and then stop its own capture: %v", l.fake.Counts())
	}
}

// Right after capture/start GNS3 may answer the stream with an empty body (uBridge has not yet
// written the pcap header). Read right after start, twenty times in a row, every capture gets
// its packets: the empty answer is reopened, never decoded.
func TestCaptureRightAfterStartTwentyTimesInARow(t *testing.T) {
	l, link := captureLab(t)
	l.fake.SetCaptureFeed(link.ID, fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 400, Delay: time.Millisecond, EmptyFirst: 2})
	for i := range 20 {
		r := l.run(t, CaptureTool, map[string]any{"link_id": link.ID, "packet_count": 41, "duration_seconds": 10})
		if !r.Success || captureCard(t, r).Packets != 41 {
			t.Fatalf("capture %d: %s", i+1, r.JSON())
		}
	}
	if got := l.fake.Count(fakegns3.OpStreamCapture); got != 20*3 {
		t.Fatalf("stream requests: %d, want 3 per capture (two empty answers, then the stream)", got)
	}
	if l.fake.Capturing(link.ID) {
		t.Error("capture left running")
	}
}

// A capture whose header never comes within its time saw nothing: an empty summary, not a
// decoding error.
func TestCaptureWithoutHeaderIsEmpty(t *testing.T) {
	l, link := captureLab(t)
	l.fake.SetCaptureFeed(link.ID, fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), EmptyFirst: 1 << 30})
	r := l.run(t, CaptureTool, map[string]any{"link_id": link.ID, "duration_seconds": 1})
	mustSucceed(t, r)
	if c := captureCard(t, r); c.Packets != 0 || !strings.Contains(r.Data[0].Result, "0 packets") {
		t.Errorf("no header: %+v %s", c, r.Data[0].Result)
	}
	if n := l.fake.Count(fakegns3.OpStreamCapture); n < 2 {
		t.Errorf("the stream was opened %d time(s) in a second; it must be tried again", n)
	}
}
