package credentials

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store holds short-lived secrets keyed by turn, encrypted at rest, so that a turn resumed by
// another worker (after a crash) can still act for its user. Implementations are safe for
// concurrent use.
type Store interface {
	// Put stores secret under key for ttl, replacing any previous value.
	Put(ctx context.Context, key, secret string, ttl time.Duration) error
	// Get returns the secret, or ErrNotFound when it is missing or expired.
	Get(ctx context.Context, key string) (string, error)
	// Delete removes the secret; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// ErrNotFound is returned by Store.Get for a key that was never stored, was deleted, or expired.
var ErrNotFound = errors.New("credentials: not found or expired")

// maxStoreKeyLen matches the DB column; turn IDs are far shorter.
const maxStoreKeyLen = 255

func checkKey(key string) error {
	if key == "" {
		return errors.New("credentials: empty store key")
	}
	if len(key) > maxStoreKeyLen {
		return fmt.Errorf("credentials: store key is %d bytes, at most %d", len(key), maxStoreKeyLen)
	}
	return nil
}

func checkPut(key, secret string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if secret == "" {
		return errors.New("credentials: refusing to store an empty secret")
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("credentials: ttl %v is below the 1ms minimum", ttl)
	}
	return nil
}

// bindingFor is the associated data that ties a sealed value to its key, so a value copied to
// another key (another turn) does not open.
func bindingFor(key string) []byte { return []byte("turn-credential:" + key) }
