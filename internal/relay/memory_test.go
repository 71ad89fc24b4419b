package relay_test

import (
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/relay/relaytest"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testclock"
)

func newMemorySubject(t testing.TB, cfg relaytest.Config) relaytest.Subject {
	clock := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	m := relay.NewMemory(relay.MemoryOptions{MaxLen: cfg.MaxLen, IdleTTL: cfg.IdleTTL, Clock: clock.Now})
	t.Cleanup(func() { _ = m.Close() })
	return relaytest.Subject{Log: m, Elapse: clock.Advance}
}

func TestMemoryConformance(t *testing.T) {
	relaytest.Run(t, newMemorySubject)
}

// The conformance suite freezes the clock; this runs it again on the real clock so IDs also move
// through real milliseconds.
func TestMemoryConformanceRealClock(t *testing.T) {
	relaytest.Run(t, func(t testing.TB, cfg relaytest.Config) relaytest.Subject {
		m := relay.NewMemory(relay.MemoryOptions{MaxLen: cfg.MaxLen, IdleTTL: cfg.IdleTTL})
		t.Cleanup(func() { _ = m.Close() })
		return relaytest.Subject{Log: m}
	})
}

func BenchmarkMemoryAppend(b *testing.B) {
	m := relay.NewMemory(relay.MemoryOptions{})
	defer m.Close()
	relaytest.BenchmarkAppend(b, m)
}

func BenchmarkMemoryRoundTrip(b *testing.B) {
	m := relay.NewMemory(relay.MemoryOptions{})
	defer m.Close()
	relaytest.BenchmarkRoundTrip(b, m)
}
