package models

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// waitForWaiters waits until n members are blocked on the writer's turn.
func waitForWaiters(t *testing.T, pool *sqlitePool, n int32) {
	t.Helper()
	require.Eventually(t, func() bool { return pool.batch.waiting.Load() == n }, 10*time.Second, time.Millisecond,
		"%d writers should be waiting for the writer", n)
}

func poolNames(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	var names []string
	require.NoError(t, db.Model(&poolRow{}).Order("name").Pluck("name", &names).Error)
	return names
}

// A transaction that ends while another waits for the writer is committed with it: its Commit
// returns only once the other's work is done and both are in the file; the other's rollback
// undoes only its own.
func TestSQLiteWaitingWritesShareACommit(t *testing.T) {
	for _, second := range []struct {
		name string
		err  error
		want []string
	}{{"kept", nil, []string{"first", "second"}}, {"rolled back", errors.New("the second changes its mind"), []string{"first"}}} {
		t.Run(second.name, func(t *testing.T) {
			db, pool := openSplitSQLite(t)
			first := db.Begin()
			require.NoError(t, first.Error)
			require.NoError(t, first.Exec("INSERT INTO pool_rows (name) VALUES ('first')").Error)

			running, finish := make(chan struct{}), make(chan struct{})
			secondDone := make(chan error, 1)
			go func() {
				secondDone <- db.Transaction(func(tx *gorm.DB) error {
					if err := tx.Exec("INSERT INTO pool_rows (name) VALUES ('second')").Error; err != nil {
						return err
					}
					close(running)
					<-finish
					return second.err
				})
			}()
			waitForWaiters(t, pool, 1)

			firstDone := make(chan error, 1)
			go func() { firstDone <- first.Commit().Error }()
			<-running
			select {
			case err := <-firstDone:
				t.Fatalf("the first commit returned (%v) while the second was still writing in its batch", err)
			default:
			}
			// Neither is in the file yet: a reader sees nothing.
			require.Empty(t, poolNames(t, db))

			close(finish)
			require.ErrorIs(t, <-secondDone, second.err)
			require.NoError(t, <-firstDone)
			require.Equal(t, second.want, poolNames(t, db))
		})
	}
}

// A write of its own (an Exec outside a transaction) joins the batch like a transaction, and one
// that fails leaves the others' work in.
func TestSQLiteAFailedWriteInABatchLeavesTheOthers(t *testing.T) {
	db, pool := openSplitSQLite(t)
	require.NoError(t, db.Exec("CREATE UNIQUE INDEX pool_rows_name ON pool_rows (name)").Error)
	require.NoError(t, db.Exec("INSERT INTO pool_rows (name) VALUES ('taken')").Error)

	holder := db.Begin()
	require.NoError(t, holder.Error)
	require.NoError(t, holder.Exec("INSERT INTO pool_rows (name) VALUES ('holder')").Error)
	names := []string{"a", "taken", "b"}
	errs := make(chan error, len(names))
	for i, name := range names {
		go func() { errs <- db.Exec("INSERT INTO pool_rows (name) VALUES (?)", name).Error }()
		waitForWaiters(t, pool, int32(i+1))
	}
	require.NoError(t, holder.Commit().Error)
	var failed int
	for range names {
		if err := <-errs; err != nil {
			failed++
			require.ErrorIs(t, err, gorm.ErrDuplicatedKey)
		}
	}
	require.Equal(t, 1, failed, "only the duplicate fails")
	require.Equal(t, []string{"a", "b", "holder", "taken"}, poolNames(t, db))
}

// slowInsert inserts one row after counting to three million: half a second or so of SQLite's work.
const slowInsert = `INSERT INTO pool_rows (name) SELECT 'slow' WHERE (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 3000000) SELECT count(*) FROM c) > 0`

// A member whose context ends stops at its next statement and undoes its work; the batch it was
// in commits the others, and its own statements are never interrupted halfway, which would make
// SQLite roll back the whole shared transaction.
func TestSQLiteACancelledMemberLeavesTheBatch(t *testing.T) {
	db, pool := openSplitSQLite(t)
	holder := db.Begin()
	require.NoError(t, holder.Error)
	require.NoError(t, holder.Exec("INSERT INTO pool_rows (name) VALUES ('holder')").Error)

	ctx, cancel := context.WithCancel(context.Background())
	wrote := make(chan struct{})
	cancelled := make(chan error, 1)
	go func() {
		cancelled <- db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO pool_rows (name) VALUES ('cancelled')").Error; err != nil {
				return err
			}
			close(wrote)
			// The context ends while a long statement runs: the statement finishes, the next
			// one is refused.
			stop := time.AfterFunc(50*time.Millisecond, cancel)
			defer stop.Stop()
			if err := tx.Exec(slowInsert).Error; err != nil {
				return err
			}
			return tx.Exec("INSERT INTO pool_rows (name) VALUES ('after the cancel')").Error
		})
	}()
	waitForWaiters(t, pool, 1)
	holderDone := make(chan error, 1)
	go func() { holderDone <- holder.Commit().Error }()
	<-wrote
	require.ErrorIs(t, <-cancelled, context.Canceled)
	require.NoError(t, <-holderDone)
	require.Equal(t, []string{"holder"}, poolNames(t, db))
	// The writer goes on.
	require.NoError(t, db.Exec("INSERT INTO pool_rows (name) VALUES ('next')").Error)
	require.Equal(t, []string{"holder", "next"}, poolNames(t, db))
}

// When SQLite rolls back the shared transaction (here a member ends it by hand, as an I/O error
// would), every member whose work it held is told its write failed, and none of it is stored.
func TestSQLiteABatchRolledBackFailsEveryMember(t *testing.T) {
	db, pool := openSplitSQLite(t)
	first := db.Begin()
	require.NoError(t, first.Error)
	require.NoError(t, first.Exec("INSERT INTO pool_rows (name) VALUES ('first')").Error)
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO pool_rows (name) VALUES ('second')").Error; err != nil {
				return err
			}
			return tx.Exec("ROLLBACK").Error
		})
	}()
	waitForWaiters(t, pool, 1)
	require.Error(t, first.Commit().Error, "the first's work was rolled back with the batch")
	require.Error(t, <-secondDone)
	require.Empty(t, poolNames(t, db))
	require.NoError(t, db.Exec("INSERT INTO pool_rows (name) VALUES ('next')").Error)
	require.Equal(t, []string{"next"}, poolNames(t, db))
}
