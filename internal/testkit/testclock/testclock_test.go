package testclock

import (
	"sync"
	"testing"
	"time"
)

func TestAdvance(t *testing.T) {
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	c := New(start)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.Advance(time.Second); _ = c.Now() }()
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(8 * time.Second)) {
		t.Fatalf("Now = %v, want start + 8s", got)
	}
}
