package ssetest_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

// frames reads a whole stream with a Reader and returns its frames and the error that ended it.
func frames(t *testing.T, stream string) ([]ssetest.Frame, error) {
	t.Helper()
	r := ssetest.NewReader(strings.NewReader(stream))
	var out []ssetest.Frame
	for {
		f, err := r.Next()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				out = append(out, f)
			}
			return out, err
		}
		out = append(out, f)
	}
}

func TestReaderFollowsTheSpecification(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         []ssetest.Frame
	}{
		{"one frame", "id: 1-0\nevent: content\ndata: {\"a\":1}\n\n",
			[]ssetest.Frame{{ID: "1-0", Event: "content", Data: `{"a":1}`}}},
		{"data lines are joined with newlines", "data: one\ndata:two\ndata\ndata:  three\n\n",
			[]ssetest.Frame{{Data: "one\ntwo\n\n three"}}},
		{"comments are not frames", ": ping\n\n:\n\nevent: a\n: inside a frame\ndata: x\n\n",
			[]ssetest.Frame{{Event: "a", Data: "x"}}},
		{"blank lines between frames", "\n\n\ndata: a\n\n\n\ndata: b\n\n",
			[]ssetest.Frame{{Data: "a"}, {Data: "b"}}},
		{"CRLF line ends", "id: 7\r\nevent: e\r\ndata: x\r\n\r\ndata: y\r\n\r\n",
			[]ssetest.Frame{{ID: "7", Event: "e", Data: "x"}, {Data: "y"}}},
		{"CR line ends", "event: e\rdata: x\r\rdata: y\r\r",
			[]ssetest.Frame{{Event: "e", Data: "x"}, {Data: "y"}}},
		{"an id without data", "id: 3\n\nevent: heartbeat\n\n",
			[]ssetest.Frame{{ID: "3"}, {Event: "heartbeat"}}},
		{"the last id counts", "id: 1\nid: 2\ndata: x\n\n", []ssetest.Frame{{ID: "2", Data: "x"}}},
		{"other fields are named", "retry: 100\nfoo: bar\nevent: e\n\n",
			[]ssetest.Frame{{Event: "e", Other: []string{"retry", "foo"}}}},
		{"a byte order mark is skipped", "\xef\xbb\xbfdata: x\n\n", []ssetest.Frame{{Data: "x"}}},
		{"an empty stream", "", nil},
		{"only comments", ": a\n: b\n\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := frames(t, tc.stream)
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReaderJoinsALineEndSplitAcrossReads(t *testing.T) {
	r := ssetest.NewReader(iotest.OneByteReader(strings.NewReader("data: x\r\n\r\ndata: y\r\n\r\n")))
	for _, want := range []string{"x", "y"} {
		f, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, ssetest.Frame{Data: want}, f)
	}
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
}

func TestReaderReportsAFrameCutOffByTheEnd(t *testing.T) {
	got, err := frames(t, "data: a\n\nevent: b\ndata: c\n")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, []ssetest.Frame{{Data: "a"}, {Event: "b", Data: "c"}}, got)
	// A line without its end is no field: it may have been cut anywhere.
	got, err = frames(t, "data: a\n\nevent: b\ndata: c")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, []ssetest.Frame{{Data: "a"}, {Event: "b"}}, got)
	got, err = frames(t, "data: a\n\n: bye")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, []ssetest.Frame{{Data: "a"}, {}}, got)
}

func TestFrameDecodesItsData(t *testing.T) {
	var v struct{ Status string }
	require.NoError(t, ssetest.Frame{Data: `{"status":"completed"}`}.Decode(&v))
	assert.Equal(t, "completed", v.Status)
	assert.Error(t, ssetest.Frame{Event: "done", Data: "not json"}.Decode(&v))
	assert.Equal(t, map[string]any{"a": 1.0}, ssetest.Frame{Data: `{"a":1}`}.JSON(t))
	assert.Nil(t, ssetest.Frame{Event: "heartbeat"}.JSON(t))
}

// live serves frames as the test sends them, and holds the stream open until the test ends.
func live(t *testing.T) (*http.Response, chan<- string) {
	t.Helper()
	send := make(chan string)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		for {
			select {
			case s, ok := <-send:
				if !ok {
					return
				}
				io.WriteString(w, s)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	return resp, send
}

func TestStreamFramesArriveAsSent(t *testing.T) {
	resp, send := live(t)
	s := ssetest.Open(t, resp)
	send <- "event: a\ndata: 1\n\n"
	f, err := s.Next()
	require.NoError(t, err)
	assert.Equal(t, ssetest.Frame{Event: "a", Data: "1"}, f)

	go func() {
		send <- "event: heartbeat\n\n: comment\n\nevent: b\n"
		send <- "data: 2\n\nevent: done\ndata: {}\n\n"
		close(send)
	}()
	got := s.Until(t, func(f ssetest.Frame) bool { return f.Event == "b" })
	assert.Equal(t, []ssetest.Frame{{Event: "heartbeat"}, {Event: "b", Data: "2"}}, got)
	assert.Equal(t, []ssetest.Frame{{Event: "done", Data: "{}"}}, s.All(t))
	_, err = s.Next()
	assert.ErrorIs(t, err, io.EOF, "the end stays the end")
}

func TestStreamGivesUpOnASilentStream(t *testing.T) {
	resp, _ := live(t)
	s := ssetest.Open(t, resp)
	s.Timeout = 50 * time.Millisecond
	start := time.Now()
	_, err := s.Next()
	require.ErrorIs(t, err, ssetest.ErrTimeout)
	assert.GreaterOrEqual(t, time.Since(start), s.Timeout)

	f, err := s.Next()
	require.ErrorIs(t, err, ssetest.ErrTimeout, "nothing came: %v", f)
}

// failing records a test's failure and ends its goroutine, as t.Fatal does.
type failing struct {
	testing.TB
	failed chan string
}

func (f failing) Helper() {}

func (f failing) Fatalf(format string, args ...any) {
	f.failed <- fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestUntilHasOneDeadlineHowEverManyFramesCome(t *testing.T) {
	resp, send := live(t)
	s := ssetest.Open(t, resp)
	s.Timeout = 200 * time.Millisecond
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				select {
				case send <- "event: heartbeat\n\n":
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	tb := failing{TB: t, failed: make(chan string, 1)}
	start := time.Now()
	go s.Until(tb, func(f ssetest.Frame) bool { return f.Event == "done" })
	msg := <-tb.failed
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Contains(t, msg, "heartbeat")
	assert.Contains(t, msg, ssetest.ErrTimeout.Error())
}

func TestCloseEndsAWaitForAFrame(t *testing.T) {
	resp, _ := live(t)
	s := ssetest.Open(t, resp)
	s.Timeout = time.Minute
	go s.Close()
	_, err := s.Next()
	require.ErrorIs(t, err, ssetest.ErrClosed)
}
