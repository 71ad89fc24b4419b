package devices_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// lockerContract checks what every Locker must do. newLocker returns
// lockers that share state (two "worker processes") with the given wait.
func lockerContract(t *testing.T, newLocker func(wait time.Duration) devices.Locker) {
	ctx := context.Background()

	t.Run("exclusive", func(t *testing.T) {
		a, b := newLocker(10*time.Second), newLocker(10*time.Second)
		var inside, max atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func(l devices.Locker) {
				defer wg.Done()
				unlock, err := l.Lock(ctx, "dev-1", 2*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for {
					m := max.Load()
					if n <= m || max.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond) // hold the device for a moment
				inside.Add(-1)
				unlock()
			}([]devices.Locker{a, b}[i%2])
		}
		wg.Wait()
		if max.Load() != 1 {
			t.Fatalf("%d holders at once", max.Load())
		}
	})

	t.Run("busy after bounded wait", func(t *testing.T) {
		holder, waiter := newLocker(time.Second), newLocker(150*time.Millisecond)
		unlock, err := holder.Lock(ctx, "dev-2", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		start := time.Now()
		_, err = waiter.Lock(ctx, "dev-2", 2*time.Second)
		if !errors.Is(err, devices.ErrDeviceBusy) || !strings.HasPrefix(err.Error(), "device busy") {
			t.Fatalf("want device busy, got %v", err)
		}
		if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
			t.Fatalf("waited %s", el)
		}
		// Other devices are not affected.
		u2, err := waiter.Lock(ctx, "dev-3", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		u2()
	})

	t.Run("waits for release", func(t *testing.T) {
		a, b := newLocker(5*time.Second), newLocker(5*time.Second)
		unlock, err := a.Lock(ctx, "dev-4", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			u, err := b.Lock(ctx, "dev-4", 2*time.Second)
			if err == nil {
				u()
			}
			got <- err
		}()
		select {
		case err := <-got:
			t.Fatalf("second lock returned while held: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		unlock()
		unlock() // idempotent
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("cancelled wait", func(t *testing.T) {
		a, b := newLocker(5*time.Second), newLocker(5*time.Second)
		unlock, err := a.Lock(ctx, "dev-5", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err = b.Lock(cctx, "dev-5", 2*time.Second)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
		// A context deadline while waiting is a busy device, not a crash.
		dctx, dcancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer dcancel()
		if _, err := b.Lock(dctx, "dev-5", 2*time.Second); !errors.Is(err, devices.ErrDeviceBusy) {
			t.Fatalf("want device busy, got %v", err)
		}
	})
}

func TestMemoryLocker(t *testing.T) {
	shared := devices.NewMemoryLocker(0)
	lockerContract(t, func(wait time.Duration) devices.Locker {
		// One process: lockers with different waits must share the slots.
		return waitOverride{shared, wait}
	})
}

// waitOverride gives each user of a shared MemoryLocker its own wait.
type waitOverride struct {
	m    *devices.MemoryLocker
	wait time.Duration
}

func (w waitOverride) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	wctx, cancel := context.WithTimeout(ctx, w.wait)
	unlock, err := w.m.Lock(wctx, key, ttl)
	cancel()
	return unlock, err
}

func TestMemoryLockerMaxWait(t *testing.T) {
	m := devices.NewMemoryLocker(100 * time.Millisecond)
	unlock, err := m.Lock(context.Background(), "d", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Lock(context.Background(), "d", 0)
	var busy *devices.BusyError
	if !errors.As(err, &busy) || busy.Key != "d" || busy.Waited < 100*time.Millisecond {
		t.Fatalf("%v", err)
	}
	unlock()
	if _, err := m.Lock(context.Background(), "", 0); err == nil {
		t.Fatal("empty key accepted")
	}
}

// lockRedis gives the test its own key prefix on the test Redis, cleared when it ends.
func lockRedis(t *testing.T) (*redis.Client, string) {
	client, prefix := testdb.Redis(t)
	return client, prefix + ":device-lock:"
}

func TestRedisLocker(t *testing.T) {
	client, prefix := lockRedis(t)
	lockerContract(t, func(wait time.Duration) devices.Locker {
		l := devices.NewRedisLocker(client, wait)
		l.Prefix = prefix
		return l
	})
}

func TestRedisLockerRenewsWhileHeld(t *testing.T) {
	client, prefix := lockRedis(t)
	ctx := context.Background()
	a := devices.NewRedisLocker(client, time.Second)
	a.Prefix = prefix
	unlock, err := a.Lock(ctx, "dev", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Held for more than three ttls: renewal must keep others out.
	b := devices.NewRedisLocker(client, time.Second)
	b.Prefix = prefix
	if _, err := b.Lock(ctx, "dev", 300*time.Millisecond); !errors.Is(err, devices.ErrDeviceBusy) {
		t.Fatalf("lock was not renewed: %v", err)
	}
	unlock()
	if n, _ := client.Exists(ctx, prefix+"dev").Result(); n != 0 {
		t.Fatal("unlock left the key behind")
	}
}

func TestRedisLockerExpiresWhenHolderDies(t *testing.T) {
	client, prefix := lockRedis(t)
	ctx := context.Background()
	// The "dead worker" has its own connection, which we cut.
	dead := redis.NewClient(&redis.Options{Addr: client.Options().Addr})
	a := devices.NewRedisLocker(dead, time.Second)
	a.Prefix = prefix
	if _, err := a.Lock(ctx, "dev", 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	b := devices.NewRedisLocker(client, 5*time.Second)
	b.Prefix = prefix
	start := time.Now()
	unlock, err := b.Lock(ctx, "dev", 400*time.Millisecond)
	if err != nil {
		t.Fatalf("lock of a dead holder never expired: %v", err)
	}
	defer unlock()
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %s", el)
	}
}

func TestRedisLockerUnlockOnlyByOwner(t *testing.T) {
	client, prefix := lockRedis(t)
	ctx := context.Background()
	lost := make(chan string, 1)
	a := devices.NewRedisLocker(client, time.Second)
	a.Prefix = prefix
	a.OnLost = func(k string) { lost <- k }
	unlock, err := a.Lock(ctx, "dev", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else took the key over (say, after Redis failed over).
	if err := client.Set(ctx, prefix+"dev", "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-lost:
		if k != "dev" {
			t.Fatalf("lost %q", k)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("renewal did not notice the lost lock")
	}
	unlock()
	if v, _ := client.Get(ctx, prefix+"dev").Result(); v != "someone-else" {
		t.Fatalf("unlock deleted another owner's lock: %q", v)
	}
	client.Del(ctx, prefix+"dev")
}
