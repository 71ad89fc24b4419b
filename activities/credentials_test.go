package activities

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testclock"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// clockStore is a credential store whose entries expire on a manual clock.
type clockStore struct {
	mu      sync.Mutex
	clock   *testclock.Clock
	secrets map[string]string
	expires map[string]time.Time
}

func (s *clockStore) Put(_ context.Context, key, secret string, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[key], s.expires[key] = secret, s.clock.Now().Add(ttl)
	return nil
}

func (s *clockStore) Get(_ context.Context, key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.secrets[key]
	if !ok || !s.clock.Now().Before(s.expires[key]) {
		return "", errors.New("not found or expired")
	}
	return v, nil
}

func (s *clockStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.secrets, key)
	return nil
}

func TestRenewingKeepsTheTurnsCredentialAliveAndNeverRevivesAGoneOne(t *testing.T) {
	clock := testclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	store := &clockStore{clock: clock, secrets: map[string]string{}, expires: map[string]time.Time{}}
	a := &Activities{Credentials: store}
	ctx := context.Background()
	in := workflows.RenewCredentialInput{Turn: workflows.WorkRef{TurnID: "t1"}, TTL: time.Hour}
	require.NoError(t, store.Put(ctx, "t1", "alice-token", time.Hour))

	// Renewed every half hour, as the workflow does, it outlives its first hour by far.
	for i := 0; i < 6; i++ {
		clock.Advance(30 * time.Minute)
		require.NoError(t, a.RenewTurnCredential(ctx, in))
	}
	got, err := store.Get(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, "alice-token", got)

	// Not renewed, it expires; renewing then fails instead of bringing it back.
	clock.Advance(61 * time.Minute)
	_, err = store.Get(ctx, "t1")
	require.Error(t, err)
	require.Error(t, a.RenewTurnCredential(ctx, in))

	// A finished turn's credential is removed; renewal does not revive it either.
	require.NoError(t, store.Put(ctx, "t2", "bob-token", time.Hour))
	require.NoError(t, store.Delete(ctx, "t2"))
	require.Error(t, a.RenewTurnCredential(ctx, workflows.RenewCredentialInput{Turn: workflows.WorkRef{TurnID: "t2"}, TTL: time.Hour}))
	_, err = store.Get(ctx, "t2")
	require.Error(t, err)
}
