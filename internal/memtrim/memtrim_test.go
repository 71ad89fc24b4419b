package memtrim

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func heapReleased() uint64 { return readUint64("/memory/classes/heap/released:bytes") }

// Issue 25: what a burst left behind goes back to the system within one interval, not whenever
// the runtime's own collection and scavenger get to it. An idle process allocates nothing, so
// nothing starts a collection (here: collections are off), and its garbage stays resident.
func TestReturnIdleMemoryGivesBackWhatABurstLeft(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const burst = 64 << 20
	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, burst/64))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	before := heapReleased()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ReturnIdleMemory(ctx, 10*time.Millisecond, 1<<20) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(10 * time.Second)
	for heapReleased() < before+burst/2 {
		if time.Now().After(deadline) {
			t.Fatalf("released heap went from %d to %d bytes; want at least %d more", before, heapReleased(), burst/2)
		}
		runtime.Gosched()
	}
}

func numGC() uint64 { return readUint64("/gc/cycles/total:gc-cycles") }

// Issue 36: an idle process gives back what its last work left as soon as the work stops (a
// few turns left an idle serve holding twice the heap it used), once, and is not collected
// again while it stays idle. The heap here stays far below the threshold.
func TestTrimsOnceWhenTheWorkStops(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tr := newTrimmer(1 << 62)
	if tr.tick() {
		t.Fatal("trimmed before any work")
	}
	const work = 4 * busyAlloc
	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, work/64))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	if tr.tick() {
		t.Fatal("trimmed in the middle of the work")
	}
	before, gcs := heapReleased(), numGC()
	if !tr.tick() {
		t.Fatal("did not trim in the first quiet interval after the work")
	}
	if got := heapReleased(); got < before+work/2 {
		t.Fatalf("released heap went from %d to %d bytes; want at least %d more", before, got, work/2)
	}
	if numGC() == gcs {
		t.Fatal("trimmed without a collection")
	}
	gcs = numGC()
	for range 5 {
		if tr.tick() {
			t.Fatal("trimmed again while idle")
		}
	}
	if numGC() != gcs {
		t.Fatalf("%d collections while idle", numGC()-gcs)
	}
}

// A piece of work that allocates little (a few chats) still counts as work: the interval it
// was done in is busy, and the first quiet one after it trims.
func TestWorkThatAllocatesLittleIsTrimmedAfter(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tr := newTrimmer(1 << 62)
	worked.Store(false)
	if tr.tick() {
		t.Fatal("trimmed before any work")
	}
	Worked()
	if tr.tick() {
		t.Fatal("trimmed in the interval of the work")
	}
	gcs := numGC()
	if !tr.tick() {
		t.Fatal("did not trim in the first quiet interval after the work")
	}
	if numGC() == gcs {
		t.Fatal("trimmed without a collection")
	}
	if tr.tick() {
		t.Fatal("trimmed again while idle")
	}
}

// Work noted in an interval that also allocated much (a burst of turns) is that interval's:
// the first quiet interval after it trims.
func TestWorkInABusyIntervalDoesNotPutTheTrimOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tr := newTrimmer(1 << 62)
	worked.Store(false)
	garbage := make([][]byte, 0, 64)
	for range 64 {
		garbage = append(garbage, make([]byte, 4*busyAlloc/64))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	Worked()
	if tr.tick() {
		t.Fatal("trimmed in the middle of the work")
	}
	if !tr.tick() {
		t.Fatal("did not trim in the first quiet interval after the work")
	}
}
