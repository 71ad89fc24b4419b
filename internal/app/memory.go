package app

import (
	"math"
	"runtime/debug"
	"time"
)

// How often serve checks for memory to give back, and above how much heap it does: a 300-turn
// burst took serve's heap well past it, an idle serve stays under it.
const (
	idleMemoryEvery     = 20 * time.Second
	idleMemoryThreshold = 64 << 20
)

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
