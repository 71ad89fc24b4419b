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
