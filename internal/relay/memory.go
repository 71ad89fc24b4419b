package relay

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"
)

// MemoryOptions configures NewMemory. Zero values select the defaults.
type MemoryOptions struct {
	// MaxLen caps each stream; the oldest entries are dropped beyond it. Default DefaultMaxLen.
	MaxLen int
	// IdleTTL is how long a stream without a terminal event lives after its last append.
	// Default DefaultIdleTTL.
	IdleTTL time.Duration
	// JanitorInterval is how often expired streams are freed. Expired streams are invisible
	// immediately either way; the janitor only returns their memory. Default one minute.
	JanitorInterval time.Duration
	// Clock supplies the time used for IDs and expiry; tests inject one to expire streams without
	// waiting. Default time.Now.
	Clock func() time.Time
}

// Memory is the in-process Log for a single process (`serve` without Redis). It is safe for
// concurrent use. Readers are woken by appends, never by polling. Events returned by Range and
// Wait share their Data with the log and must not be modified.
type Memory struct {
	maxLen  int
	idleTTL time.Duration
	now     func() time.Time

	mu      sync.Mutex
	streams map[string]*memStream
	closed  bool

	stop        chan struct{}
	janitorDone chan struct{}
}

type memEntry struct {
	id entryID
	ev Event
}

type memStream struct {
	entries []memEntry
	// pinned holds the stream's turn_started once trimming has dropped it from entries.
	pinned   *memEntry
	last     entryID // the last ID issued; survives trimming so IDs never repeat
	terminal string  // ID of the terminal event, "" while the turn is running
	expireAt time.Time
	// wake is closed (and replaced) when an event is appended while someone waits, or when the
	// stream is dropped, so that waiters look again.
	wake    chan struct{}
	waiters int
}

var _ Log = (*Memory)(nil)

// NewMemory returns an in-process log and starts its janitor; call Close to stop it.
func NewMemory(opts MemoryOptions) *Memory {
	m := &Memory{
		maxLen:      opts.MaxLen,
		idleTTL:     opts.IdleTTL,
		now:         opts.Clock,
		streams:     make(map[string]*memStream),
		stop:        make(chan struct{}),
		janitorDone: make(chan struct{}),
	}
	if m.maxLen <= 0 {
		m.maxLen = DefaultMaxLen
	}
	if m.idleTTL <= 0 {
		m.idleTTL = DefaultIdleTTL
	}
	if m.now == nil {
		m.now = time.Now
	}
	interval := opts.JanitorInterval
	if interval <= 0 {
		interval = time.Minute
	}
	go m.janitor(interval)
	return m
}

// Close stops the janitor, wakes every waiter (they return ErrClosed) and frees all streams.
// It is safe to call more than once.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	for name, s := range m.streams {
		m.dropLocked(name, s)
	}
	m.mu.Unlock()
	<-m.janitorDone
	return nil
}

func (m *Memory) janitor(interval time.Duration) {
	defer close(m.janitorDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.sweep()
		}
	}
}

// sweep frees every stream whose expiry has passed.
func (m *Memory) sweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for name, s := range m.streams {
		if s.expired(now) {
			m.dropLocked(name, s)
		}
	}
}

func (s *memStream) expired(now time.Time) bool {
	return !s.expireAt.IsZero() && !now.Before(s.expireAt)
}

func (m *Memory) dropLocked(name string, s *memStream) {
	delete(m.streams, name)
	close(s.wake)
}

// liveLocked returns the stream if it exists and has not expired, creating an empty one when
// create is set.
func (m *Memory) liveLocked(name string, now time.Time, create bool) *memStream {
	s := m.streams[name]
	if s != nil && s.expired(now) {
		m.dropLocked(name, s)
		s = nil
	}
	if s == nil && create {
		s = &memStream{wake: make(chan struct{})}
		m.streams[name] = s
	}
	return s
}

func (s *memStream) add(now time.Time, typ string, data json.RawMessage, maxLen int) string {
	ms := uint64(0)
	if t := now.UnixMilli(); t > 0 {
		ms = uint64(t)
	}
	id := entryID{ms: ms}
	if ms <= s.last.ms {
		id = entryID{ms: s.last.ms, seq: s.last.seq + 1}
	}
	s.last = id
	ev := Event{ID: id.String(), Type: typ, Data: append(json.RawMessage(nil), data...)}
	s.entries = append(s.entries, memEntry{id: id, ev: ev})
	if s.pinned != nil && maxLen > 1 {
		maxLen-- // the kept turn_started counts towards the cap
	}
	if over := len(s.entries) - maxLen; over > 0 {
		if first := s.entries[0]; s.pinned == nil && first.ev.Type == TypeTurnStarted {
			// A long turn must not trim the event that says what it is.
			s.pinned = &first
		}
		// Clear the dropped slots so their payloads can be collected before the next reallocation.
		clear(s.entries[:over])
		s.entries = s.entries[over:]
	}
	if s.waiters > 0 {
		close(s.wake)
		s.wake = make(chan struct{})
	}
	return ev.ID
}

// after returns up to limit events strictly after id (limit <= 0: all).
func (s *memStream) after(id entryID, limit int) []Event {
	var out []Event
	if s.pinned != nil && id.less(s.pinned.id) {
		out = append(out, s.pinned.ev)
		if limit > 0 {
			limit--
			if limit == 0 {
				return out
			}
		}
	}
	i := sort.Search(len(s.entries), func(i int) bool { return id.less(s.entries[i].id) })
	n := len(s.entries) - i
	if limit > 0 && n > limit {
		n = limit
	}
	for j := range n {
		out = append(out, s.entries[i+j].ev)
	}
	return out
}

// Append implements Log.
func (m *Memory) Append(ctx context.Context, stream, typ string, data json.RawMessage) (string, error) {
	if err := checkAppend(stream, typ, data); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", ErrClosed
	}
	now := m.now()
	s := m.liveLocked(stream, now, true)
	id := s.add(now, typ, data, m.maxLen)
	if s.terminal == "" {
		s.expireAt = now.Add(m.idleTTL)
	}
	return id, nil
}

// AppendTerminal implements Log.
func (m *Memory) AppendTerminal(ctx context.Context, stream, typ string, data json.RawMessage, ttl time.Duration) (string, bool, error) {
	if err := checkTerminal(stream, typ, data, ttl); err != nil {
		return "", false, err
	}
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", false, ErrClosed
	}
	now := m.now()
	s := m.liveLocked(stream, now, true)
	if s.terminal != "" {
		return s.terminal, false, nil
	}
	s.terminal = s.add(now, typ, data, m.maxLen)
	s.expireAt = now.Add(ttl)
	return s.terminal, true, nil
}

// Range implements Log. A limit <= 0 returns every retained event after afterID.
func (m *Memory) Range(ctx context.Context, stream, afterID string, limit int) ([]Event, error) {
	after, err := checkRead(ctx, stream, afterID)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s := m.liveLocked(stream, m.now(), false)
	if s == nil {
		return nil, nil
	}
	return s.after(after, limit), nil
}

// Wait implements Log. It returns at most 1000 events; a timeout <= 0 only checks once. Waiting on
// a stream that does not exist yet is allowed: the first append wakes the waiter.
func (m *Memory) Wait(ctx context.Context, stream, afterID string, timeout time.Duration) ([]Event, error) {
	after, err := checkRead(ctx, stream, afterID)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return m.Range(ctx, stream, afterID, waitBatch)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		s := m.liveLocked(stream, m.now(), true)
		if evs := s.after(after, waitBatch); len(evs) > 0 {
			m.mu.Unlock()
			return evs, nil
		}
		s.waiters++
		wake := s.wake
		m.mu.Unlock()

		var done bool
		var result error
		select {
		case <-wake:
		case <-timer.C:
			done = true
		case <-ctx.Done():
			done, result = true, ctx.Err()
		}

		m.mu.Lock()
		s.waiters--
		// A stream that only existed because we waited on it is not kept once nobody waits.
		if s.waiters == 0 && len(s.entries) == 0 && m.streams[stream] == s {
			m.dropLocked(stream, s)
		}
		m.mu.Unlock()
		if done {
			return nil, result
		}
	}
}

// Exists implements Log.
func (m *Memory) Exists(ctx context.Context, stream string) (bool, error) {
	if err := checkStream(stream); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, ErrClosed
	}
	s := m.liveLocked(stream, m.now(), false)
	return s != nil && len(s.entries) > 0, nil
}

// Last implements Log.
func (m *Memory) Last(ctx context.Context, stream string) (Event, bool, error) {
	if err := checkStream(stream); err != nil {
		return Event{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Event{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Event{}, false, ErrClosed
	}
	s := m.liveLocked(stream, m.now(), false)
	switch {
	case s == nil:
		return Event{}, false, nil
	case len(s.entries) > 0:
		return s.entries[len(s.entries)-1].ev, true, nil
	case s.pinned != nil:
		return s.pinned.ev, true, nil
	}
	return Event{}, false, nil
}
