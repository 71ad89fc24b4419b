package devices

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisClient is the part of a go-redis client the lock needs; *redis.Client,
// *redis.ClusterClient and *redis.Ring all satisfy it.
type RedisClient interface {
	redis.Scripter
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// RedisLocker is a Locker shared by every worker process that uses the same
// Redis. A lock is a key set with SET NX PX to a random owner token; the
// holder renews it while it runs, and only the owner can extend or delete it.
//
// github.com/bsm/redislock implements the same three steps (SET NX PX, and
// token-checked PEXPIRE and DEL in Lua) but not what carries the risk here:
// renewing while held, reporting a lost lock, and turning a bounded wait into
// ErrDeviceBusy. Those would stay ours, so the library would add a dependency
// and replace only the acquire loop and the two scripts below.
type RedisLocker struct {
	client RedisClient
	// Prefix is put before every key (default "gns3-copilot:device-lock:").
	Prefix string
	// MaxWait bounds how long Lock waits (DefaultLockWait when zero).
	MaxWait time.Duration
	// OnLost, if set, is called when a held lock expired or was taken over
	// before it was released (for example after Redis lost it).
	OnLost func(key string)
}

// NewRedisLocker returns a Locker backed by client.
func NewRedisLocker(client RedisClient, maxWait time.Duration) *RedisLocker {
	return &RedisLocker{client: client, MaxWait: maxWait}
}

var (
	renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)
)

const minLockTTL = 300 * time.Millisecond

// Lock implements Locker.
func (l *RedisLocker) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	if key == "" {
		return nil, errors.New("lock key is empty")
	}
	if ttl < minLockTTL {
		ttl = minLockTTL
	}
	prefix := l.Prefix
	if prefix == "" {
		prefix = "gns3-copilot:device-lock:"
	}
	rkey := prefix + key
	var tok [16]byte
	if _, err := crand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("lock token: %w", err)
	}
	token := hex.EncodeToString(tok[:])
	wait := l.MaxWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	wctx, cancel, busy := waitBound(ctx, key, wait)
	defer cancel()

	backoff := 10 * time.Millisecond
	for {
		err := l.client.Do(wctx, "SET", rkey, token, "NX", "PX", ttl.Milliseconds()).Err()
		if err == nil {
			break
		}
		if !errors.Is(err, redis.Nil) {
			if wctx.Err() != nil {
				return nil, busy()
			}
			return nil, fmt.Errorf("device lock %s: %w", key, err)
		}
		// Jitter keeps waiting workers from retrying in lockstep.
		d := backoff/2 + rand.N(backoff)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			return nil, busy()
		}
		if backoff < 200*time.Millisecond {
			backoff = backoff * 3 / 2
		}
	}

	stop := make(chan struct{})
	done := make(chan struct{})
	go l.renew(rkey, key, token, ttl, stop, done)
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			// The caller's context may be cancelled by now; releasing must
			// still happen, or the device stays locked until the ttl.
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer rcancel()
			_ = releaseScript.Run(rctx, l.client, []string{rkey}, token).Err()
		})
	}, nil
}

// renew extends the lock every ttl/3 while it is held. When renewals fail
// for longer than the ttl the lock has expired and is reported lost.
func (l *RedisLocker) renew(rkey, key, token string, ttl time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		n, err := renewScript.Run(ctx, l.client, []string{rkey}, token, ttl.Milliseconds()).Int64()
		cancel()
		switch {
		case err == nil && n == 1:
			lastOK = time.Now()
			continue
		case err == nil, time.Since(lastOK) > ttl:
			if l.OnLost != nil {
				l.OnLost(key)
			}
			return
		}
		// A failed renewal is retried on the next tick; the ttl leaves room
		// for two more attempts before the lock can expire.
	}
}
