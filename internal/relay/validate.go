package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const (
	// DefaultMaxLen is the per-stream cap when none is configured. A long turn with many tool calls
	// produces a few thousand deltas; older entries beyond the cap are dropped.
	DefaultMaxLen = 10000
	// DefaultIdleTTL is how long a stream without a terminal event survives its last append. It is a
	// safety net so a turn whose worker vanished for good does not keep its log forever.
	DefaultIdleTTL = 24 * time.Hour
	// waitBatch bounds how many events a single Wait returns, so one call stays a modest frame burst.
	waitBatch = 1000
)

// ErrClosed is returned by a Memory log after Close.
var ErrClosed = errors.New("relay: log is closed")

func checkStream(stream string) error {
	if stream == "" {
		return errors.New("relay: empty stream name")
	}
	return nil
}

// checkRead validates a reader's arguments and returns the parsed cursor; both logs' Range and
// Wait start with it, so they refuse the same input the same way.
func checkRead(ctx context.Context, stream, afterID string) (entryID, error) {
	after, err := parseAfterID(afterID)
	if err != nil {
		return entryID{}, err
	}
	if err := checkStream(stream); err != nil {
		return entryID{}, err
	}
	return after, ctx.Err()
}

func checkAppend(stream, typ string, data json.RawMessage) error {
	if err := checkStream(stream); err != nil {
		return err
	}
	if typ == "" {
		return errors.New("relay: empty event type")
	}
	if !json.Valid(data) {
		return fmt.Errorf("relay: data of %q event is not valid JSON", typ)
	}
	return nil
}

func checkTerminal(stream, typ string, data json.RawMessage, ttl time.Duration) error {
	if err := checkAppend(stream, typ, data); err != nil {
		return err
	}
	if !IsTerminal(typ) {
		return fmt.Errorf("relay: %q is not a terminal event type", typ)
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("relay: terminal ttl %v is below the 1ms minimum", ttl)
	}
	return nil
}
