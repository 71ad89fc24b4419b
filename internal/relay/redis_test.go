package relay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/relay/relaytest"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

func newRedisSubject(t testing.TB, cfg relaytest.Config) relaytest.Subject {
	client, prefix := testdb.Redis(t)
	r := relay.NewRedis(client, relay.RedisOptions{
		Prefix:     prefix,
		MaxLen:     int64(cfg.MaxLen),
		IdleTTL:    cfg.IdleTTL,
		BlockSlice: 200 * time.Millisecond,
	})
	return relaytest.Subject{
		Log:       r,
		TrimSlack: 100, // stream-node-max-entries: MAXLEN ~ trims whole nodes only
		TTL: func(stream string) (time.Duration, error) {
			return client.PTTL(context.Background(), r.StreamKey(stream)).Result()
		},
	}
}

func TestRedisConformance(t *testing.T) {
	relaytest.Run(t, newRedisSubject)
}

func TestRedisKeysAndMarker(t *testing.T) {
	client, prefix := testdb.Redis(t)
	r := relay.NewRedis(client, relay.RedisOptions{Prefix: prefix})
	ctx := context.Background()
	if got, want := r.StreamKey("abc"), prefix+":turn:abc:events"; got != want {
		t.Fatalf("StreamKey = %s, want %s", got, want)
	}
	if _, err := r.Append(ctx, "abc", relay.TypeContent, json.RawMessage(`{"type":"content","content":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	// The wire layout other tools (redis-cli, dashboards) see: fields t and d.
	msgs, err := client.XRange(ctx, r.StreamKey("abc"), "-", "+").Result()
	if err != nil || len(msgs) != 1 || msgs[0].Values["t"] != "content" || msgs[0].Values["d"] != `{"type":"content","content":"hi"}` {
		t.Fatalf("raw entry = %v, %v", msgs, err)
	}
	if ttl := client.PTTL(ctx, r.StreamKey("abc")).Val(); ttl < 23*time.Hour || ttl > 24*time.Hour {
		t.Fatalf("default idle TTL = %v, want 24h", ttl)
	}
	id, _, err := r.AppendTerminal(ctx, "abc", relay.TypeDone, json.RawMessage(`{"type":"done"}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := client.Get(ctx, r.TerminalKey("abc")).Val(); got != id {
		t.Fatalf("marker holds %q, want %s", got, id)
	}
	mt, st := client.PTTL(ctx, r.TerminalKey("abc")).Val(), client.PTTL(ctx, r.StreamKey("abc")).Val()
	if mt <= 0 || mt > time.Hour || st <= 0 || st > time.Hour {
		t.Fatalf("marker TTL %v, stream TTL %v; want both within 1h", mt, st)
	}
}

func TestRedisForeignEntryIsAnError(t *testing.T) {
	client, prefix := testdb.Redis(t)
	r := relay.NewRedis(client, relay.RedisOptions{Prefix: prefix})
	ctx := context.Background()
	client.XAdd(ctx, &redis.XAddArgs{Stream: r.StreamKey("x"), Values: map[string]any{"other": "1"}})
	if _, err := r.Range(ctx, "x", "", 0); err == nil || !strings.Contains(err.Error(), "t/d") {
		t.Fatalf("Range over a foreign entry = %v, want a clear error", err)
	}
}

func TestRedisUnreachableIsAnError(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer client.Close()
	r := relay.NewRedis(client, relay.RedisOptions{})
	ctx := context.Background()
	if _, err := r.Append(ctx, "s", relay.TypeContent, json.RawMessage(`{}`)); err == nil {
		t.Fatal("Append to an unreachable Redis succeeded")
	}
	if _, err := r.Wait(ctx, "s", "", time.Second); err == nil {
		t.Fatal("Wait on an unreachable Redis returned no error")
	}
}

func benchRedis(b *testing.B) *relay.Redis {
	client, prefix := testdb.Redis(b)
	return relay.NewRedis(client, relay.RedisOptions{Prefix: prefix})
}

func BenchmarkRedisAppend(b *testing.B)    { relaytest.BenchmarkAppend(b, benchRedis(b)) }
func BenchmarkRedisRoundTrip(b *testing.B) { relaytest.BenchmarkRoundTrip(b, benchRedis(b)) }
