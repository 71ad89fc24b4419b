// Package respond writes the copilot's HTTP errors in GNS3's own shape, {"message": …}, for
// every front door on the engine (the chat API, authentication, MCP).
package respond

import (
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Error answers with GNS3's error shape, {"message": ...}, so a client of GNS3's API reads
// our errors the way it reads GNS3's.
func Error(c *gin.Context, status int, message string) {
	c.AbortWithStatusJSON(status, gin.H{"message": message})
}

// GNS3Error turns an error from the GNS3 server into the answer a person can act on.
func GNS3Error(c *gin.Context, err error, what string) {
	var apiErr *gns3.APIError
	switch {
	case errors.Is(err, gns3.ErrUnreachable):
		Error(c, http.StatusBadGateway, "The GNS3 server cannot be reached right now; check that it is running. ("+err.Error()+")")
	case errors.Is(err, gns3.ErrUnauthorized):
		Error(c, http.StatusUnauthorized, "Your GNS3 session has expired or the token is invalid; sign in again.")
	case errors.As(err, &apiErr) && apiErr.Status < 500:
		Error(c, apiErr.Status, what+": "+apiErr.Message)
	default:
		Error(c, http.StatusBadGateway, what+": the GNS3 server answered with an error: "+err.Error())
	}
}

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
