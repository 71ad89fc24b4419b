package devices

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Locker gives one session at a time the right to write to a device
// console: interleaved commands from two turns would corrupt both. Lock
// waits a bounded time and then fails with an error matching ErrDeviceBusy.
// The ttl bounds how long a lock outlives a holder that died without
// unlocking; live holders keep it as long as they need.
type Locker interface {
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// ErrDeviceBusy is returned (wrapped in a *BusyError) when a device stays
// locked by another session for longer than the wait allows.
var ErrDeviceBusy = errors.New("device busy: another session is running commands on this device")

// BusyError says which device was busy and how long we waited for it.
type BusyError struct {
	Key    string
	Waited time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("device busy: another session is running commands on %s (waited %s); try again when it has finished",
		e.Key, e.Waited.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrDeviceBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrDeviceBusy }

// DefaultLockWait is how long Lock waits for a busy device by default.
const DefaultLockWait = 30 * time.Second

// waitBound returns the context for waiting and a function that turns a
// wait failure into the error to report: cancellation stays cancellation,
// running out of time is "device busy".
func waitBound(ctx context.Context, key string, maxWait time.Duration) (context.Context, context.CancelFunc, func() error) {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, maxWait)
	return wctx, cancel, func() error {
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		return &BusyError{Key: key, Waited: time.Since(start)}
	}
}

// MemoryLocker is a Locker for a single process.
type MemoryLocker struct {
	// MaxWait bounds how long Lock waits (DefaultLockWait when zero).
	MaxWait time.Duration

	mu    sync.Mutex
	slots map[string]*memSlot
}

type memSlot struct {
	ch   chan struct{}
	refs int
}

// NewMemoryLocker returns an in-process Locker that waits at most maxWait.
func NewMemoryLocker(maxWait time.Duration) *MemoryLocker {
	return &MemoryLocker{MaxWait: maxWait}
}

// Lock implements Locker. The ttl does not matter within one process: a
// holder that dies takes the whole process, and its locks, with it.
func (m *MemoryLocker) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	if key == "" {
		return nil, errors.New("lock key is empty")
	}
	m.mu.Lock()
	if m.slots == nil {
		m.slots = make(map[string]*memSlot)
	}
	slot := m.slots[key]
	if slot == nil {
		slot = &memSlot{ch: make(chan struct{}, 1)}
		m.slots[key] = slot
	}
	slot.refs++
	m.mu.Unlock()

	release := func() {
		m.mu.Lock()
		slot.refs--
		if slot.refs == 0 {
			delete(m.slots, key)
		}
		m.mu.Unlock()
	}
	wait := m.MaxWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	select {
	case slot.ch <- struct{}{}:
	default:
		wctx, cancel, busy := waitBound(ctx, key, wait)
		defer cancel()
		select {
		case slot.ch <- struct{}{}:
		case <-wctx.Done():
			release()
			return nil, busy()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-slot.ch
			release()
		})
	}, nil
}
