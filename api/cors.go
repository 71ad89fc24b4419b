package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-contrib/cors"
	"github.com/gin-gonic/gin"
)

// corsMiddleware lets the GNS3 web UI, served from the GNS3 server's own origin, call this API
// from the browser. Only the origins the operator lists are allowed; credentials travel in the
// Authorization header, never in cookies, so no Allow-Credentials is needed. gin-contrib/cors
// writes the headers; in front of it, a refused preflight gets a message that says which flag
// to change, and a plain request from another origin goes on without CORS headers (the browser
// then keeps the answer from the page) instead of the library's bare 403.
func (s *Server) corsMiddleware() gin.HandlerFunc {
	allow := cors.New(cors.Config{
		AllowOriginFunc:  s.originAllowed,
		AllowMethods:     []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"},
		AllowHeaders:     []string{"Authorization", "Content-Type", "Last-Event-ID", RequestIDHeader},
		ExposeHeaders:    []string{RequestIDHeader, TotalCountHeader},
		MaxAge:           10 * time.Minute,
		AllowCredentials: false,
	})
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin != "" && !s.originAllowed(origin) {
			if c.Request.Method == http.MethodOptions {
				abort(c, http.StatusForbidden, "Origin "+origin+" is not allowed; add it to --cors-origins.")
				return
			}
			c.Next()
			return
		}
		allow(c)
	}
}

func (s *Server) originAllowed(origin string) bool {
	return slices.Contains(s.deps.CORSOrigins, "*") ||
		slices.ContainsFunc(s.deps.CORSOrigins, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) })
}
