package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/gns3"
)

// Caller is the authenticated caller as a front door of another package (MCP) sees it.
type Caller struct {
	ID         string
	Username   string
	Superadmin bool
	// Token is the caller's GNS3 token; GNS3 is a client bound to it.
	Token string
	GNS3  *gns3.Client
}

// RequireUser authenticates the request exactly as the chat API does: the bearer token is the
// caller's GNS3 token, checked against GNS3 (answers cached briefly). Mounted by front doors
// of other packages.
func (s *Server) RequireUser(c *gin.Context) { s.requireUser(c) }

// CallerOf is the caller RequireUser authenticated.
func CallerOf(c *gin.Context) Caller {
	u := currentUser(c)
	return Caller{ID: u.ID, Username: u.Username, Superadmin: u.Superadmin, Token: u.Token, GNS3: u.GNS3}
}

// Log is the server's logger, for front doors mounted on it.
func (s *Server) Log() *slog.Logger { return s.log }

// Abort answers an error in the API's own shape, {"message": …}.
func Abort(c *gin.Context, status int, message string) { abort(c, status, message) }
