package fuzzcheck

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message and ends the goroutine, as the real
// one does, without failing the test that checks it.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// bounded runs Bounded on a goroutine of its own, as a test's goroutine would, and returns what
// it failed with ("" when it passed).
func bounded(t *testing.T, limit time.Duration, maxBytes uint64, fn func()) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Bounded(r, limit, maxBytes, fn)
	}()
	<-done
	return r.msg
}

var sink []byte

func TestBounded(t *testing.T) {
	if msg := bounded(t, time.Minute, 1<<20, func() { sink = make([]byte, 1000) }); msg != "" {
		t.Errorf("a small, quick input failed: %s", msg)
	}
	if msg := bounded(t, time.Minute, 1<<20, func() { sink = make([]byte, 8<<20) }); !strings.Contains(msg, "more than the bound of 1048576") {
		t.Errorf("8 MB against a bound of 1 MB: %q", msg)
	}
	release := make(chan struct{})
	defer close(release)
	msg := bounded(t, 50*time.Millisecond, 1<<20, func() { <-release })
	if !strings.Contains(msg, "not done after 50ms") || !strings.Contains(msg, "fuzzcheck.TestBounded") {
		t.Errorf("a hang is reported with the stack where it hangs: %q", msg)
	}
}

func TestBoundedRaisesAPanicWithItsStack(t *testing.T) {
	defer func() {
		p, _ := recover().(string)
		if !strings.HasPrefix(p, "panic: runtime error: index out of range") || !strings.Contains(p, "fuzzcheck.TestBoundedRaisesAPanicWithItsStack") {
			t.Errorf("panic raised again as %q", p)
		}
	}()
	Bounded(t, time.Minute, 1<<20, func() {
		var s []int
		_ = s[len(sink)]
	})
}
