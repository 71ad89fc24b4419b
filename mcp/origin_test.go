package mcp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

func TestOriginGuardRefusesForeignPagesBeforeAnythingRuns(t *testing.T) {
	gin.SetMode(gin.TestMode)
	serve := func(allowed []string, host, origin string) (int, string, bool) {
		reached := false
		r := gin.New()
		r.POST(Path, OriginGuard(allowed), func(c *gin.Context) { reached = true; c.Status(http.StatusOK) })
		req := httptest.NewRequest(http.MethodPost, "http://"+host+Path, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code, w.Body.String(), reached
	}
	for _, c := range []struct {
		name, host, origin string
		allowed            []string
		ok                 bool
	}{
		{"no Origin: not a browser", "127.0.0.1:8088", "", nil, true},
		{"the copilot's own address", "127.0.0.1:8088", "http://127.0.0.1:8088", nil, true},
		{"localhost", "localhost:8088", "http://LOCALHOST:8088", nil, true},
		{"IPv6 loopback", "[::1]:8088", "http://[::1]:8088", nil, true},
		{"default port", "10.1.2.3", "http://10.1.2.3:80", nil, true},
		{"another port of the same host", "127.0.0.1:8088", "http://127.0.0.1:9000", nil, false},
		{"another scheme's default port", "127.0.0.1", "https://127.0.0.1", nil, false},
		{"a foreign page", "127.0.0.1:8088", "http://evil.example", nil, false},
		{"DNS rebinding: the Host names the page's domain too", "evil.example:8088", "http://evil.example:8088", nil, false},
		{"a sandboxed page", "127.0.0.1:8088", "null", nil, false},
		{"listed", "copilot.example", "https://copilot.example", []string{"https://copilot.example/"}, true},
		{"listed, another", "copilot.example", "https://evil.example", []string{"https://copilot.example"}, false},
		{"any, explicitly", "127.0.0.1:8088", "http://evil.example", []string{"*"}, true},
	} {
		code, body, reached := serve(c.allowed, c.host, c.origin)
		if c.ok {
			require.Equal(t, http.StatusOK, code, c.name)
			require.True(t, reached, c.name)
			continue
		}
		require.Equal(t, http.StatusForbidden, code, c.name)
		require.False(t, reached, "%s: nothing behind the guard ran", c.name)
		require.Contains(t, body, "Origin "+c.origin+" may not use the copilot's MCP endpoint", c.name)
		require.Contains(t, body, "--mcp-allowed-origins", c.name)
	}
}
