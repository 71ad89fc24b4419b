package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/relay/relaytest"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testclock"
)

func openSQLite(t testing.TB, path string, opts relay.SQLiteOptions) *relay.SQLite {
	t.Helper()
	s, err := relay.OpenSQLite(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSQLiteConformance(t *testing.T) {
	relaytest.Run(t, func(t testing.TB, cfg relaytest.Config) relaytest.Subject {
		clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
		s := openSQLite(t, filepath.Join(t.TempDir(), "events.db"),
			relay.SQLiteOptions{MaxLen: cfg.MaxLen, IdleTTL: cfg.IdleTTL, Clock: clock.Now})
		return relaytest.Subject{Log: s, Elapse: clock.Advance}
	})
}

// The suite again on the real clock, so IDs also move through real milliseconds.
func TestSQLiteConformanceRealClock(t *testing.T) {
	relaytest.Run(t, func(t testing.TB, cfg relaytest.Config) relaytest.Subject {
		s := openSQLite(t, filepath.Join(t.TempDir(), "events.db"), relay.SQLiteOptions{MaxLen: cfg.MaxLen, IdleTTL: cfg.IdleTTL})
		return relaytest.Subject{Log: s}
	})
}

// What a killed process appended is there for the next one, which goes on with later IDs and
// still ends the stream only once.
func TestSQLiteSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	ctx := context.Background()
	first, err := relay.OpenSQLite(path, relay.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		id, err := first.Append(ctx, "turn", relay.TypeContent, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// No Close: the file is all a SIGKILL leaves behind, and WAL commits are in it already.
	second := openSQLite(t, path, relay.SQLiteOptions{})
	evs, err := second.Range(ctx, "turn", ids[0], 0)
	if err != nil || len(evs) != 2 || evs[0].ID != ids[1] || evs[1].ID != ids[2] || string(evs[1].Data) != `{"n":2}` {
		t.Fatalf("after reopening, Range after the first event = %v, %v", evs, err)
	}
	waited := make(chan []relay.Event, 1)
	go func() {
		evs, _ := second.Wait(ctx, "turn", ids[2], time.Minute)
		waited <- evs
	}()
	id, added, err := second.AppendTerminal(ctx, "turn", relay.TypeDone, json.RawMessage(`{"type":"done"}`), time.Hour)
	if err != nil || !added {
		t.Fatalf("AppendTerminal after reopening = %v, %v", added, err)
	}
	if !after(t, id, ids[2]) {
		t.Fatalf("terminal ID %s does not follow %s from before the restart", id, ids[2])
	}
	select {
	case evs := <-waited:
		if len(evs) != 1 || evs[0].ID != id {
			t.Fatalf("waiter got %v, want the terminal %s", evs, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal event did not wake the waiter")
	}
	if _, added, _ := second.AppendTerminal(ctx, "turn", relay.TypeDone, json.RawMessage(`{}`), time.Hour); added {
		t.Fatal("a second terminal event was added")
	}
	_ = first.Close()
}

func after(t *testing.T, a, b string) bool {
	t.Helper()
	var am, as, bm, bs uint64
	if _, err := fmt.Sscanf(a, "%d-%d", &am, &as); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(b, "%d-%d", &bm, &bs); err != nil {
		t.Fatal(err)
	}
	return am > bm || (am == bm && as > bs)
}

func BenchmarkSQLiteAppend(b *testing.B) {
	relaytest.BenchmarkAppend(b, openSQLite(b, filepath.Join(b.TempDir(), "events.db"), relay.SQLiteOptions{}))
}

func BenchmarkSQLiteRoundTrip(b *testing.B) {
	relaytest.BenchmarkRoundTrip(b, openSQLite(b, filepath.Join(b.TempDir(), "events.db"), relay.SQLiteOptions{}))
}
