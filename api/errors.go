package api

import (
	"github.com/gin-gonic/gin"
	"net/http"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
)

// abort and abortGNS3 answer in GNS3's error shape, {"message": …}, as every front door does.
var (
	abort     = respond.Error
	abortGNS3 = respond.GNS3Error
)

// internalError hides details of our own failures from clients but logs them.
func (s *Server) internalError(c *gin.Context, err error, what string) {
	s.log.Error(what, "error", err, "path", c.FullPath())
	abort(c, http.StatusInternalServerError, what+"; the copilot logged the details.")
}

// currentUser is the caller the route's requireUser authenticated.
func currentUser(c *gin.Context) *auth.Caller { return auth.CallerOf(c) }
