package app

import (
	"context"
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
// interval, which under load is one among many and when idle costs little.
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
			}
		}
	}
}
