// Package sqlstmt runs SQL written by hand on the connection pool of a *gorm.DB, for the rows
// every chat turn reads and writes (issue 36). GORM builds each statement anew from its model
// on every call (reflection, clauses, a statement clone and its scan), which in a burst of
// turns was a seventh of serve's CPU and a third of what it allocated, while these texts never
// change. A Statement runs on the pool GORM holds, so on SQLite it takes that pool's prepared
// statements, its writer and its readers, and inside a GORM Transaction it runs in that
// transaction. Errors come back as GORM translates them (a duplicate key is
// gorm.ErrDuplicatedKey), and a row that is not there as sql.ErrNoRows.
package sqlstmt

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// Statement is one text, written with ? placeholders, and the same with PostgreSQL's $1, $2, ….
type Statement struct{ text, pg string }

// New prepares text for both databases. The texts are the program's own, with no ? inside a
// string literal.
func New(text string) Statement {
	var b strings.Builder
	n := 0
	for _, r := range text {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return Statement{text: text, pg: b.String()}
}

// Text is the statement as db's database takes it.
func (s Statement) Text(db *gorm.DB) string {
	if db.Dialector.Name() == "postgres" {
		return s.pg
	}
	return s.text
}

// Exec runs s on db: a *gorm.DB, or the tx of a Transaction, in which it then runs.
func (s Statement) Exec(ctx context.Context, db *gorm.DB, args ...any) (sql.Result, error) {
	res, err := db.Statement.ConnPool.ExecContext(ctx, s.Text(db), args...)
	return res, translated(db, err)
}

// Query runs s on db and returns its rows, which the caller closes.
func (s Statement) Query(ctx context.Context, db *gorm.DB, args ...any) (*sql.Rows, error) {
	rows, err := db.Statement.ConnPool.QueryContext(ctx, s.Text(db), args...)
	return rows, translated(db, err)
}

// Row runs s on db and scans its first row into dest: sql.ErrNoRows when there is none.
func (s Statement) Row(ctx context.Context, db *gorm.DB, args []any, dest ...any) error {
	err := db.Statement.ConnPool.QueryRowContext(ctx, s.Text(db), args...).Scan(dest...)
	if err == sql.ErrNoRows {
		return err
	}
	return translated(db, err)
}

func translated(db *gorm.DB, err error) error {
	if err == nil {
		return nil
	}
	if t, ok := db.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}
