package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/gns3"
)

// abort answers with GNS3's error shape, {"message": ...}, so a client of GNS3's API reads
// our errors the way it reads GNS3's.
func abort(c *gin.Context, status int, message string) {
	c.AbortWithStatusJSON(status, gin.H{"message": message})
}

// abortGNS3 turns an error from the GNS3 server into the answer a person can act on.
func abortGNS3(c *gin.Context, err error, what string) {
	var apiErr *gns3.APIError
	switch {
	case errors.Is(err, gns3.ErrUnreachable):
		abort(c, http.StatusBadGateway, "The GNS3 server cannot be reached right now; check that it is running. ("+err.Error()+")")
	case errors.Is(err, gns3.ErrUnauthorized):
		abort(c, http.StatusUnauthorized, "Your GNS3 session has expired or the token is invalid; sign in again.")
	case errors.As(err, &apiErr) && apiErr.Status < 500:
		abort(c, apiErr.Status, what+": "+apiErr.Message)
	default:
		abort(c, http.StatusBadGateway, what+": the GNS3 server answered with an error: "+err.Error())
	}
}

// internalError hides details of our own failures from clients but logs them.
func (s *Server) internalError(c *gin.Context, err error, what string) {
	s.log.Error(what, "error", err, "path", c.FullPath())
	abort(c, http.StatusInternalServerError, what+"; the copilot logged the details.")
}
