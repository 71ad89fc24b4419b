package devices

import (
	"context"
	"time"
)

// DefaultLockTTL is how long a device lock outlives a worker that died
// while holding it; live holders renew it.
const DefaultLockTTL = 30 * time.Second

// Use runs fn with exclusive use of a device's console: it takes the
// device lock (bounded wait, ErrDeviceBusy after it), connects, calls fn,
// then closes the session and releases the lock. A nil locker skips locking. With
// opts.Consoles set, the console is opened only when the process has one to spare; the device
// lock is taken first, so a caller holding a console slot never waits for a device lock.
func Use(ctx context.Context, l Locker, t Target, gns3Host string, opts Options, fn func(*Session) error) error {
	if l != nil {
		unlock, err := l.Lock(ctx, t.LockKey(), DefaultLockTTL)
		if err != nil {
			return err
		}
		defer unlock()
	}
	release, err := opts.Consoles.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	s, err := Connect(ctx, t, gns3Host, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}
