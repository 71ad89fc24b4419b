package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
)

// sqliteReaders is how many read-only connections a SQLite database gets beside its one writer:
// enough for the API's and the worker's lookups of a burst of turns to overlap, few enough that
// each stays warm (every new connection re-reads the schema).
const sqliteReaders = 4

// sqlitePool is the connection pool GORM uses for a SQLite file. SQLite takes one writer at a
// time, so every write, prepared statement and transaction goes to a single connection and
// queues in Go; in WAL mode readers neither block that writer nor wait for it and see every
// committed transaction, so plain SELECTs go to a separate pool of query-only connections
// instead of queueing behind other turns' writes. Reads inside a transaction run on its
// *sql.Tx, on the writer, and so see that transaction's own writes.
type sqlitePool struct {
	writer *sql.DB
	reader *sql.DB
}

var (
	_ gorm.ConnPool       = (*sqlitePool)(nil)
	_ gorm.TxBeginner     = (*sqlitePool)(nil)
	_ gorm.GetDBConnector = (*sqlitePool)(nil)
)

// openSQLitePool opens the writer on writerDSN and the readers on readerDSN. Closing the writer
// (what callers of gorm's DB() do) closes the readers too.
func openSQLitePool(writerDSN, readerDSN string) (*sqlitePool, error) {
	reader, err := sql.Open("sqlite3", readerDSN)
	if err != nil {
		return nil, err
	}
	reader.SetMaxOpenConns(sqliteReaders)
	// The default of two idle connections would close and reopen the other two under load.
	reader.SetMaxIdleConns(sqliteReaders)
	writer := sql.OpenDB(sqliteConnector{dsn: writerDSN, readers: reader})
	// SQLite takes one writer at a time; with several writing connections, concurrent writers
	// (fifty devices recording their commands) wait in SQLite's busy handler, which sleeps in
	// steps of up to 100 ms. One connection queues them in Go instead, in microseconds.
	writer.SetMaxOpenConns(1)
	// The writer connects first, so the file exists and is in WAL mode before GORM's version
	// check opens a reader; a reader first would create an empty file in rollback mode.
	if err := writer.Ping(); err != nil {
		_ = writer.Close()
		return nil, err
	}
	return &sqlitePool{writer: writer, reader: reader}, nil
}

func (p *sqlitePool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	// A prepared statement may be executed as a write later: it belongs to the writer.
	return p.writer.PrepareContext(ctx, query)
}

func (p *sqlitePool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.writer.ExecContext(ctx, query, args...)
}

func (p *sqlitePool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.route(query).QueryContext(ctx, query, args...)
}

func (p *sqlitePool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.route(query).QueryRowContext(ctx, query, args...)
}

func (p *sqlitePool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	return p.writer.BeginTx(ctx, opts)
}

// GetDBConn is what gorm's DB() returns: the writer, whose Close closes both pools.
func (p *sqlitePool) GetDBConn() (*sql.DB, error) { return p.writer, nil }

// Ping is gorm.Open's check that the database opens, for both pools.
func (p *sqlitePool) Ping() error {
	if err := p.writer.Ping(); err != nil {
		return err
	}
	return p.reader.Ping()
}

// route picks the readers only for a plain SELECT. GORM also sends INSERT/UPDATE/DELETE …
// RETURNING through QueryContext, and a WITH may lead into any of those, so anything else stays
// on the writer.
func (p *sqlitePool) route(query string) *sql.DB {
	if isPlainSelect(query) {
		return p.reader
	}
	return p.writer
}

func isPlainSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	if len(q) < len("SELECT ") || !strings.EqualFold(q[:len("SELECT")], "SELECT") {
		return false
	}
	switch q[len("SELECT")] {
	case ' ', '\t', '\r', '\n', '*', '(':
		return true
	}
	return false
}

// sqliteConnector opens the writer's connection as sql.Open would; it exists so that closing the
// writer *sql.DB, which database/sql does through the connector's Close, also closes the readers.
type sqliteConnector struct {
	dsn     string
	readers *sql.DB
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	return c.Driver().Open(c.dsn)
}

func (c sqliteConnector) Driver() driver.Driver { return &sqlite3.SQLiteDriver{} }

func (c sqliteConnector) Close() error { return c.readers.Close() }
