package app

import (
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/memtrim"
)

func TestReturnIdleMemoryLeavesASmallHeapAlone(t *testing.T) {
	if held := memtrim.HeapHeld(); held == 0 || held > idleMemoryThreshold {
		t.Fatalf("a test process holds %d bytes of heap; the threshold (%d) must sit above an idle process's", held, idleMemoryThreshold)
	}
}
