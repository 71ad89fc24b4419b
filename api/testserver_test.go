package api

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// The api tests are internal (package api), so their one server builder lives here and not in
// internal/testkit, which package api's tests could not import without a cycle.

// newTestServer builds the server of a test from d; a test that brings no logger gets one that
// writes nowhere.
func newTestServer(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return New(d)
}

// startTestServer serves newTestServer(d) over HTTP until the test ends.
func startTestServer(t testing.TB, d Deps) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(newTestServer(d).Handler())
	t.Cleanup(hs.Close)
	return hs
}

// gns3At is the GNS3 server a test's fake listens at.
func gns3At(url string) *gns3.Server { return gns3.NewServer(url, 5*time.Second) }
