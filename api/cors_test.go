package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCORSAllowsOnlyListedOrigins(t *testing.T) {
	s := newTestServer(Deps{CORSOrigins: []string{"http://gns3.lab:3080/"}})

	pre := httptest.NewRequest(http.MethodOptions, "/v3/projects/x/chat/stream", nil)
	pre.Header.Set("Origin", "http://gns3.lab:3080")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, pre)
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Equal(t, "http://gns3.lab:3080", w.Header().Get("Access-Control-Allow-Origin"))
	allowed := strings.ToLower(w.Header().Get("Access-Control-Allow-Headers")) // header names are case-insensitive
	require.Contains(t, allowed, "authorization")
	require.Contains(t, allowed, "last-event-id")

	get := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	get.Header.Set("Origin", "http://gns3.lab:3080")
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, get)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "http://gns3.lab:3080", w.Header().Get("Access-Control-Allow-Origin"))

	evil := httptest.NewRequest(http.MethodOptions, "/v3/projects/x/chat/stream", nil)
	evil.Header.Set("Origin", "http://evil.example")
	evil.Header.Set("Access-Control-Request-Method", "POST")
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, evil)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
	require.Contains(t, w.Body.String(), "--cors-origins", "the refusal says what to change")

	// A plain request from another origin is served without CORS headers: the browser keeps the
	// answer from that page, and clients that are not browsers are not affected.
	plain := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	plain.Header.Set("Origin", "http://evil.example")
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, plain)
	require.Equal(t, http.StatusOK, w.Code)
	require.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
}
