package models

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// maxBatchMembers bounds how many transactions share one commit, and so how long the first of
// them waits for it: each member's work is a few statements, so the first waits a few
// milliseconds at most.
const maxBatchMembers = 32

// writeBatcher commits the writes of concurrent turns together on SQLite's one writer (issue 36).
// Every commit writes each page its transaction changed into the WAL whole, with the file's
// locks taken and released around it; a class starting 100 chats at once made 100 commits of
// the same index pages in a row. Here a transaction that ends while others wait for the writer
// leaves its work in an open transaction for the next one instead of committing it, and the
// last one commits them all: in BenchmarkTurnRowsConcurrent half the WAL pages a turn. A write
// that finds the writer free and nobody waiting runs as it did before.
//
// Members run one at a time (the writer is one connection, as before); each after a batch's
// first runs inside a savepoint, so that its Rollback undoes only its own work. A Commit returns
// once the shared transaction has committed, with that commit's error, so a caller told its
// write succeeded has it in the file, as before. When SQLite rolls the whole transaction back
// (an I/O error, a full disk), every member whose work it held is told its write failed, and
// none of it is stored.
type writeBatcher struct {
	db *sql.DB
	// savepoint, release and rollbackTo are the members' statements, prepared once on db.
	savepoint, release, rollbackTo *sql.Stmt
	// turn is held by the member running now, from its begin to its commit or rollback; whoever
	// holds it either hands the open batch to a waiting member or ends the batch.
	turn sync.Mutex
	// waiting counts the members blocked on turn.
	waiting atomic.Int32
	// cur is the open batch; only turn's holder touches it.
	cur *writeBatch
}

// writeBatch is one shared transaction and what its members wait for.
type writeBatch struct {
	tx *sql.Tx
	// joined counts the members that ran in it; holdsWork is whether one of them kept its work.
	joined    int
	holdsWork bool
	done      chan struct{}
	err       error
}

// memberSavepoint is every member's savepoint: members run one after another, each releasing
// its savepoint before the next begins, so one name serves all.
const memberSavepoint = "copilot_batch_member"

func newWriteBatcher(db *sql.DB) (*writeBatcher, error) {
	w := &writeBatcher{db: db}
	for _, p := range []struct {
		st   **sql.Stmt
		text string
	}{{&w.savepoint, "SAVEPOINT " + memberSavepoint}, {&w.release, "RELEASE " + memberSavepoint}, {&w.rollbackTo, "ROLLBACK TO " + memberSavepoint}} {
		st, err := db.Prepare(p.text)
		if err != nil {
			return nil, err
		}
		*p.st = st
	}
	return w, nil
}

// run executes one of the members' statements in b's transaction.
func (b *writeBatch) run(st *sql.Stmt) error {
	_, err := b.tx.Stmt(st).Exec()
	return err
}

// begin waits for the writer and starts a member in the open batch, or a new batch with the
// member as its first. The first needs no savepoint: no other member joins before it ends.
func (w *writeBatcher) begin(ctx context.Context) (b *writeBatch, first bool, err error) {
	w.acquire()
	return w.join(ctx)
}

// join is begin for the turn's holder.
func (w *writeBatcher) join(ctx context.Context) (b *writeBatch, first bool, err error) {
	if err := ctx.Err(); err != nil {
		w.handOff()
		return nil, false, err
	}
	if w.cur == nil {
		if b, err = w.open(); err != nil {
			w.handOff()
			return nil, false, err
		}
		b.joined++
		return b, true, nil
	}
	b = w.cur
	if err := b.run(w.savepoint); err != nil {
		w.discard(b, err)
		w.handOff()
		return nil, false, err
	}
	b.joined++
	return b, false, nil
}

func (w *writeBatcher) acquire() {
	w.waiting.Add(1)
	w.turn.Lock()
	w.waiting.Add(-1)
}

// open starts the shared transaction. It outlives every member's context: one member's
// cancelled request must not roll back the others' work.
func (w *writeBatcher) open() (*writeBatch, error) {
	tx, err := w.db.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	w.cur = &writeBatch{tx: tx, done: make(chan struct{})}
	return w.cur, nil
}

// alone reports, to the turn's holder, whether a write of its own may run by itself in
// SQLite's autocommit: no batch is open and nobody waits to join one. It then runs as before
// batches, without the BEGIN and COMMIT around it.
func (w *writeBatcher) alone() bool { return w.cur == nil && w.waiting.Load() == 0 }

// end closes the running member: its work kept (commit) or undone. A kept member waits for the
// batch's commit and returns its error.
func (w *writeBatcher) end(b *writeBatch, first, commit bool) error {
	var err error
	if first {
		if !commit {
			// The batch holds nothing but this member's work.
			w.discard(b, nil)
		}
	} else {
		if !commit {
			err = b.run(w.rollbackTo)
		}
		if err == nil {
			err = b.run(w.release)
		}
	}
	if err != nil {
		// The savepoint is gone only when SQLite rolled the whole transaction back (an I/O
		// error, a full disk): every member's work went with it.
		w.discard(b, fmt.Errorf("the database rolled back a batch of writes: %w", err))
	} else if commit {
		b.holdsWork = true
	}
	w.handOff()
	if !commit {
		return nil
	}
	<-b.done
	return b.err
}

// handOff is the turn's holder leaving: the open batch goes to a waiting member, or is ended
// when none waits or it is full.
func (w *writeBatcher) handOff() {
	b := w.cur
	if b != nil && (w.waiting.Load() == 0 || b.joined >= maxBatchMembers) {
		if b.holdsWork {
			b.err = b.tx.Commit()
		} else {
			_ = b.tx.Rollback()
		}
		w.cur = nil
		close(b.done)
	}
	w.turn.Unlock()
}

// discard rolls b back and ends it with err for every member that kept its work in it; the
// turn's holder calls it.
func (w *writeBatcher) discard(b *writeBatch, err error) {
	_ = b.tx.Rollback()
	b.err = err
	if w.cur == b {
		w.cur = nil
	}
	close(b.done)
}
