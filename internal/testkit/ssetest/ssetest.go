// Package ssetest reads Server-Sent Events streams in tests, as the SSE specification frames
// them: a test asserts on the frames a client receives, and a stream that goes quiet fails the
// test instead of hanging it. It imports nothing of this module, so any package's tests can use
// it.
package ssetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Frame is the fields of one frame: the lines between two blank lines.
type Frame struct {
	// ID is the frame's last id field, "" without one.
	ID    string
	Event string
	// Data is the frame's data lines joined with "\n".
	Data string
	// Other names the frame's other fields (retry, or ones the specification does not know),
	// which a client ignores and a conformance check may refuse.
	Other []string
}

// Decode parses the frame's data as JSON into v.
func (f Frame) Decode(v any) error {
	if err := json.Unmarshal([]byte(f.Data), v); err != nil {
		return fmt.Errorf("%s frame's data is not JSON (%w): %q", f.Event, err, f.Data)
	}
	return nil
}

// JSON is the frame's data as a JSON object, nil for a frame without data; data that is not
// a JSON object fails the test.
func (f Frame) JSON(t testing.TB) map[string]any {
	t.Helper()
	if f.Data == "" {
		return nil
	}
	var m map[string]any
	if err := f.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// maxLine bounds one line, so a stream without line ends fails instead of filling the memory.
const maxLine = 16 << 20

// Reader parses frames from a stream, blocking while the stream is silent.
type Reader struct {
	br      *bufio.Reader
	started bool // the byte order mark, if any, is behind
	afterCR bool // the last line ended with "\r": a "\n" next belongs to it
}

// NewReader reads frames from r.
func NewReader(r io.Reader) *Reader { return &Reader{br: bufio.NewReader(r)} }

// Next returns the next frame that has an id, event, data or other field; a block of comments
// (a heartbeat some servers send) is skipped. At the end of the stream it returns io.EOF, or,
// when the stream ended inside a frame, the fields of its whole lines and io.ErrUnexpectedEOF.
func (r *Reader) Next() (Frame, error) {
	var f Frame
	var data []string
	seen := false
	for {
		line, err := r.line()
		if err != nil {
			if err == io.EOF && (seen || len(line) > 0) {
				err = io.ErrUnexpectedEOF
			}
			f.Data = strings.Join(data, "\n")
			return f, err
		}
		if len(line) == 0 {
			if seen {
				f.Data = strings.Join(data, "\n")
				return f, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		seen = true
		switch string(name) {
		case "id":
			f.ID = string(value)
		case "event":
			f.Event = string(value)
		case "data":
			data = append(data, string(value))
		default:
			f.Other = append(f.Other, string(name))
		}
	}
}

// line reads one line without its end, which is "\r\n", "\n" or "\r". A line cut off by the
// end of the stream comes back with io.EOF.
func (r *Reader) line() ([]byte, error) {
	if !r.started {
		r.started = true
		if bom, err := r.br.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" {
			_, _ = r.br.Discard(3)
		}
	}
	var line []byte
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return line, err
		}
		if r.afterCR {
			r.afterCR = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return line, nil
		case '\r':
			r.afterCR = true
			return line, nil
		}
		if len(line) == maxLine {
			return line, fmt.Errorf("an SSE line longer than %d bytes", maxLine)
		}
		line = append(line, c)
	}
}

// DefaultTimeout is how long a Stream waits for a frame unless told otherwise.
const DefaultTimeout = 30 * time.Second

// Errors of a Stream's reads besides the Reader's.
var (
	ErrTimeout = errors.New("no SSE frame in time")
	ErrClosed  = errors.New("SSE stream closed")
)

// Stream reads a live stream's frames with a deadline: a read that waits longer than Timeout
// for its frame gives up with ErrTimeout. From the first read on, a goroutine reads at most one
// frame ahead; it ends when the stream does, or when the Stream is closed. A Stream is read by
// one goroutine; any goroutine may close it.
type Stream struct {
	// Timeout bounds each wait of Next, Until and All.
	Timeout time.Duration

	r      *Reader
	frames chan result // nil until the first read
	stop   chan struct{}
	once   sync.Once
	err    error // the stream's end, returned from then on
}

type result struct {
	f   Frame
	err error
}

// NewStream reads frames from r; nothing is read before the first call for a frame. The caller
// closes the Stream when done with it, or closes r, which ends a read under way.
func NewStream(r io.Reader) *Stream {
	return &Stream{Timeout: DefaultTimeout, r: NewReader(r), stop: make(chan struct{})}
}

// Open reads resp's body as a Stream, both closed when the test ends.
func Open(t testing.TB, resp *http.Response) *Stream {
	s := NewStream(resp.Body)
	t.Cleanup(func() {
		s.Close()
		resp.Body.Close()
	})
	return s
}

func (s *Stream) pump() {
	for {
		f, err := s.r.Next()
		select {
		case s.frames <- result{f, err}:
		case <-s.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Close stops reading ahead, and a wait for a frame ends with ErrClosed. It does not close the
// stream's reader, whose blocked read the reader's owner ends by closing it.
func (s *Stream) Close() { s.once.Do(func() { close(s.stop) }) }

// Next returns the next frame, waiting at most Timeout; its errors are the Reader's, ErrTimeout
// and ErrClosed.
func (s *Stream) Next() (Frame, error) { return s.NextBefore(time.Now().Add(s.Timeout)) }

// NextBefore returns the next frame, or ErrTimeout when none arrived before the deadline.
func (s *Stream) NextBefore(deadline time.Time) (Frame, error) {
	if s.err != nil {
		return Frame{}, s.err
	}
	if s.frames == nil {
		s.frames = make(chan result)
		go s.pump()
	}
	select { // a frame that is here is taken even when the deadline has passed
	case r := <-s.frames:
		s.err = r.err
		return r.f, r.err
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case r := <-s.frames:
		s.err = r.err
		return r.f, r.err
	case <-timer.C:
		return Frame{}, ErrTimeout
	case <-s.stop:
		return Frame{}, ErrClosed
	}
}

// Until reads frames up to and including the first that stop accepts. The test fails when the
// stream ends first, or when Timeout passes before.
func (s *Stream) Until(t testing.TB, stop func(Frame) bool) []Frame {
	t.Helper()
	deadline := time.Now().Add(s.Timeout)
	var out []Frame
	for {
		f, err := s.NextBefore(deadline)
		if err != nil {
			t.Fatalf("SSE stream: the awaited frame did not come (after %v): %v", events(out), err)
		}
		out = append(out, f)
		if stop(f) {
			return out
		}
	}
}

// All reads the frames up to the end of the stream. The test fails when the stream breaks off,
// ends inside a frame, or does not end within Timeout.
func (s *Stream) All(t testing.TB) []Frame {
	t.Helper()
	deadline := time.Now().Add(s.Timeout)
	var out []Frame
	for {
		f, err := s.NextBefore(deadline)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("SSE stream: did not end cleanly (after %v): %v", events(out), err)
		}
		out = append(out, f)
	}
}

// events lists the frames' event types, for a failure's message.
func events(frames []Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.Event
	}
	return out
}
