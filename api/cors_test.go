package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCORSAllowsOnlyListedOrigins(t *testing.T) {
	s := New(Deps{CORSOrigins: []string{"http://gns3.lab:3080/"}})

	pre := httptest.NewRequest(http.MethodOptions, "/v3/projects/x/chat/stream", nil)
	pre.Header.Set("Origin", "http://gns3.lab:3080")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, pre)
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Equal(t, "http://gns3.lab:3080", w.Header().Get("Access-Control-Allow-Origin"))
	require.Contains(t, w.Header().Get("Access-Control-Allow-Headers"), "Authorization")
	require.Contains(t, w.Header().Get("Access-Control-Allow-Headers"), "Last-Event-ID")

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
}
