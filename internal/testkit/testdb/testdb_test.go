package testdb

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestPostgresSchemaIsPrivateAndDropped(t *testing.T) {
	_, outside := Postgres(t)
	var schema string
	t.Run("inner", func(t *testing.T) {
		dsn, db := Postgres(t)
		if err := db.Exec("CREATE TABLE things (id int)").Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(schema, "test_") || !strings.Contains(dsn, "search_path="+schema) {
			t.Fatalf("connection on schema %q, dsn %q: want the test's own schema", schema, dsn)
		}
		var n int64
		if err := outside.Raw("SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'things'", schema).Scan(&n).Error; err != nil || n != 1 {
			t.Fatalf("table in the test schema: %d, %v", n, err)
		}
	})
	var n int64
	if err := outside.Raw("SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", schema).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("schema %s after its test: %d rows, %v; want it dropped", schema, n, err)
	}
}

func TestWithSearchPath(t *testing.T) {
	for in, want := range map[string]string{
		"host=h user=u":                 "host=h user=u search_path=s",
		"postgres://u@h/db?sslmode=off": "postgres://u@h/db?search_path=s&sslmode=off",
	} {
		if got := withSearchPath(in, "s"); got != want {
			t.Errorf("withSearchPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedisKeysAreDeleted(t *testing.T) {
	outside, _ := Redis(t)
	ctx := context.Background()
	var prefix string
	t.Run("inner", func(t *testing.T) {
		client, p := Redis(t)
		prefix = p
		if err := client.Set(ctx, prefix+":k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if n := outside.Exists(ctx, prefix+":k").Val(); n != 0 {
		t.Fatalf("key %s:k survived its test", prefix)
	}
	if addr := RedisAddr(t); addr != outside.Options().Addr {
		t.Fatalf("RedisAddr = %s, client on %s", addr, outside.Options().Addr)
	}
}

// Issue 15 point 6: a PostgreSQL without the tests' database gets it made.
func TestPostgresCreatesItsDatabase(t *testing.T) {
	base := os.Getenv(PostgresEnv)
	if base == "" {
		base = DefaultPostgresDSN
	}
	dsn := base + " dbname=gns3copilot_created_" + randomHex()
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		t.Skip("this test appends dbname= to a key=value DSN")
	}
	// Registered first, so it runs after Postgres has closed its connection.
	created := false
	t.Cleanup(func() {
		if !created {
			return // skipped: no PostgreSQL
		}
		if err := dropDatabase(dsn); err != nil {
			t.Errorf("dropping the created database: %v", err)
		}
	})
	t.Setenv(PostgresEnv, dsn)
	_, db := Postgres(t)
	created = true
	var name string
	if err := db.Raw("SELECT current_database()").Scan(&name).Error; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "gns3copilot_created_") {
		t.Fatalf("connected to %q", name)
	}
}
