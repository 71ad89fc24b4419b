package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Issue 36: writes that arrive together are committed together, and one that fails fails alone.
func TestSQLiteGroupCommitIsolatesAFailedWrite(t *testing.T) {
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "events.db"), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	boom := errors.New("boom")
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%17 == 5 {
				errs[i] = s.write(ctx, func(tx *sql.Tx, now time.Time) error {
					if _, err := tx.Exec(`INSERT INTO relay_events (stream, ms, seq, type, data) VALUES ('x', 1, ?, 't', '{}')`, i); err != nil {
						return err
					}
					return boom
				})
				return
			}
			_, errs[i] = s.Append(ctx, fmt.Sprintf("turn-%d", i%7), "content", []byte(`{"i":1}`))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%17 == 5 {
			if !errors.Is(err, boom) {
				t.Errorf("write %d: %v, want boom", i, err)
			}
		} else if err != nil {
			t.Errorf("append %d: %v", i, err)
		}
	}
	var leaked int
	if err := s.db.QueryRow(`SELECT count(*) FROM relay_events WHERE stream = 'x'`).Scan(&leaked); err != nil || leaked != 0 {
		t.Errorf("a failed write's rows: %d, %v", leaked, err)
	}
	total := 0
	for k := range 7 {
		evs, err := s.Range(ctx, fmt.Sprintf("turn-%d", k), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j < len(evs); j++ {
			if !(parseOrZero(evs[j-1].ID).less(parseOrZero(evs[j].ID))) {
				t.Errorf("turn-%d: ids out of order: %s then %s", k, evs[j-1].ID, evs[j].ID)
			}
		}
		total += len(evs)
	}
	if want := n - (n+11)/17; total != want {
		t.Errorf("%d events appended, want %d", total, want)
	}
	// The rows the writer keeps are the file's, whichever batches were rolled back.
	for k := range 7 {
		name := fmt.Sprintf("turn-%d", k)
		if err := s.write(ctx, func(tx *sql.Tx, _ time.Time) error {
			assertRowAsInFile(t, tx, name, s.rows[name])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "turn-0", "content", []byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
}

func parseOrZero(id string) entryID {
	e, _ := parseAfterID(id)
	return e
}

// assertRowAsInFile fails t unless the stream's row in the file is cached.
func assertRowAsInFile(t *testing.T, tx *sql.Tx, name string, cached streamRow) {
	t.Helper()
	var f streamRow
	var ms, seq int64
	if err := tx.QueryRow(sqlSelectStream, name).Scan(&ms, &seq, &f.terminal, &f.expireAt, &f.entries); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f.last = entryID{ms: uint64(ms), seq: uint64(seq)}
	if f != cached {
		t.Errorf("%s: the writer keeps %+v, the file has %+v", name, cached, f)
	}
}

// A stream the janitor swept starts again empty, though the writer had its row, even when the
// wall clock then steps back before the stream's expiry (as a time sync may set it): the sweep
// makes the writer forget the rows it keeps and read the file.
func TestSQLiteSweptStreamStartsAgain(t *testing.T) {
	var mu sync.Mutex
	now := time.UnixMilli(1_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, err := OpenSQLite(filepath.Join(t.TempDir(), "events.db"), SQLiteOptions{IdleTTL: time.Second, JanitorInterval: time.Hour, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for range 3 {
		if _, err := s.Append(ctx, "turn", "content", []byte(`{"old":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	advance(2 * time.Second)
	if err := s.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	advance(-2 * time.Second)
	if _, err := s.Append(ctx, "turn", "content", []byte(`{"new":true}`)); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Range(ctx, "turn", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || string(evs[0].Data) != `{"new":true}` {
		t.Fatalf("after the sweep the stream holds %+v, want the new event alone", evs)
	}
	if err := s.write(ctx, func(tx *sql.Tx, _ time.Time) error {
		if got := s.rows["turn"].entries; got != 1 {
			t.Errorf("the writer counts %d entries, want 1", got)
		}
		assertRowAsInFile(t, tx, "turn", s.rows["turn"])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
