package relay

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	// The cgo SQLite driver the models already link through gorm.io/driver/sqlite.
	_ "github.com/mattn/go-sqlite3"
)

// SQLiteOptions configures OpenSQLite. Zero values select the defaults.
type SQLiteOptions struct {
	// MaxLen caps each stream; the oldest entries are dropped beyond it (a stream's
	// turn_started is kept). Default DefaultMaxLen.
	MaxLen int
	// IdleTTL is how long a stream without a terminal event lives after its last append.
	// Default DefaultIdleTTL.
	IdleTTL time.Duration
	// JanitorInterval is how often expired streams are deleted from the file. Expired streams
	// are invisible immediately either way. Default one minute.
	JanitorInterval time.Duration
	// Clock supplies the time used for IDs and expiry; tests inject one. Default time.Now.
	Clock func() time.Time
}

// SQLite is the event log of a single process that must survive that process: `serve` on its
// embedded defaults. Every event is committed to a SQLite file before Append returns, so a
// SIGKILL loses nothing that was appended, and a restarted process serves the same streams with
// the same IDs. Readers are woken in-process by appends, never by polling; that is why one
// process at a time may use a file (several processes share a log through Redis instead).
type SQLite struct {
	db      *sql.DB
	maxLen  int
	idleTTL time.Duration
	now     func() time.Time

	// stmts are the statements prepared once on the one connection: preparing each statement
	// again on every append was a tenth of serve's CPU under load.
	stmts map[string]*sql.Stmt

	mu      sync.Mutex
	waiters map[string]*sqlWaiters
	closed  bool

	// writes is the queue of the one writer goroutine (groupCommit), which commits every write
	// waiting when it gets to them in one transaction.
	writes     chan *writeReq
	writerDone chan struct{}

	// rows holds each stream's row as last committed, so that an append need not read it back
	// from the file first (a read per event, under the one connection's lock); a stream missing
	// from it is read from the file. staged holds the rows the transaction being committed
	// wrote (nil: deleted); commit moves them into rows once the transaction has committed, so
	// a batch rolled back leaves rows as the file has them. Only the writer goroutine touches
	// either.
	rows   map[string]streamRow
	staged map[string]*streamRow

	stop        chan struct{}
	janitorDone chan struct{}
}

// writeReq is one write waiting for the writer: fn runs inside the batch's transaction.
type writeReq struct {
	fn   func(tx *sql.Tx, now time.Time) error
	done chan error
}

// maxWriteBatch bounds the writes one transaction commits.
const maxWriteBatch = 128

// sqlWaiters is the wake-up channel of one stream's readers: closed by the next append.
type sqlWaiters struct {
	wake chan struct{}
	n    int
}

var _ Log = (*SQLite)(nil)

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS relay_streams (
	name      TEXT PRIMARY KEY,
	last_ms   INTEGER NOT NULL,
	last_seq  INTEGER NOT NULL,
	terminal  TEXT NOT NULL DEFAULT '',
	expire_at INTEGER NOT NULL,
	entries   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relay_events (
	stream TEXT NOT NULL,
	ms     INTEGER NOT NULL,
	seq    INTEGER NOT NULL,
	type   TEXT NOT NULL,
	data   BLOB NOT NULL,
	PRIMARY KEY (stream, ms, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relay_streams_expiry ON relay_streams (expire_at);
`

// OpenSQLite opens (creating if needed) the log in the SQLite file at path and starts its
// janitor; call Close to stop it.
func OpenSQLite(path string, opts SQLiteOptions) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("relay: no path for the SQLite event log")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("relay: creating the event log's directory: %w", err)
	}
	// WAL with synchronous=NORMAL: a commit is in the file once it returns, so a killed
	// process loses nothing; only a power cut may lose the last few commits, as Redis's default
	// fsync policy would.
	dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=10000&_txlock=immediate"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("relay: opening the event log %s: %w", path, err)
	}
	// One connection: SQLite has one writer at a time, and queueing in Go is microseconds where
	// SQLite's busy handler sleeps in steps of milliseconds.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("relay: preparing the event log %s: %w", path, err)
	}
	s := &SQLite{
		db:          db,
		maxLen:      opts.MaxLen,
		idleTTL:     opts.IdleTTL,
		now:         opts.Clock,
		waiters:     make(map[string]*sqlWaiters),
		stmts:       make(map[string]*sql.Stmt),
		rows:        make(map[string]streamRow),
		staged:      make(map[string]*streamRow),
		writes:      make(chan *writeReq),
		writerDone:  make(chan struct{}),
		stop:        make(chan struct{}),
		janitorDone: make(chan struct{}),
	}
	if err := s.prepareAll(); err != nil {
		db.Close()
		return nil, fmt.Errorf("relay: preparing the event log %s: %w", path, err)
	}
	if s.maxLen <= 0 {
		s.maxLen = DefaultMaxLen
	}
	if s.idleTTL <= 0 {
		s.idleTTL = DefaultIdleTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	interval := opts.JanitorInterval
	if interval <= 0 {
		interval = time.Minute
	}
	go s.janitor(interval)
	go s.groupCommit()
	return s, nil
}

// Close stops the janitor, wakes every waiter (they return ErrClosed) and closes the file.
// It is safe to call more than once.
func (s *SQLite) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	for name, w := range s.waiters {
		close(w.wake)
		delete(s.waiters, name)
	}
	s.mu.Unlock()
	<-s.janitorDone
	<-s.writerDone
	for _, st := range s.stmts {
		_ = st.Close()
	}
	return s.db.Close()
}

func (s *SQLite) janitor(interval time.Duration) {
	defer close(s.janitorDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			// A failed sweep is retried on the next tick; expired streams are invisible meanwhile.
			_ = s.sweep(context.Background())
		}
	}
}

// sweep deletes every stream whose expiry has passed. It is a write like an append's, so that
// the writer's rows forget the streams it deleted.
func (s *SQLite) sweep(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		ms := now.UnixMilli()
		if _, err := tx.Exec(`DELETE FROM relay_events WHERE stream IN (SELECT name FROM relay_streams WHERE expire_at <= ?)`, ms); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM relay_streams WHERE expire_at <= ?`, ms); err != nil {
			return err
		}
		// Any row kept, this batch's too, may be among what was deleted: read them from the file.
		clear(s.rows)
		clear(s.staged)
		return nil
	})
}

// maxCachedRows bounds rows: past it, the writer starts again from the file.
const maxCachedRows = 4096

// streamRow is a stream's bookkeeping row.
type streamRow struct {
	last     entryID
	terminal string
	expireAt int64
	entries  int64
}

// liveStream loads the stream's row inside tx; an expired stream is deleted there and reported
// missing, so it restarts empty as in the other logs.
func (s *SQLite) liveStream(tx *sql.Tx, name string, now int64) (*streamRow, error) {
	var r streamRow
	if staged, ok := s.staged[name]; ok {
		if staged == nil {
			return nil, nil
		}
		r = *staged
	} else if cached, ok := s.rows[name]; ok {
		r = cached
	} else {
		var lastMS, lastSeq int64
		st, err := s.prepared(tx, sqlSelectStream)
		if err != nil {
			return nil, err
		}
		err = st.QueryRow(name).
			Scan(&lastMS, &lastSeq, &r.terminal, &r.expireAt, &r.entries)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		r.last = entryID{ms: uint64(lastMS), seq: uint64(lastSeq)}
	}
	if r.expireAt <= now {
		if _, err := tx.Exec(`DELETE FROM relay_events WHERE stream = ?`, name); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`DELETE FROM relay_streams WHERE name = ?`, name); err != nil {
			return nil, err
		}
		s.staged[name] = nil
		return nil, nil
	}
	return &r, nil
}

// add appends one event inside tx and trims the stream to maxLen, keeping its turn_started so
// that a long turn's log still says what the turn is. It returns the new ID and the row as
// updated; the caller sets expire_at and terminal.
func (s *SQLite) add(tx *sql.Tx, name string, row *streamRow, now time.Time, typ string, data json.RawMessage) (entryID, *streamRow, error) {
	ms := uint64(0)
	if t := now.UnixMilli(); t > 0 {
		ms = uint64(t)
	}
	id := entryID{ms: ms}
	if row == nil {
		row = &streamRow{}
	} else if ms <= row.last.ms {
		id = entryID{ms: row.last.ms, seq: row.last.seq + 1}
	}
	insert, err := s.prepared(tx, sqlInsertEvent)
	if err != nil {
		return entryID{}, nil, err
	}
	if _, err := insert.Exec(
		name, int64(id.ms), int64(id.seq), typ, []byte(data)); err != nil {
		return entryID{}, nil, err
	}
	row.last = id
	row.entries++
	if over := row.entries - int64(s.maxLen); over > 0 {
		res, err := tx.Exec(`DELETE FROM relay_events WHERE stream = ? AND (ms, seq) IN (
			SELECT ms, seq FROM relay_events WHERE stream = ? AND type <> ? ORDER BY ms, seq LIMIT ?)`,
			name, name, TypeTurnStarted, over)
		if err != nil {
			return entryID{}, nil, err
		}
		n, _ := res.RowsAffected()
		row.entries -= n
	}
	return id, row, nil
}

func (s *SQLite) saveRow(tx *sql.Tx, name string, row *streamRow) error {
	st, err := s.prepared(tx, sqlSaveStream)
	if err != nil {
		return err
	}
	if _, err = st.Exec(
		name, int64(row.last.ms), int64(row.last.seq), row.terminal, row.expireAt, row.entries); err != nil {
		return err
	}
	saved := *row
	s.staged[name] = &saved
	return nil
}

// prepared returns the statement for query, prepared once when the log was opened (prepareAll),
// inside tx (nil: outside any). Preparing inside a transaction would wait forever for the one
// connection the transaction holds.
func (s *SQLite) prepared(tx *sql.Tx, query string) (*sql.Stmt, error) {
	st := s.stmts[query]
	if st == nil {
		return nil, fmt.Errorf("relay: statement not prepared: %.40s", query)
	}
	if tx != nil {
		return tx.Stmt(st), nil
	}
	return st, nil
}

// prepareAll prepares the hot statements; the map is read-only afterwards.
func (s *SQLite) prepareAll() error {
	for _, q := range []string{sqlSelectStream, sqlInsertEvent, sqlSaveStream, sqlRange, sqlLast} {
		st, err := s.db.Prepare(q)
		if err != nil {
			return err
		}
		s.stmts[q] = st
	}
	return nil
}

const (
	sqlSelectStream = `SELECT last_ms, last_seq, terminal, expire_at, entries FROM relay_streams WHERE name = ?`
	sqlInsertEvent  = `INSERT INTO relay_events (stream, ms, seq, type, data) VALUES (?, ?, ?, ?, ?)`
	sqlSaveStream   = `INSERT INTO relay_streams (name, last_ms, last_seq, terminal, expire_at, entries) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET last_ms = excluded.last_ms, last_seq = excluded.last_seq,
		terminal = excluded.terminal, expire_at = excluded.expire_at, entries = excluded.entries`
	sqlRange = `SELECT e.ms, e.seq, e.type, e.data FROM relay_events e
		JOIN relay_streams s ON s.name = e.stream AND s.expire_at > ?
		WHERE e.stream = ? AND (e.ms > ? OR (e.ms = ? AND e.seq > ?))
		ORDER BY e.ms, e.seq LIMIT ?`
	sqlLast = `SELECT e.ms, e.seq, e.type, e.data FROM relay_events e
		JOIN relay_streams s ON s.name = e.stream AND s.expire_at > ?
		WHERE e.stream = ? ORDER BY e.ms DESC, e.seq DESC LIMIT 1`
)

// wakeLocked wakes the stream's waiters; s.mu must be held.
func (s *SQLite) wakeLocked(name string) {
	if w := s.waiters[name]; w != nil {
		close(w.wake)
		delete(s.waiters, name)
	}
}

func (s *SQLite) wake(name string) {
	s.mu.Lock()
	s.wakeLocked(name)
	s.mu.Unlock()
}

func (s *SQLite) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Append implements Log.
func (s *SQLite) Append(ctx context.Context, stream, typ string, data json.RawMessage) (string, error) {
	if err := checkAppend(stream, typ, data); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if s.isClosed() {
		return "", ErrClosed
	}
	var id entryID
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		row, err := s.liveStream(tx, stream, now.UnixMilli())
		if err != nil {
			return err
		}
		id, row, err = s.add(tx, stream, row, now, typ, data)
		if err != nil {
			return err
		}
		if row.terminal == "" {
			row.expireAt = now.Add(s.idleTTL).UnixMilli()
		}
		return s.saveRow(tx, stream, row)
	})
	if err != nil {
		return "", fmt.Errorf("relay: append to %s: %w", stream, err)
	}
	s.wake(stream)
	return id.String(), nil
}

// AppendTerminal implements Log.
func (s *SQLite) AppendTerminal(ctx context.Context, stream, typ string, data json.RawMessage, ttl time.Duration) (string, bool, error) {
	if err := checkTerminal(stream, typ, data, ttl); err != nil {
		return "", false, err
	}
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if s.isClosed() {
		return "", false, ErrClosed
	}
	var id string
	added := false
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		added = false // a batch rolled back runs its fns again
		row, err := s.liveStream(tx, stream, now.UnixMilli())
		if err != nil {
			return err
		}
		if row != nil && row.terminal != "" {
			id = row.terminal
			return nil
		}
		eid, row, err := s.add(tx, stream, row, now, typ, data)
		if err != nil {
			return err
		}
		id, added = eid.String(), true
		row.terminal = id
		row.expireAt = now.Add(ttl).UnixMilli()
		return s.saveRow(tx, stream, row)
	})
	if err != nil {
		return "", false, fmt.Errorf("relay: append terminal event to %s: %w", stream, err)
	}
	if added {
		s.wake(stream)
	}
	return id, added, nil
}

// write runs fn in an immediate transaction and returns once it is committed. The time is read
// inside it so that IDs follow the order of commits. Writes that arrive while another commits
// wait for the writer and are then committed together, each fn in turn in one transaction (group
// commit): a burst of turns appending their first events paid one commit each, on the one
// connection, where a batch pays one. If a fn of a batch fails, the batch is rolled back and
// its writes are run again one transaction each, so one write's failure is never another's.
func (s *SQLite) write(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	// The commit must not be cut short half-way by a caller that gives up: it either happens or
	// not, and a started write is quick; so the caller waits for the writer whatever ctx says.
	req := &writeReq{fn: fn, done: make(chan error, 1)}
	select {
	case s.writes <- req:
	case <-s.stop:
		return ErrClosed
	}
	return <-req.done
}

// groupCommit is the one writer: it takes a write, and with it every write already waiting (up
// to maxWriteBatch), and commits them in one transaction. It answers every write it took and
// returns once the log is closed.
func (s *SQLite) groupCommit() {
	defer close(s.writerDone)
	batch := make([]*writeReq, 0, maxWriteBatch)
	for {
		select {
		case req := <-s.writes:
			batch = append(batch[:0], req)
		case <-s.stop:
			return
		}
	gather:
		for len(batch) < maxWriteBatch {
			select {
			case req := <-s.writes:
				batch = append(batch, req)
			default:
				break gather
			}
		}
		if len(batch) == 1 {
			batch[0].done <- s.commit(batch)
			continue
		}
		if err := s.commit(batch); err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			continue
		}
		for _, req := range batch {
			req.done <- s.commit([]*writeReq{req})
		}
	}
}

// commit runs the writes' fns in one transaction and commits it, then keeps the rows it wrote.
func (s *SQLite) commit(batch []*writeReq) error {
	clear(s.staged)
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, req := range batch {
		if err := req.fn(tx, s.now()); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if len(s.rows) >= maxCachedRows {
		clear(s.rows)
	}
	for name, row := range s.staged {
		if row == nil {
			delete(s.rows, name)
		} else {
			s.rows[name] = *row
		}
	}
	return nil
}

// Range implements Log. A limit <= 0 returns every retained event after afterID.
func (s *SQLite) Range(ctx context.Context, stream, afterID string, limit int) ([]Event, error) {
	after, err := checkRead(ctx, stream, afterID)
	if err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	return s.read(ctx, stream, after, limit)
}

func (s *SQLite) read(ctx context.Context, stream string, after entryID, limit int) ([]Event, error) {
	if after.ms > math.MaxInt64 {
		return nil, nil // no ID can follow: event times fit in an int64
	}
	seq := int64(math.MaxInt64)
	if after.seq < math.MaxInt64 {
		seq = int64(after.seq)
	}
	if limit <= 0 {
		limit = -1 // SQLite's "no limit"
	}
	st, err := s.prepared(nil, sqlRange)
	if err != nil {
		return nil, fmt.Errorf("relay: range %s: %w", stream, err)
	}
	rows, err := st.QueryContext(ctx,
		s.now().UnixMilli(), stream, int64(after.ms), int64(after.ms), seq, limit)
	if err != nil {
		return nil, fmt.Errorf("relay: range %s: %w", stream, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("relay: range %s: %w", stream, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("relay: range %s: %w", stream, err)
	}
	return out, nil
}

// Wait implements Log. It returns at most 1000 events; a timeout <= 0 only checks once. Waiting on
// a stream that does not exist yet is allowed: the first append wakes the waiter.
func (s *SQLite) Wait(ctx context.Context, stream, afterID string, timeout time.Duration) ([]Event, error) {
	after, err := checkRead(ctx, stream, afterID)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return s.Range(ctx, stream, afterID, waitBatch)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		// Registering before reading means an append between the read and the select still
		// wakes this waiter.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		w := s.waiters[stream]
		if w == nil {
			w = &sqlWaiters{wake: make(chan struct{})}
			s.waiters[stream] = w
		}
		w.n++
		s.mu.Unlock()

		evs, err := s.read(ctx, stream, after, waitBatch)
		var done bool
		if err != nil || len(evs) > 0 {
			done = true
		} else {
			select {
			case <-w.wake:
			case <-timer.C:
				done = true
			case <-ctx.Done():
				done, err = true, ctx.Err()
			}
		}

		s.mu.Lock()
		w.n--
		if w.n == 0 && s.waiters[stream] == w {
			delete(s.waiters, stream)
		}
		closed := s.closed
		s.mu.Unlock()
		if closed && !done {
			return nil, ErrClosed
		}
		if done {
			return evs, err
		}
	}
}

// Exists implements Log.
func (s *SQLite) Exists(ctx context.Context, stream string) (bool, error) {
	if err := checkStream(stream); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if s.isClosed() {
		return false, ErrClosed
	}
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT entries FROM relay_streams WHERE name = ? AND expire_at > ?`,
		stream, s.now().UnixMilli()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("relay: exists %s: %w", stream, err)
	}
	return n > 0, nil
}

// Last implements Log.
func (s *SQLite) Last(ctx context.Context, stream string) (Event, bool, error) {
	if err := checkStream(stream); err != nil {
		return Event{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Event{}, false, err
	}
	if s.isClosed() {
		return Event{}, false, ErrClosed
	}
	st, err := s.prepared(nil, sqlLast)
	if err != nil {
		return Event{}, false, fmt.Errorf("relay: last event of %s: %w", stream, err)
	}
	ev, err := scanEvent(st.QueryRowContext(ctx, s.now().UnixMilli(), stream))
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("relay: last event of %s: %w", stream, err)
	}
	return ev, true, nil
}

// scanEvent reads one event from a row of sqlRange or sqlLast (ms, seq, type, data).
func scanEvent(row interface{ Scan(...any) error }) (Event, error) {
	var ms, seq int64
	var ev Event
	var data []byte
	if err := row.Scan(&ms, &seq, &ev.Type, &data); err != nil {
		return Event{}, err
	}
	ev.ID = entryID{ms: uint64(ms), seq: uint64(seq)}.String()
	ev.Data = json.RawMessage(data)
	return ev, nil
}
