package auth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// engine serves /who behind RequireUser, /admin behind RequireSuperadmin too, and /refused, a
// route whose GNS3 call refuses the token (as any route may).
func engine(t *testing.T) (*fakegns3.Server, *gin.Engine) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	g.AddUser("teacher", "teacher-token", true)
	a := auth.New(gns3.NewServer(g.URL, 5*time.Second), time.Minute)
	r := gin.New()
	r.GET("/who", a.RequireUser, func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"id": auth.UserID(c), "name": auth.CallerOf(c).Username})
	})
	r.GET("/admin", a.RequireUser, auth.RequireSuperadmin("Only the teacher may look."), func(c *gin.Context) {
		c.Status(http.StatusNoContent)
	})
	r.GET("/refused", a.RequireUser, func(c *gin.Context) { c.Status(http.StatusUnauthorized) })
	return g, r
}

func get(r http.Handler, path, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

func message(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Message string }
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
	return body.Message
}

func TestNoTokenIsAskedToSignIn(t *testing.T) {
	g, r := engine(t)
	w := get(r, "/who", "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"))
	require.Contains(t, message(t, w), "Sign in first")
	require.Zero(t, g.Count(fakegns3.OpCurrentUser), "no token, no question to GNS3")
}

func TestTokenGNS3RefusesIsRefused(t *testing.T) {
	_, r := engine(t)
	w := get(r, "/who", "nobody's-token")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"))
}

// A checked token is trusted for the TTL: the second request asks GNS3 nothing. A route whose
// GNS3 call refused the token makes the next request check it again.
func TestCheckedTokenIsRememberedUntilGNS3RefusesIt(t *testing.T) {
	g, r := engine(t)
	w := get(r, "/who", "alice-token")
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), `"name":"alice"`)
	require.Equal(t, http.StatusOK, get(r, "/who", "alice-token").Code)
	require.Equal(t, 1, g.Count(fakegns3.OpCurrentUser))

	require.Equal(t, http.StatusUnauthorized, get(r, "/refused", "alice-token").Code)
	require.Equal(t, http.StatusOK, get(r, "/who", "alice-token").Code)
	require.Equal(t, 2, g.Count(fakegns3.OpCurrentUser), "the refused token was checked again")
}

func TestOnlySuperadminsPassRequireSuperadmin(t *testing.T) {
	_, r := engine(t)
	w := get(r, "/admin", "alice-token")
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Equal(t, "Only the teacher may look.", message(t, w))
	require.Equal(t, http.StatusNoContent, get(r, "/admin", "teacher-token").Code)
}
