package credentials

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testclock"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// storeHarness is one Store under test plus access to what it wrote, so the tests can check the
// stored form and tamper with it.
type storeHarness struct {
	store Store
	// raw returns the stored (sealed) value of key and whether there is one.
	raw func(t *testing.T, key string) (string, bool)
	// setRaw overwrites the stored value of key (creating it, expiring in an hour).
	setRaw func(t *testing.T, key, value string)
	// withSealer opens another Store on the same storage under another sealer.
	withSealer func(t *testing.T, s *Sealer) Store
	// expire lets ttl pass for key (advancing an injected clock, or waiting for the backend).
	expire func(t *testing.T, key string, ttl time.Duration)
	// ttl reports the expiry the backend set on key.
	ttl func(t *testing.T, key string) time.Duration
}

func randomSecret(t testing.TB) string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "gns3-token-" + hex.EncodeToString(b[:])
}

func runStoreSuite(t *testing.T, newHarness func(t *testing.T) storeHarness) {
	ctx := context.Background()

	t.Run("RoundTripAndReplace", func(t *testing.T) {
		h := newHarness(t)
		secret := randomSecret(t)
		if err := h.store.Put(ctx, "turn-1", secret, time.Hour); err != nil {
			t.Fatal(err)
		}
		if got, err := h.store.Get(ctx, "turn-1"); err != nil || got != secret {
			t.Fatalf("Get = %q, %v", got, err)
		}
		other := randomSecret(t)
		if err := h.store.Put(ctx, "turn-1", other, time.Hour); err != nil {
			t.Fatal(err)
		}
		if got, err := h.store.Get(ctx, "turn-1"); err != nil || got != other {
			t.Fatalf("Get after replace = %q, %v", got, err)
		}
	})

	t.Run("MissingAndDelete", func(t *testing.T) {
		h := newHarness(t)
		if _, err := h.store.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
		}
		if err := h.store.Delete(ctx, "nope"); err != nil {
			t.Fatalf("Delete(missing) = %v", err)
		}
		if err := h.store.Put(ctx, "turn-2", randomSecret(t), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := h.store.Delete(ctx, "turn-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.Get(ctx, "turn-2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
		}
		if _, ok := h.raw(t, "turn-2"); ok {
			t.Fatal("Delete left the stored value behind")
		}
	})

	t.Run("StoredValueHidesPlaintext", func(t *testing.T) {
		h := newHarness(t)
		secret := randomSecret(t)
		if err := h.store.Put(ctx, "turn-3", secret, time.Hour); err != nil {
			t.Fatal(err)
		}
		raw, ok := h.raw(t, "turn-3")
		if !ok || raw == "" {
			t.Fatal("nothing stored")
		}
		for _, form := range []string{secret, secret[len("gns3-token-"):], base64.StdEncoding.EncodeToString([]byte(secret))} {
			if strings.Contains(raw, form) {
				t.Fatalf("stored value %q contains the plaintext (%q)", raw, form)
			}
		}
	})

	t.Run("ValueCopiedToAnotherKeyDoesNotOpen", func(t *testing.T) {
		h := newHarness(t)
		secret := randomSecret(t)
		if err := h.store.Put(ctx, "alice-turn", secret, time.Hour); err != nil {
			t.Fatal(err)
		}
		raw, _ := h.raw(t, "alice-turn")
		h.setRaw(t, "mallory-turn", raw)
		got, err := h.store.Get(ctx, "mallory-turn")
		if !errors.Is(err, ErrCorrupt) || got != "" {
			t.Fatalf("Get of a copied value = %q, %v; want ErrCorrupt", got, err)
		}
	})

	t.Run("TamperedValueDoesNotOpen", func(t *testing.T) {
		h := newHarness(t)
		if err := h.store.Put(ctx, "turn-4", randomSecret(t), time.Hour); err != nil {
			t.Fatal(err)
		}
		raw, _ := h.raw(t, "turn-4")
		b := []byte(raw)
		last := len(b) - 5
		if b[last] == 'x' {
			b[last] = 'y'
		} else {
			b[last] = 'x'
		}
		h.setRaw(t, "turn-4", string(b))
		if _, err := h.store.Get(ctx, "turn-4"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get of a tampered value = %v, want ErrCorrupt", err)
		}
	})

	t.Run("WrongKeyDoesNotOpen", func(t *testing.T) {
		h := newHarness(t)
		if err := h.store.Put(ctx, "turn-5", randomSecret(t), time.Hour); err != nil {
			t.Fatal(err)
		}
		other := h.withSealer(t, newTestSealer(t))
		if _, err := other.Get(ctx, "turn-5"); !errors.Is(err, ErrWrongKey) {
			t.Fatalf("Get under another secret key = %v, want ErrWrongKey", err)
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		h := newHarness(t)
		const ttl = 300 * time.Millisecond
		secret := randomSecret(t)
		if err := h.store.Put(ctx, "turn-6", secret, ttl); err != nil {
			t.Fatal(err)
		}
		if got := h.ttl(t, "turn-6"); got <= 0 || got > ttl {
			t.Fatalf("stored expiry %v, want within (0, %v]", got, ttl)
		}
		if got, err := h.store.Get(ctx, "turn-6"); err != nil || got != secret {
			t.Fatalf("Get before expiry = %q, %v", got, err)
		}
		h.expire(t, "turn-6", ttl)
		if _, err := h.store.Get(ctx, "turn-6"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after expiry = %v, want ErrNotFound", err)
		}
		if _, ok := h.raw(t, "turn-6"); ok {
			t.Fatal("expired value is still stored after it was looked up")
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		h := newHarness(t)
		cases := map[string]error{
			"empty key":    h.store.Put(ctx, "", "s", time.Hour),
			"long key":     h.store.Put(ctx, strings.Repeat("k", 256), "s", time.Hour),
			"empty secret": h.store.Put(ctx, "k", "", time.Hour),
			"zero ttl":     h.store.Put(ctx, "k", "s", 0),
			"negative ttl": h.store.Put(ctx, "k", "s", -time.Second),
			"get empty":    func() error { _, err := h.store.Get(ctx, ""); return err }(),
			"delete empty": h.store.Delete(ctx, ""),
		}
		for name, err := range cases {
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
		if _, ok := h.raw(t, "k"); ok {
			t.Fatal("rejected input was stored")
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		h := newHarness(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				key := fmt.Sprintf("turn-c%d", i)
				secret := randomSecret(t)
				for range 5 {
					if err := h.store.Put(ctx, key, secret, time.Hour); err != nil {
						t.Error(err)
						return
					}
					if got, err := h.store.Get(ctx, key); err != nil || got != secret {
						t.Errorf("Get(%s) = %q, %v", key, got, err)
						return
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("CancelledContext", func(t *testing.T) {
		h := newHarness(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := h.store.Put(cctx, "turn-x", "s", time.Hour); err == nil {
			t.Fatal("Put with a cancelled context succeeded")
		}
	})
}

// ---- database ----------------------------------------------------------------------------------

func dbHarness(t *testing.T, db *gorm.DB) storeHarness {
	clock := testclock.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	sealer := newTestSealer(t)
	st, err := newDBStore(db, sealer, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return storeHarness{
		store: st,
		raw: func(t *testing.T, key string) (string, bool) {
			var rows []turnCredential
			if err := db.Where(map[string]any{"key": key}).Find(&rows).Error; err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				return "", false
			}
			return rows[0].SealedValue, true
		},
		setRaw: func(t *testing.T, key, value string) {
			row := turnCredential{Key: key, SealedValue: value, ExpiresAt: dbTime(clock.Now()).Add(time.Hour)}
			if err := db.Save(&row).Error; err != nil {
				t.Fatal(err)
			}
		},
		withSealer: func(t *testing.T, s *Sealer) Store {
			other, err := newDBStore(db, s, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			return other
		},
		expire: func(t *testing.T, key string, ttl time.Duration) { clock.Advance(ttl) },
		ttl: func(t *testing.T, key string) time.Duration {
			var row turnCredential
			if err := db.Where(map[string]any{"key": key}).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			return row.ExpiresAt.Sub(clock.Now())
		},
	}
}

func quietGorm() *gorm.Config {
	return &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)}
}

func openSQLite(t *testing.T) *gorm.DB {
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "copilot.db")), quietGorm())
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

func openPostgres(t *testing.T) *gorm.DB {
	_, db := testdb.Postgres(t)
	return db
}

func TestDBStoreSQLite(t *testing.T) {
	runStoreSuite(t, func(t *testing.T) storeHarness { return dbHarness(t, openSQLite(t)) })
}

func TestDBStorePostgres(t *testing.T) {
	runStoreSuite(t, func(t *testing.T) storeHarness { return dbHarness(t, openPostgres(t)) })
}

func TestDBStorePurgesExpiredRows(t *testing.T) {
	for name, open := range map[string]func(*testing.T) *gorm.DB{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			clock := testclock.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
			st, err := newDBStore(db, newTestSealer(t), clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for key, ttl := range map[string]time.Duration{"short-1": time.Minute, "short-2": 90 * time.Second, "long": time.Hour} {
				if err := st.Put(ctx, key, randomSecret(t), ttl); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(2 * time.Minute)
			if err := st.Put(ctx, "new", randomSecret(t), time.Hour); err != nil {
				t.Fatal(err)
			}
			var keys []string
			if err := db.Model(&turnCredential{}).Order("expires_at").Pluck("key", &keys).Error; err != nil {
				t.Fatal(err)
			}
			if strings.Join(keys, ",") != "long,new" {
				t.Fatalf("rows after a write past two expiries: %v, want [long new]", keys)
			}
		})
	}
}

// A burst of turns starting within a minute deletes expired rows once, not once per turn: the
// rows that expire meanwhile stay (never returned) until the next write a minute later.
func TestDBStorePurgesAtMostOnceAMinute(t *testing.T) {
	db := openSQLite(t)
	clock := testclock.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	st, err := newDBStore(db, newTestSealer(t), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := func() string {
		var k []string
		if err := db.Model(&turnCredential{}).Order("key").Pluck("key", &k).Error; err != nil {
			t.Fatal(err)
		}
		return strings.Join(k, ",")
	}
	if err := st.Put(ctx, "a", randomSecret(t), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Second)
	if err := st.Put(ctx, "b", randomSecret(t), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := keys(); got != "a,b" {
		t.Fatalf("rows 30 s after the last purge: %s, want a,b (the expired a is kept until the next purge)", got)
	}
	clock.Advance(31 * time.Second)
	if err := st.Put(ctx, "c", randomSecret(t), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := keys(); got != "b,c" {
		t.Fatalf("rows a minute after the last purge: %s, want b,c", got)
	}
}

func TestNewDBStoreMigratesIdempotently(t *testing.T) {
	db := openSQLite(t)
	s := newTestSealer(t)
	first, err := NewDBStore(db, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Put(context.Background(), "kept", "secret", time.Hour); err != nil {
		t.Fatal(err)
	}
	second, err := NewDBStore(db, s)
	if err != nil {
		t.Fatalf("second NewDBStore on a migrated database: %v", err)
	}
	if got, err := second.Get(context.Background(), "kept"); err != nil || got != "secret" {
		t.Fatalf("value lost across a second migration: %q, %v", got, err)
	}
	if _, err := NewDBStore(nil, s); err == nil {
		t.Fatal("NewDBStore(nil db) accepted")
	}
}

// ---- Redis -------------------------------------------------------------------------------------

func openRedis(t *testing.T) (*redis.Client, string) {
	client, prefix := testdb.Redis(t)
	return client, prefix + ":credential:"
}

func TestRedisStore(t *testing.T) {
	runStoreSuite(t, func(t *testing.T) storeHarness {
		client, prefix := openRedis(t)
		ctx := context.Background()
		return storeHarness{
			store: NewRedisStore(client, newTestSealer(t), prefix),
			raw: func(t *testing.T, key string) (string, bool) {
				v, err := client.Get(ctx, prefix+key).Result()
				if errors.Is(err, redis.Nil) {
					return "", false
				}
				if err != nil {
					t.Fatal(err)
				}
				return v, true
			},
			setRaw: func(t *testing.T, key, value string) {
				if err := client.Set(ctx, prefix+key, value, time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
			},
			withSealer: func(t *testing.T, s *Sealer) Store { return NewRedisStore(client, s, prefix) },
			// Redis expires keys on its own clock: wait (bounded) until it has.
			expire: func(t *testing.T, key string, ttl time.Duration) {
				deadline := time.Now().Add(ttl + 10*time.Second)
				for client.Exists(ctx, prefix+key).Val() == 1 {
					if time.Now().After(deadline) {
						t.Fatalf("Redis kept %s past its ttl", key)
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
			ttl: func(t *testing.T, key string) time.Duration { return client.PTTL(ctx, prefix+key).Val() },
		}
	})
}

func TestRedisStoreDefaultPrefix(t *testing.T) {
	client, _ := openRedis(t)
	ctx := context.Background()
	key := "prefix-check-" + randomSecret(t)
	st := NewRedisStore(client, newTestSealer(t), "")
	if err := st.Put(ctx, key, "s", time.Minute); err != nil {
		t.Fatal(err)
	}
	defer client.Del(ctx, DefaultRedisPrefix+key)
	if n := client.Exists(ctx, DefaultRedisPrefix+key).Val(); n != 1 {
		t.Fatalf("value not under %s", DefaultRedisPrefix)
	}
}
