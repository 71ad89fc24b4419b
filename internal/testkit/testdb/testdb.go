// Package testdb gives tests the real PostgreSQL and Redis the product runs on, each test in a
// space of its own (a fresh schema, a fresh key prefix) that is removed when it ends. When one is
// not running the test is skipped on a developer machine and fails in CI (CI=true).
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

const (
	// PostgresEnv overrides DefaultPostgresDSN.
	PostgresEnv = "GNS3COPILOT_TEST_POSTGRES_DSN"
	// DefaultPostgresDSN is the local PostgreSQL the tests use unless PostgresEnv is set.
	DefaultPostgresDSN = "host=127.0.0.1 user=postgres dbname=test sslmode=disable connect_timeout=3"
	// RedisEnv overrides DefaultRedisAddr.
	RedisEnv = "GNS3COPILOT_TEST_REDIS_ADDR"
	// DefaultRedisAddr is the local Redis the tests use unless RedisEnv is set.
	DefaultRedisAddr = "127.0.0.1:6379"
)

// Postgres creates a schema of its own for the test and returns a DSN whose search_path is that
// schema, plus a connection opened on it (silent logger, GORM defaults otherwise). Tables made
// through either land in the schema, so parallel tests and other packages never meet; the
// schema and everything in it is dropped when the test ends.
func Postgres(t testing.TB) (dsn string, db *gorm.DB) {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		base = DefaultPostgresDSN
	}
	schema := "test_" + randomHex()
	dsn = withSearchPath(base, schema)
	db, err := openPostgres(dsn)
	if missingDatabase(err) {
		// A stock PostgreSQL has no database "test": make it when the role may.
		if cerr := CreateDatabase(base); cerr != nil {
			err = fmt.Errorf("%w (creating it failed: %v)", err, cerr)
		} else {
			db, err = openPostgres(dsn)
		}
	}
	if err != nil {
		unavailable(t, "PostgreSQL ("+base+")", err)
	}
	if err := db.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		closeGorm(db)
		t.Fatalf("creating test schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if err := db.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
			t.Logf("dropping test schema %s: %v", schema, err)
		}
		closeGorm(db)
	})
	return dsn, db
}

func openPostgres(dsn string) (*gorm.DB, error) {
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err == nil {
		if err = db.Exec("SELECT 1").Error; err != nil {
			closeGorm(db)
		}
	}
	return db, err
}

func missingDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "3D000" // invalid_catalog_name
}

// CreateDatabase creates the database dsn names, connecting to the "postgres" database with the
// same settings; an existing database is fine.
func CreateDatabase(dsn string) error {
	return onMaintenanceDB(dsn, func(ctx context.Context, conn *pgx.Conn, name string) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: another package made it
			return nil
		}
		return err
	})
}

// dropDatabase drops the database dsn names (for tests of CreateDatabase).
func dropDatabase(dsn string) error {
	return onMaintenanceDB(dsn, func(ctx context.Context, conn *pgx.Conn, name string) error {
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		return err
	})
}

func onMaintenanceDB(dsn string, f func(context.Context, *pgx.Conn, string) error) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return fmt.Errorf("no database name to create in %q", dsn)
	}
	cfg.Database = "postgres"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return f(ctx, conn, name)
}

// Opener opens a database URL the way the product does. Tests pass models.Open, so the code under
// test runs with its production GORM configuration; testdb cannot import models itself because
// models' own tests use it.
type Opener func(databaseURL, dataDir string) (*gorm.DB, error)

// SQLiteWith opens a fresh SQLite database in the test's temporary directory through open, and
// closes it when the test ends.
func SQLiteWith(t testing.TB, open Opener) *gorm.DB {
	t.Helper()
	return openWith(t, open, "sqlite:"+filepath.Join(t.TempDir(), "test.db"))
}

// PostgresWith opens a fresh schema (see Postgres) through open, and closes it when the test ends.
func PostgresWith(t testing.TB, open Opener) *gorm.DB {
	t.Helper()
	dsn, _ := Postgres(t)
	return openWith(t, open, dsn)
}

func openWith(t testing.TB, open Opener, databaseURL string) *gorm.DB {
	t.Helper()
	db, err := open(databaseURL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeGorm(db) })
	return db
}

// withSearchPath binds dsn (key=value or URL form) to schema.
func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}

func closeGorm(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		_ = sqlDB.Close()
	}
}

// RedisAddr returns the address of the test Redis after checking that it answers, for tests that
// hand the address to something else (a service under test, a second client).
func RedisAddr(t testing.TB) string {
	t.Helper()
	addr := redisAddr()
	c := redis.NewClient(&redis.Options{Addr: addr})
	err := ping(c)
	_ = c.Close()
	if err != nil {
		unavailable(t, "Redis at "+addr, err)
	}
	return addr
}

// Redis connects to the test Redis and returns the client with a key prefix of the test's own
// (no trailing separator, like the product's default prefixes). Every key under prefix+":" is
// deleted and the client closed when the test ends.
func Redis(t testing.TB) (client *redis.Client, prefix string) {
	t.Helper()
	// Blocking reads (XREAD BLOCK) hold a connection each while they wait; the relay suite runs
	// many at once, more than the default pool has on a small machine.
	client = redis.NewClient(&redis.Options{Addr: redisAddr(), PoolSize: 64})
	if err := ping(client); err != nil {
		_ = client.Close()
		unavailable(t, "Redis at "+client.Options().Addr, err)
	}
	prefix = "gns3copilot-test-" + randomHex()
	t.Cleanup(func() {
		ctx := context.Background()
		var keys []string
		iter := client.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			client.Del(ctx, keys...)
		}
		_ = client.Close()
	})
	return client, prefix
}

func redisAddr() string {
	if a := os.Getenv(RedisEnv); a != "" {
		return a
	}
	return DefaultRedisAddr
}

func ping(c *redis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// unavailable skips the test, or fails it in CI where every backing service must be running.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI: %v", what, err)
	}
	t.Skipf("%s not reachable (%v): start it to run this test", what, err)
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
