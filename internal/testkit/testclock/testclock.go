// Package testclock is a clock that moves only when a test advances it, so expiry and TTL logic
// can be checked without waiting on the wall clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is safe for concurrent use; pass its Now method wherever code takes a func() time.Time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock standing at start.
func New(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
