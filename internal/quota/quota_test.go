package quota

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

func TestMemoryBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := NewMemory(6, func() time.Time { return now }) // one turn every 10 s, bursts of 6
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		if ok, _, _ := b.Take(ctx, "alice"); !ok {
			t.Fatalf("turn %d of the burst refused", i+1)
		}
	}
	ok, wait, _ := b.Take(ctx, "alice")
	if ok || wait != 10*time.Second {
		t.Fatalf("7th turn: ok=%v retry after %v, want refused for 10s", ok, wait)
	}
	if ok, _, _ := b.Take(ctx, "bob"); !ok {
		t.Fatal("one user's bucket is another's")
	}
	now = now.Add(4 * time.Second)
	if ok, wait, _ := b.Take(ctx, "alice"); ok || wait != 6*time.Second {
		t.Fatalf("after 4 s: ok=%v wait %v", ok, wait)
	}
	now = now.Add(6 * time.Second)
	if ok, _, _ := b.Take(ctx, "alice"); !ok {
		t.Fatal("a refilled turn was refused")
	}
	// A long pause refills to the burst, no more.
	now = now.Add(time.Hour)
	for i := 0; i < 6; i++ {
		if ok, _, _ := b.Take(ctx, "alice"); !ok {
			t.Fatalf("after an hour, turn %d refused", i+1)
		}
	}
	if ok, _, _ := b.Take(ctx, "alice"); ok {
		t.Fatal("the bucket held more than its burst")
	}
	// Idle users are forgotten.
	now = now.Add(2 * time.Minute)
	b.Take(ctx, "carol")
	if _, kept := b.buckets["bob"]; kept {
		t.Fatal("a refilled bucket was kept")
	}
}

func TestMemoryBucketConcurrent(t *testing.T) {
	b := NewMemory(5, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _, _ := b.Take(context.Background(), "alice"); ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if granted != 5 {
		t.Fatalf("%d of 50 simultaneous turns granted, want 5", granted)
	}
}

func TestRedisBucket(t *testing.T) {
	rdb, prefix := testdb.Redis(t)
	ctx := context.Background()
	a := NewRedis(rdb, prefix+"rate:", 3)
	other := NewRedis(rdb, prefix+"rate:", 3) // a second API process
	for i := 0; i < 3; i++ {
		bucket := a
		if i%2 == 1 {
			bucket = other
		}
		if ok, _, err := bucket.Take(ctx, "alice"); err != nil || !ok {
			t.Fatalf("turn %d: %v %v", i+1, ok, err)
		}
	}
	ok, wait, err := other.Take(ctx, "alice")
	if err != nil || ok {
		t.Fatalf("4th turn across processes: ok=%v err=%v", ok, err)
	}
	if wait <= 0 || wait > 20*time.Second {
		t.Fatalf("retry after %v, want up to 20 s (3 turns a minute)", wait)
	}
	if ok, _, _ := a.Take(ctx, "bob"); !ok {
		t.Fatal("bob shares alice's bucket")
	}
	ttl, err := rdb.PTTL(ctx, prefix+"rate:alice").Result()
	if err != nil || ttl <= 0 || ttl > 61*time.Second {
		t.Fatalf("bucket key TTL %v %v: it must expire", ttl, err)
	}
}

// The rate check is on the path of every new turn: what one Take costs.
func BenchmarkMemoryTake(b *testing.B) {
	m := NewMemory(1_000_000_000, nil)
	ctx := context.Background()
	for b.Loop() {
		m.Take(ctx, "alice")
	}
}

func BenchmarkRedisTake(b *testing.B) {
	rdb, prefix := testdb.Redis(b)
	r := NewRedis(rdb, prefix+"rate:", 1_000_000_000)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := r.Take(ctx, "alice"); err != nil {
			b.Fatal(err)
		}
	}
}
