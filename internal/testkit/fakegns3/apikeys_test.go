package fakegns3

import (
	"strings"
	"testing"
)

func TestAnAPIKeyIsTheUsersBearerUntilRevoked(t *testing.T) {
	s := New(t)
	s.AddUser("alice", "alice-token", false)
	key := s.IssueAPIKey("alice")
	if !strings.HasPrefix(key, "gns3_") || len(key) < 40 {
		t.Fatalf("key %q", key)
	}
	if r := do(t, s, key, "GET", "/v3/access/users/me", nil); r.status != 200 || obj(r.body)["username"] != "alice" {
		t.Fatalf("me with the key: %d %s", r.status, r.raw)
	}
	s.RevokeAPIKey(key)
	r := do(t, s, key, "GET", "/v3/access/users/me", nil)
	if r.status != 401 || !strings.Contains(string(r.raw), "Could not validate credentials") {
		t.Fatalf("me with a revoked key: %d %s", r.status, r.raw)
	}

	refresh := s.IssueRefreshToken("alice")
	r = do(t, s, "", "POST", "/v3/access/users/refresh", map[string]string{"refresh_token": refresh})
	if r.status != 200 || obj(r.body)["access_token"] != "alice-token" {
		t.Fatalf("refresh: %d %s", r.status, r.raw)
	}
	if got := s.LastRefresh(); !strings.Contains(got.Body, refresh) {
		t.Fatalf("last refresh %+v", got)
	}
	if r := do(t, s, "", "POST", "/v3/access/users/refresh", map[string]string{"refresh_token": "nope"}); r.status != 401 {
		t.Fatalf("unknown refresh token: %d", r.status)
	}
}
