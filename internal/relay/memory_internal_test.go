package relay

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testclock"
)

func (m *Memory) streamCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.streams)
}

func TestMemorySweepFreesExpiredStreams(t *testing.T) {
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	m := NewMemory(MemoryOptions{IdleTTL: time.Hour, Clock: clock.Now})
	defer m.Close()
	ctx := context.Background()
	data := json.RawMessage(`{"type":"done"}`)
	if _, _, err := m.AppendTerminal(ctx, "ended", TypeDone, data, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, "running", TypeContent, data); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	m.sweep()
	if n := m.streamCount(); n != 1 {
		t.Fatalf("%d streams after sweeping one expired turn, want 1", n)
	}
	clock.Advance(time.Hour)
	m.sweep()
	if n := m.streamCount(); n != 0 {
		t.Fatalf("%d streams after the idle TTL, want 0", n)
	}
}

func TestMemoryWaitLeavesNoPlaceholder(t *testing.T) {
	m := NewMemory(MemoryOptions{})
	defer m.Close()
	if _, err := m.Wait(context.Background(), "nobody-writes", "", 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := m.streamCount(); n != 0 {
		t.Fatalf("a finished Wait left %d streams behind", n)
	}
}

func TestMemoryTrimKeepsIDsIncreasing(t *testing.T) {
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	m := NewMemory(MemoryOptions{MaxLen: 3, Clock: clock.Now})
	defer m.Close()
	var last entryID
	for i := range 10 {
		id, err := m.Append(context.Background(), "s", TypeContent, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		cur, _ := parseAfterID(id)
		if i > 0 && !last.less(cur) {
			t.Fatalf("ID %s after %s", id, last)
		}
		last = cur
	}
	if id := last.String(); id != "1700000000000-9" {
		t.Fatalf("10th ID in one millisecond = %s, want 1700000000000-9", id)
	}
}

func TestMemoryCloseWakesWaitersAndStopsJanitor(t *testing.T) {
	before := runtime.NumGoroutine()
	m := NewMemory(MemoryOptions{JanitorInterval: time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := m.Wait(context.Background(), "s", "", time.Hour)
		done <- err
	}()
	// Let the waiter register so Close has someone to wake (a waiter arriving after Close gets
	// ErrClosed straight away, which is the same outcome).
	deadline := time.Now().Add(10 * time.Second)
	for m.streamCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter got %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake the waiter")
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := m.Append(context.Background(), "s", TypeContent, json.RawMessage(`{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v", err)
	}
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Close, %d before NewMemory", n, before)
	}
}

func TestParseAfterID(t *testing.T) {
	for in, want := range map[string]entryID{
		"": {}, "0": {}, "0-0": {}, "5-7": {5, 7}, "007-1": {7, 1},
		"18446744073709551615-18446744073709551615": {^uint64(0), ^uint64(0)},
	} {
		got, err := parseAfterID(in)
		if err != nil || got != want {
			t.Errorf("parseAfterID(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}
