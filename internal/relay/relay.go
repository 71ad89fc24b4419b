// Package relay is the per-turn, append-only event log that carries a chat turn's progress from the
// worker that produces it to whichever API instance holds the browser's stream. Entry IDs are ordered
// and become SSE ids, so a client that reconnects with Last-Event-ID misses nothing.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Event is one entry of a turn's log. Data is the JSON object sent as the SSE `data:` line; it
// always carries a "type" field equal to Type so clients that only read data lines still work.
type Event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Log is implemented by the Redis Streams log (several processes) and the in-process log (one
// process). Both must pass the same conformance tests.
type Log interface {
	// Append adds an event and returns its ID. Appending after a terminal event is allowed (late
	// progress from a retried activity) but readers stop at the first terminal event.
	Append(ctx context.Context, stream, typ string, data json.RawMessage) (string, error)
	// AppendTerminal appends a terminal event only if the stream has none yet, so a retried
	// finalizer cannot end a turn twice; afterwards the stream expires after ttl. It returns the ID
	// of the terminal event that ends the stream and whether this call added it. typ must satisfy
	// IsTerminal and ttl must be at least a millisecond.
	AppendTerminal(ctx context.Context, stream, typ string, data json.RawMessage, ttl time.Duration) (id string, added bool, err error)
	// Range returns up to limit events strictly after afterID ("" means from the start), oldest first.
	// A limit <= 0 returns every retained event. An unknown or expired stream yields no events.
	Range(ctx context.Context, stream, afterID string, limit int) ([]Event, error)
	// Wait blocks until at least one event after afterID exists, the timeout passes (nil, nil) or
	// ctx ends (nil, ctx.Err()). It returns at most 1000 events per call; a timeout <= 0 checks once
	// without blocking. A stream that does not exist yet may be waited on: its first append wakes.
	Wait(ctx context.Context, stream, afterID string, timeout time.Duration) ([]Event, error)
	// Exists reports whether the stream has any events (false once it expired).
	Exists(ctx context.Context, stream string) (bool, error)
	// Last returns the stream's newest retained event; ok is false for an unknown, expired or
	// empty stream. A step that runs again without knowing it (a local activity re-run after
	// its workflow task was lost) looks here for what its earlier run left.
	Last(ctx context.Context, stream string) (ev Event, ok bool, err error)
}

// ErrInvalidID is returned when an afterID is not an ID this log could have produced.
var ErrInvalidID = errors.New("relay: invalid event id")
