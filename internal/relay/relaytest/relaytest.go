// Package relaytest is the conformance suite every relay.Log implementation must pass, plus the
// benchmarks that compare them. The in-process log and the Redis Streams log run the same suite so
// that a deployment can switch between them without the API noticing.
package relaytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// Config is what the suite asks of a log it needs built.
type Config struct {
	// MaxLen is the per-stream cap the log must be built with.
	MaxLen int
	// IdleTTL is the safety-net expiry of streams without a terminal event.
	IdleTTL time.Duration
}

// Subject is a log built for one subtest, with the hooks the suite needs to check expiry.
type Subject struct {
	Log relay.Log
	// TrimSlack is how many entries beyond MaxLen a stream may keep (approximate trimming).
	TrimSlack int
	// Elapse lets d pass as far as the log's expiry is concerned, by advancing an injected clock.
	// Nil means the log runs on real time: the suite then uses short TTLs and waits for expiry.
	Elapse func(d time.Duration)
	// TTL reports the remaining lifetime the backend has set on a stream (negative: none). Nil if
	// the backend cannot tell.
	TTL func(stream string) (time.Duration, error)
}

// Factory builds a fresh, empty log for one subtest; it registers its own cleanup on t.
type Factory func(t testing.TB, cfg Config) Subject

// awaitLimit bounds every wait for something that should happen promptly. It is generous so a
// loaded CI machine does not flake; a broken log fails by hanging until it.
const awaitLimit = 10 * time.Second

// Run runs the conformance suite against logs made by newLog.
func Run(t *testing.T, newLog Factory) {
	std := func(t testing.TB) Subject {
		return newLog(t, Config{MaxLen: 100000, IdleTTL: time.Hour})
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, newLog Factory, std func(testing.TB) Subject)
	}{
		{"OrderAndContent", testOrderAndContent},
		{"RangeAfterAndLimit", testRangeAfterAndLimit},
		{"StartCursors", testStartCursors},
		{"InvalidIDs", testInvalidIDs},
		{"BadInput", testBadInput},
		{"UnknownStream", testUnknownStream},
		{"InputIsCopied", testInputIsCopied},
		{"StreamsAreSeparate", testStreamsAreSeparate},
		{"WaitReturnsBacklog", testWaitReturnsBacklog},
		{"WaitWakesOnAppend", testWaitWakesOnAppend},
		{"WaitWakesOnFirstAppendOfNewStream", testWaitWakesOnNewStream},
		{"WaitWakesEveryWaiter", testWaitWakesEveryWaiter},
		{"WaitTimeout", testWaitTimeout},
		{"WaitContextCancel", testWaitContextCancel},
		{"AppendTerminalOnce", testAppendTerminalOnce},
		{"AppendTerminalConcurrent", testAppendTerminalConcurrent},
		{"AppendAfterTerminal", testAppendAfterTerminal},
		{"ExpiryAfterTerminal", testExpiryAfterTerminal},
		{"IdleExpiry", testIdleExpiry},
		{"MaxLen", testMaxLen},
		{"TrimKeepsTurnStarted", testTrimKeepsTurnStarted},
		{"ConcurrentWritersAndReaders", testConcurrentWritersAndReaders},
		{"LargePayload", testLargePayload},
		{"Last", testLast},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newLog, std) })
	}
}

// ---- helpers -----------------------------------------------------------------------------------

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*awaitLimit)
	t.Cleanup(cancel)
	return ctx
}

// streamName is unique per subtest so a shared backend never mixes subtests.
func streamName(t testing.TB, suffix string) string {
	return strings.NewReplacer("/", ".", " ", "_").Replace(t.Name()) + "." + suffix
}

func payload(typ string, n int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": typ, "content": fmt.Sprintf("delta-%d", n)})
	return b
}

func parseID(t testing.TB, id string) [2]uint64 {
	t.Helper()
	ms, seq, ok := strings.Cut(id, "-")
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("ID %q is not of the form <ms>-<seq>", id)
	}
	return [2]uint64{a, b}
}

func idLess(t testing.TB, a, b string) bool {
	x, y := parseID(t, a), parseID(t, b)
	return x[0] < y[0] || (x[0] == y[0] && x[1] < y[1])
}

func mustAppend(t testing.TB, l relay.Log, stream, typ string, data json.RawMessage) string {
	t.Helper()
	id, err := l.Append(ctxT(t), stream, typ, data)
	if err != nil {
		t.Fatalf("Append(%s): %v", stream, err)
	}
	return id
}

func mustRange(t testing.TB, l relay.Log, stream, after string, limit int) []relay.Event {
	t.Helper()
	evs, err := l.Range(ctxT(t), stream, after, limit)
	if err != nil {
		t.Fatalf("Range(%s, %q, %d): %v", stream, after, limit, err)
	}
	return evs
}

func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(awaitLimit)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v", what, awaitLimit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type waitResult struct {
	evs []relay.Event
	err error
}

func goWait(ctx context.Context, l relay.Log, stream, after string, timeout time.Duration) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		evs, err := l.Wait(ctx, stream, after, timeout)
		ch <- waitResult{evs, err}
	}()
	return ch
}

func recv(t testing.TB, ch <-chan waitResult, what string) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(awaitLimit):
		t.Fatalf("%s: Wait did not return within %v", what, awaitLimit)
		return waitResult{}
	}
}

// ---- tests -------------------------------------------------------------------------------------

func testOrderAndContent(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	const n = 500 // enough that many land in the same millisecond
	ids := make([]string, n)
	for i := range n {
		ids[i] = mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
	}
	evs := mustRange(t, l, stream, "", 0)
	if len(evs) != n {
		t.Fatalf("Range returned %d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		if ev.ID != ids[i] {
			t.Fatalf("event %d has ID %s, Append returned %s", i, ev.ID, ids[i])
		}
		if i > 0 && !idLess(t, evs[i-1].ID, ev.ID) {
			t.Fatalf("IDs not strictly increasing: %s then %s", evs[i-1].ID, ev.ID)
		}
		if ev.Type != relay.TypeContent || string(ev.Data) != string(payload(relay.TypeContent, i)) {
			t.Fatalf("event %d = %s %s, want content %s", i, ev.Type, ev.Data, payload(relay.TypeContent, i))
		}
	}
}

func testRangeAfterAndLimit(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	var ids []string
	for i := range 20 {
		ids = append(ids, mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i)))
	}
	for _, k := range []int{0, 7, 18} {
		evs := mustRange(t, l, stream, ids[k], 0)
		if len(evs) != 19-k || evs[0].ID != ids[k+1] {
			t.Fatalf("Range after #%d: got %d events starting %v", k, len(evs), evs)
		}
	}
	if evs := mustRange(t, l, stream, ids[19], 0); len(evs) != 0 {
		t.Fatalf("Range after the last ID returned %d events", len(evs))
	}
	evs := mustRange(t, l, stream, ids[4], 3)
	if len(evs) != 3 || evs[0].ID != ids[5] || evs[2].ID != ids[7] {
		t.Fatalf("Range with limit 3 after #4 returned %v", evs)
	}
	// A cursor between two IDs (a client's ID from a trimmed or other log) still works.
	last := parseID(t, ids[19])
	future := fmt.Sprintf("%d-0", last[0]+1000)
	if evs := mustRange(t, l, stream, future, 0); len(evs) != 0 {
		t.Fatalf("Range after a future ID returned %d events", len(evs))
	}
	if evs := mustRange(t, l, stream, "18446744073709551615-18446744073709551615", 0); len(evs) != 0 {
		t.Fatalf("Range after the largest ID returned %d events", len(evs))
	}
}

func testStartCursors(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	for i := range 3 {
		mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
	}
	for _, c := range []string{"", "0", "0-0"} {
		if evs := mustRange(t, l, stream, c, 0); len(evs) != 3 {
			t.Fatalf("Range from %q returned %d events, want 3", c, len(evs))
		}
		r := recv(t, goWait(ctxT(t), l, stream, c, awaitLimit), "Wait from "+c)
		if r.err != nil || len(r.evs) != 3 {
			t.Fatalf("Wait from %q = %d events, %v; want 3", c, len(r.evs), r.err)
		}
	}
}

func testInvalidIDs(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	bad := []string{"abc", "1", "1-", "-1", "1-2-3", "1-x", " 1-0", "1-0 ", "+1-0", "0x1-0",
		"18446744073709551616-0", "1-18446744073709551616", "$", ">", "-", "+", "*"}
	for _, id := range bad {
		if _, err := l.Range(ctxT(t), stream, id, 0); !errors.Is(err, relay.ErrInvalidID) {
			t.Errorf("Range(%q) error = %v, want ErrInvalidID", id, err)
		}
		if _, err := l.Wait(ctxT(t), stream, id, time.Millisecond); !errors.Is(err, relay.ErrInvalidID) {
			t.Errorf("Wait(%q) error = %v, want ErrInvalidID", id, err)
		}
	}
}

func testBadInput(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	ctx := ctxT(t)
	stream := streamName(t, "s")
	good := payload(relay.TypeDone, 0)
	cases := map[string]func() error{
		"empty stream": func() error { _, err := l.Append(ctx, "", relay.TypeContent, good); return err },
		"empty type":   func() error { _, err := l.Append(ctx, stream, "", good); return err },
		"nil data":     func() error { _, err := l.Append(ctx, stream, relay.TypeContent, nil); return err },
		"broken JSON": func() error {
			_, err := l.Append(ctx, stream, relay.TypeContent, json.RawMessage(`{"a":`))
			return err
		},
		"terminal of non-terminal type": func() error {
			_, _, err := l.AppendTerminal(ctx, stream, relay.TypeContent, good, time.Minute)
			return err
		},
		"terminal with zero ttl": func() error {
			_, _, err := l.AppendTerminal(ctx, stream, relay.TypeDone, good, 0)
			return err
		},
		"range of empty stream name": func() error { _, err := l.Range(ctx, "", "", 0); return err },
		"wait on empty stream name":  func() error { _, err := l.Wait(ctx, "", "", time.Millisecond); return err },
	}
	for name, fn := range cases {
		if err := fn(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if ok, err := l.Exists(ctx, stream); err != nil || ok {
		t.Fatalf("rejected input created the stream (exists=%v, err=%v)", ok, err)
	}
}

func testUnknownStream(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "never")
	if ok, err := l.Exists(ctxT(t), stream); err != nil || ok {
		t.Fatalf("Exists(unknown) = %v, %v", ok, err)
	}
	if evs := mustRange(t, l, stream, "", 0); len(evs) != 0 {
		t.Fatalf("Range(unknown) returned %d events", len(evs))
	}
	r := recv(t, goWait(ctxT(t), l, stream, "", 20*time.Millisecond), "Wait on unknown stream")
	if r.err != nil || r.evs != nil {
		t.Fatalf("Wait(unknown) = %v, %v; want nil, nil", r.evs, r.err)
	}
	if ok, err := l.Exists(ctxT(t), stream); err != nil || ok {
		t.Fatalf("waiting created the stream: Exists = %v, %v", ok, err)
	}
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	if ok, err := l.Exists(ctxT(t), stream); err != nil || !ok {
		t.Fatalf("Exists after append = %v, %v", ok, err)
	}
}

func testLast(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	if ev, ok, err := l.Last(ctxT(t), stream); err != nil || ok {
		t.Fatalf("Last(unknown) = %v, %v, %v; want nothing", ev, ok, err)
	}
	if _, _, err := l.Last(ctxT(t), ""); err == nil {
		t.Fatal("Last of an empty stream name was accepted")
	}
	var id string
	for i := range 3 {
		id = mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
	}
	ev, ok, err := l.Last(ctxT(t), stream)
	if err != nil || !ok || ev.ID != id || ev.Type != relay.TypeContent || string(ev.Data) != string(payload(relay.TypeContent, 2)) {
		t.Fatalf("Last = %v, %v, %v; want the third content event %s", ev, ok, err, id)
	}
	if other, ok, err := l.Last(ctxT(t), streamName(t, "other")); err != nil || ok {
		t.Fatalf("Last of another stream = %v, %v, %v", other, ok, err)
	}
	done, _, err := l.AppendTerminal(ctxT(t), stream, relay.TypeDone, payload(relay.TypeDone, 0), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if ev, ok, err := l.Last(ctxT(t), stream); err != nil || !ok || ev.ID != done || ev.Type != relay.TypeDone {
		t.Fatalf("Last after the terminal event = %v, %v, %v; want done %s", ev, ok, err, done)
	}
}

func testInputIsCopied(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	data := json.RawMessage(`{"type":"content","content":"abc"}`)
	mustAppend(t, l, stream, relay.TypeContent, data)
	copy(data, `{"type":"content","content":"XYZ"}`)
	if evs := mustRange(t, l, stream, "", 0); string(evs[0].Data) != `{"type":"content","content":"abc"}` {
		t.Fatalf("stored event changed with the caller's buffer: %s", evs[0].Data)
	}
}

func testStreamsAreSeparate(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	a, b := streamName(t, "a"), streamName(t, "b")
	mustAppend(t, l, a, relay.TypeContent, payload(relay.TypeContent, 1))
	mustAppend(t, l, b, relay.TypeContent, payload(relay.TypeContent, 2))
	mustAppend(t, l, b, relay.TypeContent, payload(relay.TypeContent, 3))
	if _, added, err := l.AppendTerminal(ctxT(t), a, relay.TypeDone, payload(relay.TypeDone, 0), time.Hour); err != nil || !added {
		t.Fatalf("AppendTerminal(a) = %v, %v", added, err)
	}
	if evs := mustRange(t, l, a, "", 0); len(evs) != 2 {
		t.Fatalf("stream a has %d events, want 2", len(evs))
	}
	if evs := mustRange(t, l, b, "", 0); len(evs) != 2 || string(evs[0].Data) != string(payload(relay.TypeContent, 2)) {
		t.Fatalf("stream b = %v", evs)
	}
	if _, added, err := l.AppendTerminal(ctxT(t), b, relay.TypeDone, payload(relay.TypeDone, 1), time.Hour); err != nil || !added {
		t.Fatalf("terminal of a blocked the terminal of b: %v, %v", added, err)
	}
}

func testWaitReturnsBacklog(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	first := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	second := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 1))
	start := time.Now()
	r := recv(t, goWait(ctxT(t), l, stream, first, awaitLimit), "Wait with backlog")
	if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != second {
		t.Fatalf("Wait after first = %v, %v; want [%s]", r.evs, r.err, second)
	}
	if d := time.Since(start); d > awaitLimit/2 {
		t.Fatalf("Wait with a backlog blocked for %v", d)
	}
}

func testWaitWakesOnAppend(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	last := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	for i := 1; i <= 5; i++ {
		// The wait's own timeout is far beyond the receive limit: only a wake-up can pass this.
		ch := goWait(ctxT(t), l, stream, last, 10*awaitLimit)
		id := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
		r := recv(t, ch, "Wait for an append")
		if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != id {
			t.Fatalf("Wait returned %v, %v; want [%s]", r.evs, r.err, id)
		}
		last = id
	}
}

func testWaitWakesOnNewStream(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "new")
	ch := goWait(ctxT(t), l, stream, "", 10*awaitLimit)
	id := mustAppend(t, l, stream, relay.TypeTurnStarted, payload(relay.TypeTurnStarted, 0))
	r := recv(t, ch, "Wait on a stream before it exists")
	if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != id {
		t.Fatalf("Wait returned %v, %v; want [%s]", r.evs, r.err, id)
	}
}

func testWaitWakesEveryWaiter(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	last := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	const n = 6
	chans := make([]<-chan waitResult, n)
	for i := range chans {
		chans[i] = goWait(ctxT(t), l, stream, last, 10*awaitLimit)
	}
	id := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 1))
	for i, ch := range chans {
		r := recv(t, ch, fmt.Sprintf("waiter %d", i))
		if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != id {
			t.Fatalf("waiter %d got %v, %v", i, r.evs, r.err)
		}
	}
}

func testWaitTimeout(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	last := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	const timeout = 150 * time.Millisecond
	start := time.Now()
	r := recv(t, goWait(ctxT(t), l, stream, last, timeout), "Wait with a timeout")
	elapsed := time.Since(start)
	if r.err != nil || r.evs != nil {
		t.Fatalf("Wait after the last event = %v, %v; want nil, nil", r.evs, r.err)
	}
	if elapsed < timeout {
		t.Fatalf("Wait returned after %v, before its %v timeout", elapsed, timeout)
	}
	// A zero timeout only looks once.
	if evs, err := l.Wait(ctxT(t), stream, last, 0); err != nil || evs != nil {
		t.Fatalf("Wait(timeout 0) = %v, %v", evs, err)
	}
	if evs, err := l.Wait(ctxT(t), stream, "", 0); err != nil || len(evs) != 1 {
		t.Fatalf("Wait(timeout 0) with a backlog = %v, %v", evs, err)
	}
}

func testWaitContextCancel(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	last := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))

	ctx, cancel := context.WithCancel(context.Background())
	ch := goWait(ctx, l, stream, last, 10*awaitLimit)
	cancel()
	r := recv(t, ch, "Wait after cancel")
	if !errors.Is(r.err, context.Canceled) || r.evs != nil {
		t.Fatalf("cancelled Wait = %v, %v; want nil, context.Canceled", r.evs, r.err)
	}

	// Already cancelled before the call, even with events waiting.
	if evs, err := l.Wait(ctx, stream, "", time.Second); !errors.Is(err, context.Canceled) || evs != nil {
		t.Fatalf("Wait with a dead context = %v, %v", evs, err)
	}

	deadlineCtx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	r = recv(t, goWait(deadlineCtx, l, stream, last, 10*awaitLimit), "Wait past its context deadline")
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("Wait past its context deadline = %v, %v", r.evs, r.err)
	}
	// The log still works for others afterwards.
	id := mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 1))
	r = recv(t, goWait(ctxT(t), l, stream, last, awaitLimit), "Wait after cancellations")
	if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != id {
		t.Fatalf("Wait after cancellations = %v, %v", r.evs, r.err)
	}
}

func testAppendTerminalOnce(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	ctx := ctxT(t)
	stream := streamName(t, "s")
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	id, added, err := l.AppendTerminal(ctx, stream, relay.TypeDone, payload(relay.TypeDone, 0), time.Hour)
	if err != nil || !added {
		t.Fatalf("first AppendTerminal = %s, %v, %v", id, added, err)
	}
	id2, added2, err := l.AppendTerminal(ctx, stream, relay.TypeDone, payload(relay.TypeDone, 1), time.Hour)
	if err != nil || added2 || id2 != id {
		t.Fatalf("second AppendTerminal = %s, %v, %v; want %s, false", id2, added2, err, id)
	}
	evs := mustRange(t, l, stream, "", 0)
	if len(evs) != 2 || evs[1].ID != id || string(evs[1].Data) != string(payload(relay.TypeDone, 0)) {
		t.Fatalf("log after two terminals = %v", evs)
	}
}

func testAppendTerminalConcurrent(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	const n = 16
	type res struct {
		id    string
		added bool
		err   error
	}
	results := make([]res, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			id, added, err := l.AppendTerminal(context.Background(), stream, relay.TypeDone, payload(relay.TypeDone, i), time.Hour)
			results[i] = res{id, added, err}
		})
	}
	close(start)
	wg.Wait()
	addedCount := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("caller %d: %v", i, r.err)
		}
		if r.id != results[0].id {
			t.Fatalf("callers disagree on the terminal ID: %s vs %s", r.id, results[0].id)
		}
		if r.added {
			addedCount++
		}
	}
	if addedCount != 1 {
		t.Fatalf("%d callers added the terminal event, want exactly 1", addedCount)
	}
	terminals := 0
	for _, ev := range mustRange(t, l, stream, "", 0) {
		if relay.IsTerminal(ev.Type) {
			terminals++
		}
	}
	if terminals != 1 {
		t.Fatalf("log holds %d terminal events, want 1", terminals)
	}
}

func testAppendAfterTerminal(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	id, _, err := l.AppendTerminal(ctxT(t), stream, relay.TypeDone, payload(relay.TypeDone, 0), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	late := mustAppend(t, l, stream, relay.TypeToolProgress, payload(relay.TypeToolProgress, 1))
	if !idLess(t, id, late) {
		t.Fatalf("late event %s not after terminal %s", late, id)
	}
	if evs := mustRange(t, l, stream, id, 0); len(evs) != 1 || evs[0].ID != late {
		t.Fatalf("Range after the terminal = %v", evs)
	}
}

func testExpiryAfterTerminal(t *testing.T, newLog Factory, _ func(testing.TB) Subject) {
	sub := newLog(t, Config{MaxLen: 1000, IdleTTL: time.Hour})
	l := sub.Log
	stream := streamName(t, "s")
	ttl := 300 * time.Millisecond
	if sub.Elapse != nil {
		ttl = 10 * time.Minute // an injected clock makes the length irrelevant
	}
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	if sub.TTL != nil {
		if got, err := sub.TTL(stream); err != nil || got <= 10*time.Minute || got > time.Hour {
			t.Fatalf("TTL before the terminal = %v, %v; want the 1h idle TTL", got, err)
		}
	}
	if _, added, err := l.AppendTerminal(ctxT(t), stream, relay.TypeDone, payload(relay.TypeDone, 0), ttl); err != nil || !added {
		t.Fatalf("AppendTerminal = %v, %v", added, err)
	}
	// Late progress must not push the expiry back out to the idle TTL.
	mustAppend(t, l, stream, relay.TypeToolProgress, payload(relay.TypeToolProgress, 1))
	if sub.TTL != nil {
		if got, err := sub.TTL(stream); err != nil || got <= 0 || got > ttl {
			t.Fatalf("TTL after the terminal = %v, %v; want within (0, %v]", got, err, ttl)
		}
	}
	if ok, err := l.Exists(ctxT(t), stream); err != nil || !ok {
		t.Fatalf("stream gone right after its terminal event: %v, %v", ok, err)
	}
	if sub.Elapse != nil {
		sub.Elapse(ttl - time.Second)
		if ok, err := l.Exists(ctxT(t), stream); err != nil || !ok {
			t.Fatalf("stream gone before its ttl: %v, %v", ok, err)
		}
		sub.Elapse(time.Second)
	}
	eventually(t, "stream expires after the terminal ttl", func() (bool, error) {
		ok, err := l.Exists(ctxT(t), stream)
		return !ok, err
	})
	if evs := mustRange(t, l, stream, "", 0); len(evs) != 0 {
		t.Fatalf("expired stream still returns %d events", len(evs))
	}
	// With the stream gone, a new turn under the same name can end again.
	if _, added, err := l.AppendTerminal(ctxT(t), stream, relay.TypeDone, payload(relay.TypeDone, 2), ttl); err != nil || !added {
		t.Fatalf("AppendTerminal after expiry = %v, %v; want added", added, err)
	}
}

func testIdleExpiry(t *testing.T, newLog Factory, _ func(testing.TB) Subject) {
	const idle = time.Hour
	sub := newLog(t, Config{MaxLen: 1000, IdleTTL: idle})
	if sub.Elapse == nil && sub.TTL == nil {
		t.Skip("log has neither an injectable clock nor a TTL probe")
	}
	l := sub.Log
	stream := streamName(t, "s")
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 0))
	if sub.TTL != nil {
		if got, err := sub.TTL(stream); err != nil || got <= idle-time.Minute || got > idle {
			t.Fatalf("idle TTL = %v, %v; want about %v", got, err, idle)
		}
	}
	if sub.Elapse == nil {
		return
	}
	sub.Elapse(idle - time.Minute)
	mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, 1)) // refreshes
	sub.Elapse(idle - time.Minute)
	if ok, err := l.Exists(ctxT(t), stream); err != nil || !ok {
		t.Fatalf("stream expired although an append refreshed it: %v, %v", ok, err)
	}
	sub.Elapse(time.Minute)
	if ok, err := l.Exists(ctxT(t), stream); err != nil || ok {
		t.Fatalf("abandoned stream still exists after its idle TTL: %v, %v", ok, err)
	}
}

func testMaxLen(t *testing.T, newLog Factory, _ func(testing.TB) Subject) {
	const maxLen = 50
	sub := newLog(t, Config{MaxLen: maxLen, IdleTTL: time.Hour})
	l := sub.Log
	stream := streamName(t, "s")
	const n = 1000
	ids := make([]string, n)
	for i := range n {
		ids[i] = mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
	}
	evs := mustRange(t, l, stream, "", 0)
	if len(evs) < maxLen || len(evs) > maxLen+sub.TrimSlack {
		t.Fatalf("stream holds %d events, want %d..%d", len(evs), maxLen, maxLen+sub.TrimSlack)
	}
	for i, ev := range evs {
		want := n - len(evs) + i
		if ev.ID != ids[want] {
			t.Fatalf("retained event %d is %s, want #%d %s (the newest ones)", i, ev.ID, want, ids[want])
		}
	}
	// A reader whose cursor fell off the trimmed start still gets everything retained.
	if got := mustRange(t, l, stream, ids[0], 0); len(got) != len(evs) {
		t.Fatalf("Range after a trimmed ID returned %d events, want %d", len(got), len(evs))
	}
}

// A turn longer than the cap must not trim its own turn_started: a client that joins late
// learns from it which question the turn answers.
func testTrimKeepsTurnStarted(t *testing.T, newLog Factory, _ func(testing.TB) Subject) {
	const maxLen = 50
	sub := newLog(t, Config{MaxLen: maxLen, IdleTTL: time.Hour})
	l := sub.Log
	stream := streamName(t, "s")
	started := mustAppend(t, l, stream, relay.TypeTurnStarted, payload(relay.TypeTurnStarted, 0))
	const n = 1000
	ids := make([]string, n)
	for i := range n {
		ids[i] = mustAppend(t, l, stream, relay.TypeContent, payload(relay.TypeContent, i))
	}
	evs := mustRange(t, l, stream, "", 0)
	if len(evs) < maxLen || len(evs) > maxLen+1+sub.TrimSlack {
		t.Fatalf("stream holds %d events, want %d..%d", len(evs), maxLen, maxLen+1+sub.TrimSlack)
	}
	if evs[0].ID != started || evs[0].Type != relay.TypeTurnStarted || string(evs[0].Data) != string(payload(relay.TypeTurnStarted, 0)) {
		t.Fatalf("first retained event is %s %s, want turn_started %s", evs[0].ID, evs[0].Type, started)
	}
	if last := evs[len(evs)-1]; last.ID != ids[n-1] {
		t.Fatalf("last retained event is %s, want the newest %s", last.ID, ids[n-1])
	}
	if last, ok, err := l.Last(ctxT(t), stream); err != nil || !ok || last.ID != ids[n-1] {
		t.Fatalf("Last of a trimmed stream = %v, %v, %v; want %s", last, ok, err, ids[n-1])
	}
	if got := mustRange(t, l, stream, "", 3); len(got) != 3 || got[0].ID != started || got[1].ID != evs[1].ID {
		t.Fatalf("Range with limit 3 from the start = %v", got)
	}
	r := recv(t, goWait(ctxT(t), l, stream, "", awaitLimit), "Wait from the start")
	if r.err != nil || len(r.evs) == 0 || r.evs[0].ID != started {
		t.Fatalf("Wait from the start = %v, %v; want turn_started first", r.evs, r.err)
	}
	if got := mustRange(t, l, stream, started, 0); len(got) != len(evs)-1 || got[0].Type == relay.TypeTurnStarted {
		t.Fatalf("Range after turn_started returned %d events (first %v)", len(got), got[0])
	}
}

func testConcurrentWritersAndReaders(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	const writers, perWriter, readers, streams = 6, 150, 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers*streams+readers*streams)
	for s := range streams {
		stream := streamName(t, fmt.Sprintf("s%d", s))
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					d, _ := json.Marshal(map[string]int{"w": w, "i": i})
					if _, err := l.Append(context.Background(), stream, relay.TypeContent, d); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for r := range readers {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*awaitLimit)
				defer cancel()
				if err := follow(ctx, l, stream, writers*perWriter, writers); err != nil {
					errs <- fmt.Errorf("reader %d of %s: %w", r, stream, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// follow tails stream with Wait until it has seen want events, checking that IDs only grow, that
// nothing repeats and that each writer's events arrive in the order it wrote them.
func follow(ctx context.Context, l relay.Log, stream string, want, writers int) error {
	next := make([]int, writers)
	cursor, lastID := "", [2]uint64{}
	seen := 0
	for seen < want {
		evs, err := l.Wait(ctx, stream, cursor, time.Second)
		if err != nil {
			return fmt.Errorf("after %d events: %w", seen, err)
		}
		for _, ev := range evs {
			ms, seq, _ := strings.Cut(ev.ID, "-")
			a, _ := strconv.ParseUint(ms, 10, 64)
			b, _ := strconv.ParseUint(seq, 10, 64)
			if seen > 0 && !(a > lastID[0] || (a == lastID[0] && b > lastID[1])) {
				return fmt.Errorf("ID %s does not follow %d-%d", ev.ID, lastID[0], lastID[1])
			}
			lastID = [2]uint64{a, b}
			var d struct{ W, I int }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return err
			}
			if d.I != next[d.W] {
				return fmt.Errorf("writer %d: got event %d, want %d", d.W, d.I, next[d.W])
			}
			next[d.W]++
			seen++
			cursor = ev.ID
		}
	}
	return nil
}

func testLargePayload(t *testing.T, _ Factory, std func(testing.TB) Subject) {
	l := std(t).Log
	stream := streamName(t, "s")
	// A big `show running-config` from many devices in one tool_end.
	big := strings.Repeat("interface GigabitEthernet0/0\n ip address 10.0.0.1 255.255.255.0\n!\n", 16000)
	data, _ := json.Marshal(map[string]string{"type": relay.TypeToolEnd, "tool_output": big})
	if len(data) < 1<<20 {
		t.Fatalf("payload only %d bytes", len(data))
	}
	ch := goWait(ctxT(t), l, stream, "", 10*awaitLimit)
	id := mustAppend(t, l, stream, relay.TypeToolEnd, data)
	r := recv(t, ch, "Wait for a large event")
	if r.err != nil || len(r.evs) != 1 || r.evs[0].ID != id || string(r.evs[0].Data) != string(data) {
		t.Fatalf("large event did not round-trip through Wait (err %v)", r.err)
	}
	evs := mustRange(t, l, stream, "", 0)
	if len(evs) != 1 || string(evs[0].Data) != string(data) {
		t.Fatalf("large event did not round-trip through Range")
	}
}

// ---- benchmarks --------------------------------------------------------------------------------

// BenchmarkAppend measures appending a typical content delta.
func BenchmarkAppend(b *testing.B, l relay.Log) {
	ctx := context.Background()
	stream := streamName(b, "bench")
	data := payload(relay.TypeContent, 12345)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Append(ctx, stream, relay.TypeContent, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip measures the latency from Append to a tailing reader's Wait returning that
// event: the part of time-to-first-token the relay adds. It reports p50 and p99 in microseconds.
func BenchmarkRoundTrip(b *testing.B, l relay.Log) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := streamName(b, "bench")
	data := payload(relay.TypeContent, 12345)
	got := make(chan string)
	readerErr := make(chan error, 1)
	go func() {
		cursor := ""
		for {
			evs, err := l.Wait(ctx, stream, cursor, time.Minute)
			if err != nil {
				if ctx.Err() == nil {
					readerErr <- err
				}
				return
			}
			for _, ev := range evs {
				cursor = ev.ID
				select {
				case got <- ev.ID:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		id, err := l.Append(ctx, stream, relay.TypeContent, data)
		if err != nil {
			b.Fatal(err)
		}
		select {
		case seen := <-got:
			if seen != id {
				b.Fatalf("reader saw %s, appended %s", seen, id)
			}
		case err := <-readerErr:
			b.Fatal(err)
		case <-time.After(awaitLimit):
			b.Fatal("reader did not see the event")
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
