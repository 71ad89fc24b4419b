package devices

import (
	"context"
	"fmt"
	"sync"
)

// DefaultMaxOpenConsoles bounds a process's open consoles when the operator sets nothing: a
// 200-router class fits in one round with room for a second job, and each open console costs
// one socket (a file descriptor) and the memory measured by BenchmarkOpenConsolesVPCS.
const DefaultMaxOpenConsoles = 512

// ConsoleLimit bounds how many consoles one process holds open at once, whatever the number of
// tool calls and jobs asking: a job may fan out to every device it names, and what it cannot
// open yet waits for a console another device closes. Safe for concurrent use; a nil
// *ConsoleLimit bounds nothing.
type ConsoleLimit struct {
	slots chan struct{}
}

// NewConsoleLimit returns a limit of n open consoles; n <= 0 means no limit (nil).
func NewConsoleLimit(n int) *ConsoleLimit {
	if n <= 0 {
		return nil
	}
	return &ConsoleLimit{slots: make(chan struct{}, n)}
}

// Acquire waits for a free console and returns the function that gives it back (safe to call
// more than once). Only ctx ends the wait: a slot frees as soon as any device's work ends, and
// a caller that gave up would fail a device that was merely queued.
func (l *ConsoleLimit) Acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
	default:
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for one of the %d consoles this process may open at once: %w", cap(l.slots), ctx.Err())
		}
	}
	var once sync.Once
	return func() { once.Do(func() { <-l.slots }) }, nil
}

// Open reports how many consoles are open under the limit right now.
func (l *ConsoleLimit) Open() int {
	if l == nil {
		return 0
	}
	return len(l.slots)
}

// Max is the limit (0: none).
func (l *ConsoleLimit) Max() int {
	if l == nil {
		return 0
	}
	return cap(l.slots)
}
