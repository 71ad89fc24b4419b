package sqlstmt_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/sqlstmt"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
)

func TestPlaceholdersAreNumberedForPostgres(t *testing.T) {
	pg := &gorm.DB{Config: &gorm.Config{Dialector: postgres.Open("")}}
	lite := &gorm.DB{Config: &gorm.Config{Dialector: sqlite.Open("")}}
	s := sqlstmt.New("UPDATE t SET a = ?, b = ? WHERE id = ? AND c = 'x'")
	require.Equal(t, "UPDATE t SET a = $1, b = $2 WHERE id = $3 AND c = 'x'", s.Text(pg))
	require.Equal(t, "UPDATE t SET a = ?, b = ? WHERE id = ? AND c = 'x'", s.Text(lite))
}

// On both databases a statement runs on the pool outside a transaction and in the transaction
// inside one, says a missing row as sql.ErrNoRows and a duplicate key as GORM does.
func TestStatementsRunOnEitherDatabase(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) *gorm.DB{
		"sqlite":   func(t *testing.T) *gorm.DB { return testdb.SQLiteWith(t, models.Open) },
		"postgres": func(t *testing.T) *gorm.DB { return testdb.PostgresWith(t, models.Open) },
	} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			require.NoError(t, db.Exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)").Error)
			insert := sqlstmt.New("INSERT INTO kv (k, v) VALUES (?, ?)")
			get := sqlstmt.New("SELECT v FROM kv WHERE k = ?")
			res, err := insert.Exec(ctx, db, "a", 1)
			require.NoError(t, err)
			n, err := res.RowsAffected()
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			_, err = insert.Exec(ctx, db, "a", 2)
			require.ErrorIs(t, err, gorm.ErrDuplicatedKey)

			var v int
			require.NoError(t, get.Row(ctx, db, []any{"a"}, &v))
			require.Equal(t, 1, v)
			require.ErrorIs(t, get.Row(ctx, db, []any{"missing"}, &v), sql.ErrNoRows)

			// In a transaction that is rolled back, the statement's write goes with it, and the
			// transaction reads its own write.
			rollback := errors.New("roll back")
			err = db.Transaction(func(tx *gorm.DB) error {
				if _, err := insert.Exec(ctx, tx, "b", 3); err != nil {
					return err
				}
				var got int
				if err := get.Row(ctx, tx, []any{"b"}, &got); err != nil || got != 3 {
					t.Errorf("inside the transaction: %d, %v", got, err)
				}
				return rollback
			})
			require.ErrorIs(t, err, rollback)
			require.ErrorIs(t, get.Row(ctx, db, []any{"b"}, &v), sql.ErrNoRows)

			rows, err := sqlstmt.New("SELECT k FROM kv ORDER BY k").Query(ctx, db)
			require.NoError(t, err)
			var keys []string
			for rows.Next() {
				var k string
				require.NoError(t, rows.Scan(&k))
				keys = append(keys, k)
			}
			require.NoError(t, rows.Close())
			require.Equal(t, []string{"a"}, keys)
		})
	}
}
