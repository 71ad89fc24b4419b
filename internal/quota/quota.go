// Package quota is the per-user rate limit of chat turns: a token bucket per user, in Redis
// when several API processes share the load, in process otherwise. A model call costs money,
// so a user (or a script with their token) cannot start turns faster than the operator allows.
package quota

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bucket takes one turn from key's bucket; when it is empty, ok is false and retryAfter says
// when the next turn will be allowed.
type Bucket interface {
	Take(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// Memory is a Bucket for one process. Each key holds up to perMinute turns and gains one every
// minute/perMinute.
type Memory struct {
	mu        sync.Mutex
	perMinute float64
	now       func() time.Time
	buckets   map[string]*memBucket
	lastPrune time.Time
}

type memBucket struct {
	tokens float64
	at     time.Time
}

// NewMemory returns an in-process bucket allowing perMinute turns per minute and per key, in a
// burst of up to perMinute. now is the clock (nil: time.Now).
func NewMemory(perMinute int, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{perMinute: float64(perMinute), now: now, buckets: map[string]*memBucket{}}
}

// Take implements Bucket.
func (m *Memory) Take(_ context.Context, key string) (bool, time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	perSecond := m.perMinute / 60
	m.prune(now, perSecond)
	b := m.buckets[key]
	if b == nil {
		b = &memBucket{tokens: m.perMinute, at: now}
		m.buckets[key] = b
	}
	b.tokens = math.Min(m.perMinute, b.tokens+now.Sub(b.at).Seconds()*perSecond)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0, nil
	}
	return false, time.Duration(math.Ceil((1-b.tokens)/perSecond*1000)) * time.Millisecond, nil
}

// prune drops the buckets that have refilled (they are the same as no bucket), so the map holds
// only users active in the last minute.
func (m *Memory) prune(now time.Time, perSecond float64) {
	if now.Sub(m.lastPrune) < time.Minute {
		return
	}
	m.lastPrune = now
	for k, b := range m.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*perSecond >= m.perMinute {
			delete(m.buckets, k)
		}
	}
}

// Redis is a Bucket shared by every process using the same Redis. The refill is computed with
// Redis's own clock inside one script, so processes with different clocks agree.
type Redis struct {
	rdb       *redis.Client
	prefix    string
	perMinute int
}

// NewRedis returns a bucket in rdb under keys prefix+key.
func NewRedis(rdb *redis.Client, prefix string, perMinute int) *Redis {
	return &Redis{rdb: rdb, prefix: prefix, perMinute: perMinute}
}

// takeScript refills the bucket for the time since its last use, then takes a token if there
// is one. It answers {1, 0} or {0, milliseconds until the next token}.
var takeScript = redis.NewScript(`
local capacity = tonumber(ARGV[1])
local per_ms = capacity / 60000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
end
tokens = math.min(capacity, tokens + math.max(0, now - at) * per_ms)
local ok, wait = 0, 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  wait = math.ceil((1 - tokens) / per_ms)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000 + 1000)
return {ok, wait}
`)

// Take implements Bucket.
func (r *Redis) Take(ctx context.Context, key string) (bool, time.Duration, error) {
	res, err := takeScript.Run(ctx, r.rdb, []string{r.prefix + key}, strconv.Itoa(r.perMinute)).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, redis.Nil
	}
	return res[0] == 1, time.Duration(res[1]) * time.Millisecond, nil
}
