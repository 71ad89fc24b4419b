// Package fuzzcheck holds what every fuzz target checks besides "no panic": one input is handled
// within a deadline and without allocating more than a bound. `go test -fuzz` has no per-input
// timeout and reports an out-of-memory only when the machine runs out, so both are checked here.
package fuzzcheck

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// allocsMetric is the heap's cumulative allocation count in bytes: reading it does not stop the
// world, unlike runtime.ReadMemStats, so checking every input costs the fuzzer little.
const allocsMetric = "/gc/heap/allocs:bytes"

// allocated is how many bytes the heap has allocated since the process started.
func allocated() uint64 {
	s := []metrics.Sample{{Name: allocsMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Bounded runs fn on a goroutine of its own and fails t when fn has not returned within limit,
// or when the process allocated more than maxBytes while it ran. A hang fails with every
// goroutine's stack, so the loop is named; the goroutine is left behind, which is what a hung
// input costs a fuzz worker anyway. fn must not call t's Fatal methods (it is not on t's
// goroutine): it returns, and the caller checks what it produced.
func Bounded(t testing.TB, limit time.Duration, maxBytes uint64, fn func()) {
	t.Helper()
	before := allocated()
	done := make(chan string, 1)
	go func() {
		defer func() {
			// A panic is raised again on t's goroutine, with the stack where it happened, so that
			// the fuzzer records it as this input's crash and the test fails rather than the
			// whole binary.
			if p := recover(); p != nil {
				done <- fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
				return
			}
			done <- ""
		}()
		fn()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != "" {
			panic(p)
		}
	case <-timer.C:
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("not done after %v: every goroutine:\n%s", limit, buf)
	}
	if used := allocated() - before; used > maxBytes {
		t.Fatalf("allocated %d bytes for one input, more than the bound of %d", used, maxBytes)
	}
}
