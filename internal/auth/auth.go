// Package auth authenticates the callers of every front door on the copilot's engine (the chat
// API, MCP): the bearer token is the caller's GNS3 token, checked against GNS3, and the answer
// is cached briefly.
package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
)

// Caller is the authenticated caller, as GNS3 knows them. Token is forwarded to GNS3 on the
// caller's behalf so GNS3's own permissions apply to everything the copilot does for them; GNS3
// is a client bound to it.
type Caller struct {
	ID         string
	Username   string
	Superadmin bool
	Token      string
	GNS3       *gns3.Client
}

const ctxCaller = "gns3copilot.user"

// CallerOf is the caller RequireUser authenticated.
func CallerOf(c *gin.Context) *Caller { return c.MustGet(ctxCaller).(*Caller) }

// Prefetch starts, while a token that is not remembered is checked, a GNS3 read the route will
// need with the same token, and returns a function that waits for it. userID is whose the token
// was when it was last checked ("" when it never was).
type Prefetch func(c *gin.Context, client *gns3.Client, userID string) (wait func())

// MaxCachedUsers bounds the token cache: past it the least recently used entries go first.
const MaxCachedUsers = 10000

// Authenticator checks bearer tokens against GNS3.
type Authenticator struct {
	gns3 *gns3.Server
	// users remembers GET /v3/access/users/me answers briefly, keyed by a hash of the token so
	// the cache itself holds no usable secret.
	users *expirable.LRU[string, gns3.User]
	// userIDs remembers whose each checked token is, past the token check's own lifetime: a
	// token never changes hands, so this says whose data to read ahead (never who is signed
	// in; that is always the token check's answer).
	userIDs  *expirable.LRU[string, string]
	prefetch []Prefetch
}

// New checks tokens against server and trusts a checked token for ttl.
func New(server *gns3.Server, ttl time.Duration, prefetch ...Prefetch) *Authenticator {
	return &Authenticator{gns3: server, prefetch: prefetch,
		users:   expirable.NewLRU[string, gns3.User](MaxCachedUsers, nil, ttl),
		userIDs: expirable.NewLRU[string, string](MaxCachedUsers, nil, 24*time.Hour)}
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func bearerToken(c *gin.Context) string {
	h := c.GetHeader("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// RequireUser authenticates the bearer token by asking GNS3 who it belongs to.
//
// A checked token is trusted for the Authenticator's TTL (30 s by default) and a user's project
// access for the live topology's AccessTTL (as long), so a user typing one message after another
// costs GNS3 no request. What a revoked token means: GNS3 checks the token itself on every
// request the copilot makes with it (each tool call, each direct read), so a token GNS3 no longer
// accepts (signed out, user disabled or deleted, expired) cannot change or read anything in GNS3
// through the copilot. What the caches still allow for at most their TTL after the revocation is
// what the copilot answers from its own memory: the chat history, and the topology of a project
// the token could read a moment ago. Any answer of GNS3 that refuses the token ends that at once:
// the token is forgotten (here for every route, in livetopo for the project check).
//
// When the token is not remembered, its check and the route's prefetches (the project check of
// a chat route, the user's groups for a new message) are asked at the same time: three GNS3
// round trips on the first message after a pause become one.
func (a *Authenticator) RequireUser(c *gin.Context) {
	token := bearerToken(c)
	if token == "" {
		c.Header("WWW-Authenticate", "Bearer")
		respond.Error(c, http.StatusUnauthorized, "Sign in first: send your GNS3 token as 'Authorization: Bearer <token>'.")
		return
	}
	key := tokenKey(token)
	client := a.gns3.WithToken(token)
	user, ok := a.users.Get(key)
	if !ok {
		known, _ := a.userIDs.Get(key)
		waits := make([]func(), len(a.prefetch))
		for i, p := range a.prefetch {
			waits[i] = p(c, client, known)
		}
		u, err := client.CurrentUser(c.Request.Context())
		for _, wait := range waits {
			wait()
		}
		if err != nil {
			if errors.Is(err, gns3.ErrUnauthorized) {
				c.Header("WWW-Authenticate", "Bearer")
			}
			respond.GNS3Error(c, err, "Checking your GNS3 token")
			return
		}
		if !u.IsActive && !u.IsSuperadmin {
			respond.Error(c, http.StatusForbidden, "Your GNS3 account is disabled.")
			return
		}
		user = *u
		a.users.Add(key, user)
		a.userIDs.Add(key, user.UserID)
	}
	c.Set(ctxCaller, &Caller{ID: user.UserID, Username: user.Username, Superadmin: user.IsSuperadmin, Token: token, GNS3: client})
	c.Next()
	if c.Writer.Status() == http.StatusUnauthorized {
		// GNS3 refused the token while serving this request: it is not trusted any longer.
		a.users.Remove(key)
		a.userIDs.Remove(key)
	}
}

// RequireSuperadmin lets only a GNS3 superadmin past; anyone else reads refusal.
func RequireSuperadmin(refusal string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !CallerOf(c).Superadmin {
			respond.Error(c, http.StatusForbidden, refusal)
			return
		}
		c.Next()
	}
}

// UserID is the authenticated caller's id, "" before or without authentication (a request log
// reads it for every request).
func UserID(c *gin.Context) string {
	if u, ok := c.Get(ctxCaller); ok {
		return u.(*Caller).ID
	}
	return ""
}
