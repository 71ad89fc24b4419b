package gns3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestCaptureStartStreamStop(t *testing.T) {
	fake, c, pid := setup(t)
	a := fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC1"})
	b := fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC2", X: 300})
	l := fake.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)
	ctx := context.Background()

	var apiErr *gns3.APIError
	if _, err := c.StreamCapture(ctx, pid, l.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
		t.Fatalf("stream before start: %v", err)
	}
	if _, err := c.StartCapture(ctx, pid, "00000000-0000-4000-8000-000000000000", gns3.DLTEthernet); !errors.Is(err, gns3.ErrNotFound) {
		t.Fatalf("unknown link: %v", err)
	}
	link, err := c.StartCapture(ctx, pid, l.ID, gns3.DLTEthernet)
	if err != nil || !link.Capturing || link.CaptureFileName == "" {
		t.Fatalf("start: %+v %v", link, err)
	}
	// The stream takes about 0.7 s, longer than this client's 300 ms per-request timeout: only
	// the answer's headers are bound by it, never the body.
	fake.SetCaptureFeed(l.ID, fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 100, Delay: 20 * time.Millisecond})
	short := gns3.NewServer(fake.URL, 300*time.Millisecond).WithToken(fakegns3.AdminToken)
	started := time.Now()
	body, err := short.StreamCapture(ctx, pid, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	want := fakegns3.SampleCapture()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(body, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("stream: %v", err)
	}
	if took := time.Since(started); took < 300*time.Millisecond {
		t.Fatalf("the feed was paced to outlast the timeout, yet it took %v", took)
	}
	// It ends when the capture stops.
	if err := c.StopCapture(ctx, pid, l.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after stop: %d %v", n, err)
	}
	if fake.Capturing(l.ID) {
		t.Fatal("still capturing")
	}
}
