package fakegns3

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// GNS3 3.1's credentials that are not a session's JWT: permanent API keys ("gns3_…"), which a
// user creates in GNS3's web UI and may revoke, and refresh tokens exchanged at
// POST /v3/access/users/refresh for a new access token. GNS3 3.0.6, whose captures the rest of
// the fake follows, has neither; what is served here is the shape the copilot relies on (an
// opaque bearer GNS3 itself accepts, checked with GET /v3/access/users/me), not a capture.

// OpRefresh is GNS3 3.1's exchange of a refresh token for an access token.
const OpRefresh Op = "POST /v3/access/users/refresh"

// credentials3x are the API keys and refresh tokens issued, each to a username.
type credentials3x struct {
	apiKeys       map[string]string
	refreshTokens map[string]string
	// lastRefresh is the last refresh request as it arrived, for tests of a proxy in front.
	lastRefresh RefreshRequest
}

// RefreshRequest is a refresh request as the fake received it.
type RefreshRequest struct {
	Body          string
	Authorization string
	ContentType   string
}

func (s *Server) credentials() *credentials3x {
	if s.creds3x == nil {
		s.creds3x = &credentials3x{apiKeys: map[string]string{}, refreshTokens: map[string]string{}}
	}
	return s.creds3x
}

func opaque(prefix string) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

// IssueAPIKey gives the user a permanent API key, accepted as a bearer token until revoked.
func (s *Server) IssueAPIKey(username string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustUser(username)
	key := opaque("gns3_")
	s.credentials().apiKeys[key] = username
	return key
}

// RevokeAPIKey revokes a key: GNS3 refuses it from now on.
func (s *Server) RevokeAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.credentials().apiKeys, key)
}

// IssueRefreshToken gives the user a refresh token for POST /v3/access/users/refresh.
func (s *Server) IssueRefreshToken(username string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustUser(username)
	tok := opaque("refresh-")
	s.credentials().refreshTokens[tok] = username
	return tok
}

// LastRefresh is the last refresh request the fake received.
func (s *Server) LastRefresh() RefreshRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.credentials().lastRefresh
}

// apiKeyUser is the user an API key belongs to, nil for none; s.mu is held.
func (s *Server) apiKeyUser(tok string) *user {
	if name, ok := s.credentials().apiKeys[tok]; ok {
		return s.users[name]
	}
	return nil
}

// refresh answers a refresh token with the user's access token.
func (s *Server) refresh(r *http.Request, body []byte, _ *user) (reply, *httpErr) {
	c := s.credentials()
	c.lastRefresh = RefreshRequest{Body: string(body), Authorization: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
	var in struct {
		RefreshToken string `json:"refresh_token"`
	}
	if json.Unmarshal(body, &in) != nil || in.RefreshToken == "" {
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'missing', 'loc': ('body', 'refresh_token'), 'msg': 'Field required', 'input': {}}]")
	}
	name, ok := c.refreshTokens[in.RefreshToken]
	if !ok {
		return reply{}, errf(http.StatusUnauthorized, "Could not validate credentials")
	}
	return reply{200, map[string]string{"access_token": s.users[name].token, "token_type": "bearer"}}, nil
}
