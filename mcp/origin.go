package mcp

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/respond"
)

// OriginGuard refuses, before anything else runs, a request to /mcp sent by a browser page of
// another origin: Streamable HTTP servers must check Origin, or a page the user visits could
// reach a copilot on their machine or network through DNS rebinding. A request without Origin
// (every non-browser MCP client) passes; so does the copilot's own origin and any of allowed
// ("*" allows every origin).
//
// The copilot's own origin is the address the request was sent to, when that address is an IP
// address or localhost. A name is never taken from the request itself: under DNS rebinding
// the page's origin and the Host header name the attacker's domain alike, so a copilot served
// under a name lists that name in allowed.
func OriginGuard(allowed []string) gin.HandlerFunc {
	anyOrigin := slices.Contains(allowed, "*")
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" || anyOrigin || ownOrigin(c.Request, origin) || listedOrigin(allowed, origin) {
			c.Next()
			return
		}
		respond.Error(c, http.StatusForbidden, "Origin "+respond.Truncate(origin, 200)+" may not use the copilot's MCP endpoint: "+
			"browser pages of other sites are refused. An MCP client that is not a browser sends no Origin; an operator who "+
			"means to allow this origin adds it to --mcp-allowed-origins.")
	}
}

func listedOrigin(allowed []string, origin string) bool {
	return slices.ContainsFunc(allowed, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) })
}

// ownOrigin reports whether origin is the scheme and address r was sent to, and that address
// is an IP address or localhost.
func ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	oh, op := splitHostPort(u.Host, u.Scheme)
	rh, rp := splitHostPort(r.Host, scheme)
	if u.Scheme != scheme || !strings.EqualFold(oh, rh) || op != rp {
		return false
	}
	return strings.EqualFold(oh, "localhost") || net.ParseIP(oh) != nil
}

// splitHostPort splits host[:port], with the scheme's port when none is given.
func splitHostPort(hostport, scheme string) (host, port string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), ""
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return host, port
}
