package llmconfig

import (
	"context"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// WithGroupCache makes Choose trust a user's GNS3 groups for ttl (0: ask GNS3 every time).
// Groups only choose which LLM configuration applies (GNS3 still checks every action), and the
// API already trusts a checked token for as long; it saves a GNS3 request on every message a
// user sends. The settings routes always read the groups afresh.
func (s *Store) WithGroupCache(ttl time.Duration) *Store {
	s.groups = nil
	if ttl > 0 {
		s.groups = expirable.NewLRU[string, groupEntry](maxCachedGroups, nil, ttl)
	}
	return s
}

// groupCache remembers GroupsOf answers, keyed by the caller's token digest and the user, so the
// cache holds no usable secret and one user's token never answers for another. nil: no cache.
type groupCache = *expirable.LRU[string, groupEntry]

// maxCachedGroups bounds the cache, like the API's cache of checked tokens.
const maxCachedGroups = 10000

type groupEntry struct {
	groups  []gns3.Group
	visible bool
}

func groupKey(client *gns3.Client, userID string) string { return client.TokenDigest() + "|" + userID }

// cachedGroupsOf is GroupsOf with the cache; errors are never remembered.
func (s *Store) cachedGroupsOf(ctx context.Context, client *gns3.Client, userID string) ([]gns3.Group, bool, error) {
	if s.groups == nil {
		return s.GroupsOf(ctx, client, userID)
	}
	if e, ok := s.groups.Get(groupKey(client, userID)); ok {
		return append([]gns3.Group(nil), e.groups...), e.visible, nil
	}
	// GroupsOf remembers what it read.
	return s.GroupsOf(ctx, client, userID)
}

// rememberGroups keeps a fresh GroupsOf answer for the turn-time cache.
func (s *Store) rememberGroups(client *gns3.Client, userID string, groups []gns3.Group, visible bool) {
	if s.groups == nil {
		return
	}
	s.groups.Add(groupKey(client, userID), groupEntry{groups: append([]gns3.Group(nil), groups...), visible: visible})
}

// WarmGroups reads the user's groups into the turn-time cache ahead of Choose, so the API can ask
// for them while it still checks the user's token and project. It does nothing when Choose will
// not need them (the user has a default of their own), when the cache already holds them, or
// when there is no cache; errors are left for Choose to meet and report.
func (s *Store) WarmGroups(ctx context.Context, userID string, client *gns3.Client) {
	if s.groups == nil {
		return
	}
	// The cache first: within its TTL (most messages) that spares the database read below.
	if _, ok := s.groups.Get(groupKey(client, userID)); ok {
		return
	}
	if own, err := s.repo.Default(ctx, models.OwnerUser, userID); err == nil && own.InheritsFrom == "" {
		return
	}
	// GroupsOf remembers what it read.
	_, _, _ = s.GroupsOf(ctx, client, userID)
}
