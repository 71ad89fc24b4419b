package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/gns3-copilot/gns3-copilot/gns3"
)

// authUser is the caller, as GNS3 knows them. Token is forwarded to GNS3 on the caller's behalf
// so GNS3's own permissions apply to everything the copilot does for them.
type authUser struct {
	ID         string
	Username   string
	Superadmin bool
	Token      string
	GNS3       *gns3.Client
}

const (
	ctxUser         = "gns3copilot.user"
	ctxProject      = "gns3copilot.project"
	ctxProjectCheck = "gns3copilot.project-check"
	// ctxChecksProject marks a route whose project is checked (checksProject).
	ctxChecksProject = "gns3copilot.checks-project"
)

// userCache remembers GET /v3/access/users/me answers briefly, keyed by a hash of the token so
// the cache itself holds no usable secret. It is bounded: past maxCachedUsers the least
// recently used entries go first.
type userCache = expirable.LRU[string, gns3.User]

const maxCachedUsers = 10000

func newUserCache(ttl time.Duration) *userCache {
	return expirable.NewLRU[string, gns3.User](maxCachedUsers, nil, ttl)
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

// requireUser authenticates the bearer token by asking GNS3 who it belongs to.
//
// A checked token is trusted for UserCacheTTL (30 s by default) and a user's project access for
// the live topology's AccessTTL (as long), so a user typing one message after another costs
// GNS3 no request. What a revoked token means: GNS3 checks the token itself on every request the
// copilot makes with it (each tool call, each direct read), so a token GNS3 no longer accepts
// (signed out, user disabled or deleted, expired) cannot change or read anything in GNS3 through
// the copilot. What the caches still allow for at most their TTL after the revocation is what
// the copilot answers from its own memory: the chat history, and the topology of a project the
// token could read a moment ago. Any answer of GNS3 that refuses the token ends that at once:
// the token is forgotten (here for every route, in livetopo for the project check).
//
// When the token is not remembered, its check and the project check of a chat route are asked
// at the same time (prefetchProjectCheck), and so are the user's groups for a new message when
// the token was seen before (prefetchGroups): three GNS3 round trips on the first message after
// a pause become one.
func (s *Server) requireUser(c *gin.Context) {
	token := bearerToken(c)
	if token == "" {
		c.Header("WWW-Authenticate", "Bearer")
		abort(c, http.StatusUnauthorized, "Sign in first: send your GNS3 token as 'Authorization: Bearer <token>'.")
		return
	}
	key := tokenKey(token)
	client := s.deps.GNS3.WithToken(token)
	user, ok := s.users.Get(key)
	if !ok {
		ctx := c.Request.Context()
		prefetched := s.prefetchProjectCheck(c, client)
		warmed := s.prefetchGroups(c, key, client)
		u, err := client.CurrentUser(ctx)
		prefetched()
		warmed()
		if err != nil {
			if errors.Is(err, gns3.ErrUnauthorized) {
				c.Header("WWW-Authenticate", "Bearer")
			}
			abortGNS3(c, err, "Checking your GNS3 token")
			return
		}
		if !u.IsActive && !u.IsSuperadmin {
			abort(c, http.StatusForbidden, "Your GNS3 account is disabled.")
			return
		}
		user = *u
		s.users.Add(key, user)
		s.userIDs.Add(key, user.UserID)
	}
	c.Set(ctxUser, &authUser{ID: user.UserID, Username: user.Username, Superadmin: user.IsSuperadmin, Token: token, GNS3: client})
	c.Next()
	if c.Writer.Status() == http.StatusUnauthorized {
		// GNS3 refused the token while serving this request: it is not trusted any longer.
		s.users.Remove(key)
		s.userIDs.Remove(key)
	}
}

// checksProject marks a route whose chain runs requireOpenedProject after requireUser, so the
// project check may start while the token is checked.
func checksProject(c *gin.Context) { c.Set(ctxChecksProject, true) }

// prefetchGroups reads ahead, for a new message (POST …/chat/stream), the groups that choose the
// turn's LLM configuration, when the token was seen before and so its user is known; it returns
// a function that waits for the read.
func (s *Server) prefetchGroups(c *gin.Context, key string, client *gns3.Client) (wait func()) {
	warmer, ok := s.deps.LLM.(groupsWarmer)
	if !ok || c.Request.Method != http.MethodPost || !strings.HasSuffix(c.FullPath(), "/chat/stream") {
		return func() {}
	}
	userID, ok := s.userIDs.Get(key)
	if !ok {
		return func() {}
	}
	ctx := c.Request.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		warmer.WarmGroups(ctx, userID, client)
	}()
	return func() { <-done }
}

// projectCheck is the outcome of a project check made while the token was being checked.
type projectCheck struct {
	project *gns3.Project
	err     error
}

// prefetchProjectCheck starts the project check of the route's project (when it has one) through
// the live topology, and returns a function that waits for it and hands the outcome to
// requireOpenedProject, which reports it exactly as if it had asked itself. It is the same check
// with the same token, only asked before GNS3 has said whose token it is.
func (s *Server) prefetchProjectCheck(c *gin.Context, client *gns3.Client) (wait func()) {
	id := c.Param("project_id")
	if s.deps.Live == nil || !c.GetBool(ctxChecksProject) {
		return func() {}
	}
	if _, err := uuid.Parse(id); err != nil {
		return func() {}
	}
	ctx := c.Request.Context()
	done := make(chan projectCheck, 1)
	go func() {
		p, err := s.deps.Live.Project(ctx, client, id)
		done <- projectCheck{project: p, err: err}
	}()
	return func() { c.Set(ctxProjectCheck, <-done) }
}

func currentUser(c *gin.Context) *authUser { return c.MustGet(ctxUser).(*authUser) }

// requireOpenedProject checks that the project exists, that the caller may see it, and that it
// is opened: the copilot only works on a project the user has open in GNS3.
func (s *Server) requireOpenedProject(c *gin.Context) {
	id := c.Param("project_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "project_id must be a UUID, got '"+Truncate(id, 80)+"'.")
		return
	}
	var p *gns3.Project
	var err error
	if v, ok := c.Get(ctxProjectCheck); ok {
		p, err = v.(projectCheck).project, v.(projectCheck).err
	} else {
		p, err = s.lookupProject(c, id)
	}
	if err != nil {
		if errors.Is(err, gns3.ErrNotFound) {
			abort(c, http.StatusNotFound, "Project '"+id+"' not found.")
			return
		}
		if errors.Is(err, gns3.ErrForbidden) {
			abort(c, http.StatusForbidden, "You do not have access to project '"+id+"'.")
			return
		}
		abortGNS3(c, err, "Looking up the project")
		return
	}
	if p.Status != gns3.ProjectOpened {
		abort(c, http.StatusForbidden, "Project must be opened to use chat. Current status: "+p.Status)
		return
	}
	c.Set(ctxProject, p)
	c.Next()
}

func currentProject(c *gin.Context) *gns3.Project { return c.MustGet(ctxProject).(*gns3.Project) }

// Truncate shortens s to at most n bytes for an error message, never cutting a character in two.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
