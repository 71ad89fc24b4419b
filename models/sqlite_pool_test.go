package models

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// poolRow has an autoincrement key and a column with a database default, so GORM's Create on
// SQLite reads both back with INSERT … RETURNING, through QueryContext.
type poolRow struct {
	ID    uint `gorm:"primaryKey"`
	Name  string
	Label string `gorm:"default:fresh"`
}

func openSplitSQLite(t *testing.T) (*gorm.DB, *sqlitePool) {
	t.Helper()
	db := testdb.SQLiteWith(t, Open)
	pool, ok := db.ConnPool.(*sqlitePool)
	require.True(t, ok, "a SQLite file should get a read pool, got %T", db.ConnPool)
	require.NoError(t, db.AutoMigrate(&poolRow{}))
	return db, pool
}

func TestSQLiteReadsProceedWhileAWriteTransactionIsOpen(t *testing.T) {
	db, _ := openSplitSQLite(t)
	committed := poolRow{Name: "before"}
	require.NoError(t, db.Create(&committed).Error)
	// Read-your-writes across connections: the autocommitted insert is visible to a reader.
	var seen poolRow
	require.NoError(t, db.First(&seen, committed.ID).Error)
	require.Equal(t, "before", seen.Name)

	tx := db.Begin()
	require.NoError(t, tx.Error)
	defer tx.Rollback()
	require.NoError(t, tx.Create(&poolRow{Name: "inside"}).Error)

	// On one shared connection these reads would wait for the transaction until their deadline;
	// the deadline only bounds a failing run.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const readers = 2 * sqliteReaders
	counts := make([]int64, readers)
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			errs[i] = db.WithContext(ctx).Model(&poolRow{}).Count(&counts[i]).Error
		})
	}
	wg.Wait()
	for i := range readers {
		require.NoError(t, errs[i], "read %d while a write transaction was open", i)
		require.EqualValues(t, 1, counts[i], "a reader saw an uncommitted row")
	}
	// Inside the transaction, reads stay on its connection and see its own write.
	var inTx int64
	require.NoError(t, tx.Model(&poolRow{}).Count(&inTx).Error)
	require.EqualValues(t, 2, inTx)

	require.NoError(t, tx.Commit().Error)
	var after int64
	require.NoError(t, db.Model(&poolRow{}).Count(&after).Error)
	require.EqualValues(t, 2, after, "a read after the commit should see it")
}

func TestSQLiteCreateWithReturningGoesToTheWriter(t *testing.T) {
	db, _ := openSplitSQLite(t)
	// GORM wraps a Create in a transaction (on the writer) unless told not to; without one, its
	// INSERT … RETURNING reaches the pool's QueryContext.
	for name, db := range map[string]*gorm.DB{
		"in GORM's transaction": db,
		"without":               db.Session(&gorm.Session{SkipDefaultTransaction: true}),
	} {
		t.Run(name, func(t *testing.T) {
			row := poolRow{Name: name}
			require.NoError(t, db.Create(&row).Error)
			require.NotZero(t, row.ID, "the key comes back through RETURNING")

			var got poolRow
			require.NoError(t, db.First(&got, row.ID).Error)
			require.Equal(t, row, got)
		})
	}
}

func TestSQLiteReadPoolRefusesWrites(t *testing.T) {
	_, pool := openSplitSQLite(t)
	_, err := pool.reader.Exec(`INSERT INTO pool_rows (name) VALUES ('x')`)
	var sqErr sqlite3.Error
	require.True(t, errors.As(err, &sqErr), "want a SQLite error, got %v", err)
	require.Equal(t, sqlite3.ErrReadonly, sqErr.Code)

	var n int64
	require.NoError(t, pool.reader.QueryRow(`SELECT count(*) FROM pool_rows`).Scan(&n))
	require.Zero(t, n)
}

func TestSQLiteClosingDBClosesBothPools(t *testing.T) {
	db, err := Open("sqlite:"+filepath.Join(t.TempDir(), "c.db"), "")
	require.NoError(t, err)
	pool := db.ConnPool.(*sqlitePool)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	require.Same(t, pool.writer, sqlDB)
	require.NoError(t, sqlDB.Close())
	require.ErrorContains(t, pool.reader.Ping(), "database is closed")
}

func TestSQLiteInMemoryKeepsOneConnection(t *testing.T) {
	db, err := Open("sqlite::memory:", "")
	require.NoError(t, err)
	sqlDB, ok := db.ConnPool.(*sql.DB)
	require.True(t, ok, "a private in-memory database must not get a second pool, got %T", db.ConnPool)
	t.Cleanup(func() { _ = sqlDB.Close() })
	require.NoError(t, Migrate(db))
	require.NoError(t, db.AutoMigrate(&poolRow{}))
	require.NoError(t, db.Create(&poolRow{Name: "m"}).Error)
	var n int64
	require.NoError(t, db.Model(&poolRow{}).Count(&n).Error)
	require.EqualValues(t, 1, n)
}

func TestIsPlainSelect(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT * FROM chat_turns WHERE id = ?":              true,
		"  select count(*) from t":                           true,
		"SELECT\n*\nFROM t":                                  true,
		"SELECT(1)":                                          true,
		"select sqlite_version()":                            true,
		"INSERT INTO t (a) VALUES (?) RETURNING id":          false,
		"UPDATE t SET a = ? WHERE id = ? RETURNING *":        false,
		"DELETE FROM t RETURNING id":                         false,
		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x": false,
		"PRAGMA table_info(t)":                               false,
		"SELECTED":                                           false,
		"SELECTfoo FROM t":                                   false,
		"":                                                   false,
		"CREATE TABLE t AS SELECT 1":                         false,
		"REPLACE INTO t VALUES (1)":                          false,
		"select * from t where name = 'SELECT'":              true,
		"savepoint sp1":                                      false,
		"SELECT count(*) FROM sqlite_master WHERE type = 'table' AN": true,
	} {
		require.Equal(t, want, isPlainSelect(q), q)
	}
}

func cachedTexts(c *stmtCache) map[string]*sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*sql.Stmt, len(c.stmts))
	for q, st := range c.stmts {
		out[q] = st
	}
	return out
}

// Issue 36: a query text is prepared once per pool and reused, reads on the readers and writes
// on the writer; a text first seen in a transaction runs there as text and is prepared once the
// transaction has ended, for the next ones, which then see their own writes through it.
func TestSQLiteStatementsArePreparedOnce(t *testing.T) {
	db, pool := openSplitSQLite(t)
	require.NoError(t, db.Create(&poolRow{Name: "a"}).Error)
	var rows []poolRow
	require.NoError(t, db.Where("name = ?", "a").Find(&rows).Error)
	readers := cachedTexts(pool.readerStmts)
	require.NotEmpty(t, readers)
	require.NoError(t, db.Where("name = ?", "b").Find(&rows).Error)
	require.Equal(t, readers, cachedTexts(pool.readerStmts), "the same text again: the same statement, nothing new")
	for q := range readers {
		require.True(t, isPlainSelect(q), "a write among the readers' statements: %s", q)
	}
	for q := range cachedTexts(pool.writerStmts) {
		require.False(t, isPlainSelect(q) && q != "", "a plain read among the writer's: %s", q)
	}

	update := func(tx *gorm.DB, name string) error {
		if err := tx.Model(&poolRow{}).Where("name = ?", "a").Update("label", name).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&poolRow{}).Where("label = ?", name).Count(&n).Error; err != nil {
			return err
		}
		if n != 1 {
			return errors.New("the transaction does not see its own update")
		}
		return nil
	}
	before := len(cachedTexts(pool.writerStmts))
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return update(tx, "first") }))
	learned := cachedTexts(pool.writerStmts)
	require.Len(t, learned, before+2, "the update and the count inside the transaction, prepared after it")
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return update(tx, "second") }))
	require.Equal(t, learned, cachedTexts(pool.writerStmts))
	var got poolRow
	require.NoError(t, db.Where("name = ?", "a").First(&got).Error)
	require.Equal(t, "second", got.Label)
}

// A full cache prepares nothing more and the new texts run as before.
func TestSQLiteFullStatementCacheStillRuns(t *testing.T) {
	db, pool := openSplitSQLite(t)
	pool.readerStmts.mu.Lock()
	for i := 0; len(pool.readerStmts.stmts) < maxCachedStatements; i++ {
		pool.readerStmts.stmts["SELECT "+strconv.Itoa(i)] = nil // texts the test never runs
	}
	pool.readerStmts.mu.Unlock()
	require.NoError(t, db.Create(&poolRow{Name: "x"}).Error)
	var n int64
	require.NoError(t, db.Model(&poolRow{}).Where("name = ?", "x").Count(&n).Error)
	require.EqualValues(t, 1, n)
	require.Len(t, cachedTexts(pool.readerStmts), maxCachedStatements)
}

// A text of several statements runs them all, as it did before the cache.
func TestSQLiteSeveralStatementsInOneTextAllRun(t *testing.T) {
	db, pool := openSplitSQLite(t)
	require.NoError(t, db.Exec("INSERT INTO pool_rows (name) VALUES ('one'); INSERT INTO pool_rows (name) VALUES ('two');").Error)
	var n int64
	require.NoError(t, db.Model(&poolRow{}).Count(&n).Error)
	require.EqualValues(t, 2, n)
	for q := range cachedTexts(pool.writerStmts) {
		require.NotContains(t, q, "'two'")
	}
	require.True(t, singleStatement("SELECT 1;\n"))
}

// A statement that returns rows, run as an Exec (a PRAGMA that answers, a SELECT), leaves a
// prepared statement stepped but not reset until its next run; held in the cache, it kept the
// writer's read open, and every later COMMIT failed with "SQL statements in progress". Such
// texts run as text, finalized at once.
func TestSQLiteExecOfARowReturningTextLeavesTheWriterFree(t *testing.T) {
	db, pool := openSplitSQLite(t)
	for _, q := range []string{"PRAGMA wal_checkpoint(PASSIVE)", "SELECT 1", "INSERT INTO pool_rows (name) VALUES ('r') RETURNING id"} {
		require.NoError(t, db.Exec(q).Error, q)
		require.NoError(t, db.Transaction(func(tx *gorm.DB) error { return tx.Create(&poolRow{Name: q}).Error }), "a transaction after %q", q)
	}
	require.NoError(t, db.Exec("INSERT INTO pool_rows (name) VALUES ('plain')").Error)
	texts := cachedTexts(pool.writerStmts)
	require.Contains(t, texts, "INSERT INTO pool_rows (name) VALUES ('plain')", "a write that returns nothing is still prepared once")
	for _, q := range []string{"PRAGMA wal_checkpoint(PASSIVE)", "SELECT 1", "INSERT INTO pool_rows (name) VALUES ('r') RETURNING id"} {
		require.NotContains(t, texts, q)
	}
}
