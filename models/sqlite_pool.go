package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"

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
//
// Each pool keeps its statements prepared (stmtCache): GORM sends every query as text, and
// mattn's driver prepares text again on every call, which in a burst of turns was a tenth of
// serve's CPU (issue 36).
type sqlitePool struct {
	writer, reader           *sql.DB
	writerStmts, readerStmts *stmtCache
	// batch is how every transaction and write runs on the writer: concurrent ones committed
	// together (sqlite_batch.go).
	batch *writeBatcher
}

var (
	_ gorm.ConnPool         = (*sqlitePool)(nil)
	_ gorm.ConnPoolBeginner = (*sqlitePool)(nil)
	_ gorm.GetDBConnector   = (*sqlitePool)(nil)
	_ gorm.TxCommitter      = (*sqliteTx)(nil)
	_ gorm.GetDBConnector   = (*sqliteTx)(nil)
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
	batch, err := newWriteBatcher(writer)
	if err != nil {
		_ = writer.Close()
		return nil, err
	}
	return &sqlitePool{writer: writer, reader: reader, writerStmts: newStmtCache(writer), readerStmts: newStmtCache(reader), batch: batch}, nil
}

func (p *sqlitePool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	// A prepared statement may be executed as a write later: it belongs to the writer.
	return p.writer.PrepareContext(ctx, query)
}

// ExecContext runs a write of its own: by itself when the writer is free, else as a
// transaction of one statement committed with the writes beside it.
func (p *sqlitePool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if returnsRows(query) {
		return p.writer.ExecContext(ctx, query, args...)
	}
	p.batch.acquire()
	if p.batch.alone() {
		defer p.batch.turn.Unlock()
		if st := p.writerStmts.get(ctx, query); st != nil {
			return st.ExecContext(ctx, args...)
		}
		return p.writer.ExecContext(ctx, query, args...)
	}
	t, err := p.member(p.batch.join(ctx))
	if err != nil {
		return nil, err
	}
	res, err := t.ExecContext(ctx, query, args...)
	if err != nil {
		_ = t.Rollback()
		return nil, err
	}
	if err := t.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

func (p *sqlitePool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	db, stmts := p.route(query)
	if st := stmts.get(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.QueryContext(ctx, query, args...)
}

func (p *sqlitePool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	db, stmts := p.route(query)
	if st := stmts.get(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.QueryRowContext(ctx, query, args...)
}

// BeginTx starts a transaction on the writer whose statements are the writer's prepared ones: a
// member of the writer's batch. SQLite's transactions are serializable whatever opts asks.
func (p *sqlitePool) BeginTx(ctx context.Context, _ *sql.TxOptions) (gorm.ConnPool, error) {
	return p.begin(ctx)
}

func (p *sqlitePool) begin(ctx context.Context) (*sqliteTx, error) {
	return p.member(p.batch.begin(ctx))
}

func (p *sqlitePool) member(b *writeBatch, first bool, err error) (*sqliteTx, error) {
	if err != nil {
		return nil, err
	}
	return &sqliteTx{Tx: b.tx, pool: p, batch: b, first: first}, nil
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
func (p *sqlitePool) route(query string) (*sql.DB, *stmtCache) {
	if isPlainSelect(query) {
		return p.reader, p.readerStmts
	}
	return p.writer, p.writerStmts
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

// sqliteTx is a transaction of the pool's writer. A statement the writer has prepared is
// reused on the transaction's connection, which is the writer's one connection (Tx.StmtContext).
// It prepares nothing new for the cache while it runs: that takes a connection of the writer,
// whose only one the transaction holds. A text first seen in a transaction runs as text, and is
// prepared for the next ones once the transaction has ended.
//
// Its statements do not run under the caller's context: mattn's driver interrupts a statement
// whose context ends, and SQLite then rolls back the whole transaction, which holds the batch's
// other members' work too. A context that has ended stops the member's next statement instead.
type sqliteTx struct {
	*sql.Tx
	pool  *sqlitePool
	batch *writeBatch
	first bool // the batch's first member, which needs no savepoint
	ended bool
	seen  []string // texts that ran unprepared
}

func (t *sqliteTx) stmt(query string) *sql.Stmt {
	st := t.pool.writerStmts.cached(query)
	if st == nil {
		t.seen = append(t.seen, query)
		return nil
	}
	return t.Stmt(st)
}

// Commit keeps the member's work and returns once the batch holding it has committed. GORM
// rolls back after a failed commit: nothing is left to undo by then.
func (t *sqliteTx) Commit() error {
	if t.ended {
		return sql.ErrTxDone
	}
	t.ended = true
	err := t.pool.batch.end(t.batch, t.first, true)
	t.learn()
	return err
}

func (t *sqliteTx) Rollback() error {
	if t.ended {
		return sql.ErrTxDone
	}
	t.ended = true
	err := t.pool.batch.end(t.batch, t.first, false)
	t.learn()
	return err
}

// learn prepares the texts that ran unprepared, once the member has left the writer (preparing
// takes the writer's connection, which the batch holds); a batch begun since may hold it, and
// then this waits for that batch's end.
func (t *sqliteTx) learn() {
	for _, q := range t.seen {
		t.pool.writerStmts.get(context.Background(), q)
	}
	t.seen = nil
}

func (t *sqliteTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if returnsRows(query) {
		return t.Tx.ExecContext(ctx, query, args...)
	}
	if st := t.stmt(query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *sqliteTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if st := t.stmt(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *sqliteTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if ctx.Err() != nil {
		// database/sql answers an ended context with its error before the driver sees it.
		return t.Tx.QueryRowContext(ctx, query, args...)
	}
	ctx = context.WithoutCancel(ctx)
	if st := t.stmt(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// GetDBConn is what gorm's DB() returns inside a transaction: the writer, as outside one.
func (t *sqliteTx) GetDBConn() (*sql.DB, error) { return t.pool.writer, nil }

// maxCachedStatements bounds how many query texts a pool keeps prepared. The copilot's own
// queries are a few dozen; texts that vary without end (an IN list of every length) would
// otherwise keep a prepared statement on every connection each. Once full, a new text runs
// unprepared as before; nothing is evicted, because a statement handed out may be running.
const maxCachedStatements = 256

// stmtCache keeps one *sql.Stmt per query text of a *sql.DB; database/sql prepares it once on
// each connection that runs it.
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

// cached returns the query's prepared statement if there is one.
func (c *stmtCache) cached(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// get returns the query's prepared statement, preparing it on first use; nil when the cache is
// full, the text holds more than one statement or does not prepare (the caller then runs it as
// text, and gets its error).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	if !singleStatement(query) {
		return nil
	}
	c.mu.Lock()
	st, full := c.stmts[query], len(c.stmts) >= maxCachedStatements
	c.mu.Unlock()
	if st != nil || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.stmts[query]; prev != nil {
		_ = st.Close()
		return prev
	}
	if len(c.stmts) >= maxCachedStatements {
		_ = st.Close()
		return nil
	}
	c.stmts[query] = st
	return st
}

// returnsRows reports whether a text may answer with rows: a SELECT, a WITH, a PRAGMA, or a write
// with RETURNING. Run as an Exec, mattn's driver steps such a statement to its first row and
// leaves it there until its next run resets it; a prepared one kept in the cache would hold the
// writer's read open, and every later COMMIT on it would fail with "SQL statements in
// progress". As text, the statement is finalized at once. A write that merely mentions one of
// these words also runs as text, which only costs it the cache.
func returnsRows(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, lead := range []string{"SELECT", "WITH", "PRAGMA", "VALUES", "EXPLAIN"} {
		if len(q) >= len(lead) && strings.EqualFold(q[:len(lead)], lead) {
			return true
		}
	}
	return strings.Contains(strings.ToUpper(query), "RETURNING")
}

// singleStatement reports whether a text is one statement: a prepared statement runs only the
// first of several (mattn's driver keeps the rest unrun), where the same text run as text runs
// them all. A ';' inside a string literal also counts, which only costs that text the cache.
func singleStatement(query string) bool {
	return !strings.Contains(strings.TrimRight(query, " \t\r\n;"), ";")
}
