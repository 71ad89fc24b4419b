package llmconfig

import (
	"context"
	"sync"
	"time"

	"github.com/gns3-copilot/gns3-copilot/gns3"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// WithGroupCache makes Choose trust a user's GNS3 groups for ttl (0: ask GNS3 every time).
// Groups only choose which LLM configuration applies (GNS3 still checks every action), and the
// API already trusts a checked token for as long; it saves a GNS3 request on every message a
// user sends. The settings routes always read the groups afresh.
func (s *Store) WithGroupCache(ttl time.Duration) *Store {
	s.groups.ttl = ttl
	return s
}

// groupCache remembers GroupsOf answers, keyed by the caller's token digest and the user, so the
// cache holds no usable secret and one user's token never answers for another.
type groupCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]groupEntry
}

type groupEntry struct {
	groups  []gns3.Group
	visible bool
	until   time.Time
}

// cachedGroupsOf is GroupsOf with the cache; errors are never remembered.
func (s *Store) cachedGroupsOf(ctx context.Context, client *gns3.Client, userID string) ([]gns3.Group, bool, error) {
	if s.groups.ttl <= 0 {
		return s.GroupsOf(ctx, client, userID)
	}
	key := client.TokenDigest() + "|" + userID
	now := time.Now()
	s.groups.mu.Lock()
	e, ok := s.groups.m[key]
	s.groups.mu.Unlock()
	if ok && now.Before(e.until) {
		return append([]gns3.Group(nil), e.groups...), e.visible, nil
	}
	// GroupsOf remembers what it read.
	return s.GroupsOf(ctx, client, userID)
}

// rememberGroups keeps a fresh GroupsOf answer for the turn-time cache.
func (s *Store) rememberGroups(client *gns3.Client, userID string, groups []gns3.Group, visible bool) {
	if s.groups.ttl <= 0 {
		return
	}
	key := client.TokenDigest() + "|" + userID
	s.groups.mu.Lock()
	defer s.groups.mu.Unlock()
	if s.groups.m == nil || len(s.groups.m) > 10000 { // bounded: drop everything rather than grow
		s.groups.m = map[string]groupEntry{}
	}
	s.groups.m[key] = groupEntry{groups: append([]gns3.Group(nil), groups...), visible: visible, until: time.Now().Add(s.groups.ttl)}
}

// WarmGroups reads the user's groups into the turn-time cache ahead of Choose, so the API can ask
// for them while it still checks the user's token and project. It does nothing when Choose will
// not need them (the user has a default of their own), when the cache already holds them, or
// when there is no cache; errors are left for Choose to meet and report.
func (s *Store) WarmGroups(ctx context.Context, userID string, client *gns3.Client) {
	if s.groups.ttl <= 0 {
		return
	}
	if own, err := s.repo.Default(ctx, models.OwnerUser, userID); err == nil && own.InheritsFrom == "" {
		return
	}
	_, _, _ = s.cachedGroupsOf(ctx, client, userID)
}
