// Package memtrim gives back to the system what a Go process of the copilot holds without
// needing it: the code that starting it mapped and never runs again, and the heap a burst of
// turns left behind. serve and the copilot's own Temporal dev server both use it; on a GNS3 host
// what they keep is taken from the emulated routers (issue 36).
package memtrim

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// heapHeldMetrics are the heap's spans in use or kept for reuse: what the process holds of the
// heap beyond what it has given back to the system.
var heapHeldMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
}

// HeapHeld reads how many bytes of heap the process holds (without stopping the world).
func HeapHeld() uint64 {
	samples := make([]metrics.Sample, len(heapHeldMetrics))
	for i, name := range heapHeldMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var held uint64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			held += s.Value.Uint64()
		}
	}
	return held
}

// busyAlloc is what a process allocates in one interval when it works: an idle serve allocates
// about 1 MB in 20 s and an idle dev server 0.4 to 2.3 MB, a burst of turns hundreds.
const busyAlloc = 4 << 20

// worked is set by Worked and read by the next tick.
var worked atomic.Bool

// Worked tells the trimmer that the process did a piece of work (serve: a turn ended), however
// little it allocated: a few chats allocate less than busyAlloc in an interval, and an idle
// serve then kept, 45 s after it started, the 30 MB of heap and code pages its first turns left,
// for as long as it stayed idle.
func Worked() { worked.Store(true) }

// ReturnIdleMemory gives the system back what work left behind, until ctx ends. The Go runtime
// does it only gradually: an idle process collects garbage every two minutes, and its scavenger
// keeps what the last heap goal allowed, so after a class's 300 simultaneous chats serve held
// its peak for minutes, and after a few turns an idle serve kept a heap of twice what it uses.
// Every interval it trims (trimmer.tick) when the heap held exceeds threshold, or when the
// interval was quiet after one that was not: one extra collection at most per interval under
// load, and one when the work stops, none while the process stays idle.
func ReturnIdleMemory(ctx context.Context, every time.Duration, threshold uint64) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	t := newTrimmer(threshold)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.tick()
		}
	}
}

// trimmer decides, once an interval, whether to trim.
type trimmer struct {
	threshold uint64
	allocs    uint64 // bytes allocated since the process started, at the last tick
	busy      bool   // an interval since the last trim allocated busyAlloc or more
}

func newTrimmer(threshold uint64) *trimmer {
	return &trimmer{threshold: threshold, allocs: allocated()}
}

// tick trims when the heap held exceeds the threshold or the work has just stopped: it collects
// and returns the free pages at once (debug.FreeOSMemory) and drops the binary's pages the work
// mapped (DropIdleCodePages). It reports whether it did.
func (t *trimmer) tick() bool {
	now := allocated()
	// Read (and reset) the work flag whatever the allocations say: left set behind a busy
	// interval, it would make the next quiet one look busy and put the trim off an interval.
	didWork := worked.Swap(false)
	quiet := now-t.allocs < busyAlloc && !didWork
	t.allocs = now
	if !quiet {
		t.busy = true
	}
	if HeapHeld() <= t.threshold && !(quiet && t.busy) {
		return false
	}
	debug.FreeOSMemory()
	DropIdleCodePages()
	t.busy = false
	t.allocs = allocated()
	return true
}

// allocated reads the bytes allocated on the heap since the process started.
func allocated() uint64 { return readUint64("/gc/heap/allocs:bytes") }

// readUint64 reads one of the runtime's counters (runtime/metrics).
func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
