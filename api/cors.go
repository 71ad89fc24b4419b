package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
)

// cors lets the GNS3 web UI, served from the GNS3 server's own origin, call this API from the
// browser. Only the origins the operator lists are allowed; credentials travel in the
// Authorization header, never in cookies, so no Allow-Credentials is needed.
func (s *Server) cors(c *gin.Context) {
	origin := c.GetHeader("Origin")
	if origin == "" || !s.originAllowed(origin) {
		if c.Request.Method == http.MethodOptions && origin != "" {
			abort(c, http.StatusForbidden, "Origin "+origin+" is not allowed; add it to --cors-origins.")
			return
		}
		c.Next()
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

func (s *Server) originAllowed(origin string) bool {
	return slices.Contains(s.deps.CORSOrigins, "*") ||
		slices.ContainsFunc(s.deps.CORSOrigins, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) })
}
