package app

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// How often serve checks for memory to give back, and above how much heap it does: a 300-turn
// burst took serve's heap well past it, an idle serve stays under it.
const (
	idleMemoryEvery     = 20 * time.Second
	idleMemoryThreshold = 64 << 20
)

// heapHeldMetrics are the heap's spans in use or kept for reuse: what the process holds of the
// heap beyond what it has given back to the system.
var heapHeldMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
}

// heapHeld reads how many bytes of heap the process holds (without stopping the world).
func heapHeld() uint64 {
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

// returnIdleMemory gives the system back what a burst of turns left behind. The Go runtime does
// it only gradually: an idle process collects garbage every two minutes, and its scavenger
// keeps what the last heap goal allowed, so after a class's 300 simultaneous chats serve held
// its peak for minutes. Every interval, when the heap held exceeds threshold, it collects and
// returns the free pages at once (debug.FreeOSMemory): one extra collection at most per
// interval, which under load is one among many and when idle costs little. It also drops the
// binary's pages the burst mapped (dropIdleCodePages).
func returnIdleMemory(ctx context.Context, every time.Duration, threshold uint64) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if heapHeld() > threshold {
				debug.FreeOSMemory()
				dropIdleCodePages()
			}
		}
	}
}

// DefaultMemoryLimit is the soft limit of the Go runtime's memory (heap, stacks, runtime
// structures; not the binary's code) that serve, api and worker set unless told otherwise
// (--memory-limit, or GOMEMLIMIT in the environment). It is a soft limit: the collector works
// harder as the process nears it instead of letting its heap double, and the process never
// fails for reaching it. An idle serve uses about 35 MB of it, a burst of 100 turns about 80 and
// one of 300 about 120-135: the default stays above what a class's burst needs, so it bounds a
// runaway without making a burst's collector work harder (128MiB did, in 300-turn bursts: first
// token p99 3.2-3.3 s against 2.6-3.0 s with no limit, in the same minutes).
const DefaultMemoryLimit = 256 << 20

// applyMemoryLimit sets the Go runtime's soft memory limit (0 or less: none) and returns the
// one in force.
func applyMemoryLimit(limit int64) int64 {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return debug.SetMemoryLimit(-1)
}
