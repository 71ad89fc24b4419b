package credentials

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/sqlstmt"
)

// turnCredential is a row of turn_credentials. Only the sealed value is stored; the associated
// data binds it to Key.
type turnCredential struct {
	Key         string    `gorm:"column:key;primaryKey;size:255"`
	SealedValue string    `gorm:"column:sealed_value;type:text;not null"`
	ExpiresAt   time.Time `gorm:"column:expires_at;not null;index"`
}

func (turnCredential) TableName() string { return "turn_credentials" }

type dbStore struct {
	db     *gorm.DB
	sealer *Sealer
	now    func() time.Time
	// lastPurge is when this store last deleted expired rows (Unix nanoseconds).
	lastPurge atomic.Int64
}

// purgeEvery spaces the deletes of expired rows: each is a write that every turn starting at the
// same moment would otherwise queue behind on SQLite's one writer, and expired rows are never
// returned anyway.
const purgeEvery = time.Minute

// NewDBStore returns a Store in the turn_credentials table, creating or migrating the table.
// It is the store for deployments without Redis: rows carry an expiry, expired rows are never
// returned, and a write deletes them at most once a minute.
func NewDBStore(db *gorm.DB, sealer *Sealer) (Store, error) {
	return newDBStore(db, sealer, time.Now)
}

func newDBStore(db *gorm.DB, sealer *Sealer, now func() time.Time) (*dbStore, error) {
	if db == nil || sealer == nil {
		return nil, errors.New("credentials: NewDBStore needs a database and a sealer")
	}
	err := db.AutoMigrate(&turnCredential{})
	if err != nil {
		// An api and a worker starting together can race on CREATE TABLE; the second look sees
		// the table the other one made.
		err = db.AutoMigrate(&turnCredential{})
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: migrating turn_credentials: %w", err)
	}
	return &dbStore{db: db, sealer: sealer, now: now}, nil
}

// dbTime drops what Postgres cannot keep (below a microsecond) and the zone, so what is written is
// what is read back and compared.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// The store's statements, written by hand: each turn puts, reads twice and deletes its
// credential, and GORM built every one of them anew (internal/sqlstmt). "key" is quoted, as
// both databases take it, being a keyword.
var (
	putRow = sqlstmt.New(`INSERT INTO turn_credentials ("key", sealed_value, expires_at) VALUES (?, ?, ?)
		ON CONFLICT ("key") DO UPDATE SET sealed_value = excluded.sealed_value, expires_at = excluded.expires_at`)
	getRow           = sqlstmt.New(`SELECT sealed_value, expires_at FROM turn_credentials WHERE "key" = ?`)
	deleteRow        = sqlstmt.New(`DELETE FROM turn_credentials WHERE "key" = ?`)
	deleteExpiredRow = sqlstmt.New(`DELETE FROM turn_credentials WHERE "key" = ? AND expires_at <= ?`)
	deleteExpired    = sqlstmt.New(`DELETE FROM turn_credentials WHERE expires_at <= ?`)
)

func (s *dbStore) Put(ctx context.Context, key, secret string, ttl time.Duration) error {
	if err := checkPut(key, secret, ttl); err != nil {
		return err
	}
	sealed, err := s.sealer.Seal([]byte(secret), bindingFor(key))
	if err != nil {
		return err
	}
	now := dbTime(s.now())
	if err := s.purge(ctx, now); err != nil {
		return err
	}
	if _, err := putRow.Exec(ctx, s.db, key, sealed, now.Add(ttl)); err != nil {
		return fmt.Errorf("credentials: storing %s: %w", key, err)
	}
	return nil
}

func (s *dbStore) Get(ctx context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	var row turnCredential
	err := getRow.Row(ctx, s.db, []any{key}, &row.SealedValue, &row.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("credentials: reading %s: %w", key, err)
	}
	now := dbTime(s.now())
	if !now.Before(row.ExpiresAt) {
		// Only this row, and only if nobody refreshed it meanwhile.
		if _, err := deleteExpiredRow.Exec(ctx, s.db, key, now); err != nil {
			return "", fmt.Errorf("credentials: purging expired %s: %w", key, err)
		}
		return "", ErrNotFound
	}
	plain, err := s.sealer.Open(row.SealedValue, bindingFor(key))
	if err != nil {
		return "", fmt.Errorf("credentials: opening %s: %w", key, err)
	}
	return string(plain), nil
}

func (s *dbStore) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, err := deleteRow.Exec(ctx, s.db, key); err != nil {
		return fmt.Errorf("credentials: deleting %s: %w", key, err)
	}
	return nil
}

// purge deletes every expired row, unless it did less than purgeEvery ago. It runs on each Put,
// which is once per turn; of the Puts that race past the same minute only one deletes.
func (s *dbStore) purge(ctx context.Context, now time.Time) error {
	last := s.lastPurge.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < purgeEvery {
		return nil
	}
	if !s.lastPurge.CompareAndSwap(last, now.UnixNano()) {
		return nil
	}
	if _, err := deleteExpired.Exec(ctx, s.db, now); err != nil {
		return fmt.Errorf("credentials: purging expired credentials: %w", err)
	}
	return nil
}
