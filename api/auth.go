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
	ctxUser    = "gns3copilot.user"
	ctxProject = "gns3copilot.project"
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
		u, err := client.CurrentUser(c.Request.Context())
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
	}
	c.Set(ctxUser, &authUser{ID: user.UserID, Username: user.Username, Superadmin: user.IsSuperadmin, Token: token, GNS3: client})
	c.Next()
}

func currentUser(c *gin.Context) *authUser { return c.MustGet(ctxUser).(*authUser) }

// requireOpenedProject checks that the project exists, that the caller may see it, and that it
// is opened: the copilot only works on a project the user has open in GNS3.
func (s *Server) requireOpenedProject(c *gin.Context) {
	id := c.Param("project_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "project_id must be a UUID, got '"+truncate(id, 80)+"'.")
		return
	}
	p, err := s.lookupProject(c, id)
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

// truncate shortens s to at most n bytes for an error message, never cutting a character in two.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
