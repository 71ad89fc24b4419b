package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/web"
)

func get(t *testing.T, h http.Handler, method, path string, headers map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

func TestIndexServedAtRoot(t *testing.T) {
	res := get(t, web.Handler(), http.MethodGet, "/", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	b := body(t, res)
	assert.Contains(t, b, "<title>GNS3 Copilot</title>")
	assert.Contains(t, b, `<script type="module" src="app.js"></script>`)
	assert.NotContains(t, b, "<script>", "no inline script: the CSP forbids it")
	assert.NotContains(t, b, "style=", "no inline style: the CSP forbids it")
}

func TestContentTypes(t *testing.T) {
	h := web.Handler()
	for path, want := range map[string]string{
		"/index.html":      "text/html; charset=utf-8",
		"/app.js":          "text/javascript; charset=utf-8",
		"/markdown.js":     "text/javascript; charset=utf-8",
		"/sse.js":          "text/javascript; charset=utf-8",
		"/app.css":         "text/css; charset=utf-8",
		"/favicon.svg":     "image/svg+xml",
		"/conversation.js": "text/javascript; charset=utf-8",
	} {
		res := get(t, h, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, want, res.Header.Get("Content-Type"), path)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), path)
		assert.NotEmpty(t, body(t, res), path)
	}
}

func TestSecurityHeaders(t *testing.T) {
	for _, path := range []string{"/", "/app.js", "/no-such-file.js"} {
		res := get(t, web.Handler(), http.MethodGet, path, nil)
		csp := res.Header.Get("Content-Security-Policy")
		require.NotEmpty(t, csp, path)
		assert.Equal(t, web.ContentSecurityPolicy, csp)
		for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
			"frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "require-trusted-types-for 'script'"} {
			assert.Contains(t, csp, directive, path)
		}
		// Only the page's own origin: no scheme, host, wildcard or inline/eval escape hatch.
		for _, forbidden := range []string{"http:", "https:", "data:", "*", "'unsafe-inline'", "'unsafe-eval'", "blob:"} {
			assert.NotContains(t, csp, forbidden, path)
		}
		assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), path)
		assert.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"), path)
	}
}

func TestUnknownAsset404(t *testing.T) {
	h := web.Handler()
	for _, path := range []string{"/nope.js", "/static/app.js", "/package.json", "/../web.go", "/app.js/", "/settings"} {
		res := get(t, h, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, path)
		assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"), path)
	}
}

func TestCachingRevalidatesWithETag(t *testing.T) {
	h := web.Handler()
	res := get(t, h, http.MethodGet, "/app.js", nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
	etag := res.Header.Get("ETag")
	require.NotEmpty(t, etag)

	again := get(t, h, http.MethodGet, "/app.js", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
	assert.Empty(t, body(t, again))

	other := get(t, h, http.MethodGet, "/app.css", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusOK, other.StatusCode)

	missing := get(t, h, http.MethodGet, "/missing.css", nil)
	assert.Equal(t, "no-store", missing.Header.Get("Cache-Control"))
}

func TestGzipWhenAccepted(t *testing.T) {
	h := web.Handler()
	plain := get(t, h, http.MethodGet, "/app.js", nil)
	want := body(t, plain)
	assert.Empty(t, plain.Header.Get("Content-Encoding"))

	res := get(t, h, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	assert.Contains(t, res.Header.Values("Vary"), "Accept-Encoding")
	assert.NotEqual(t, plain.Header.Get("ETag"), res.Header.Get("ETag"), "each encoding has its own ETag")
	zr, err := gzip.NewReader(bytes.NewReader([]byte(body(t, res))))
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, want, string(got))

	refused := get(t, h, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "gzip;q=0"})
	assert.Empty(t, refused.Header.Get("Content-Encoding"))
}

func TestHeadAndMethods(t *testing.T) {
	h := web.Handler()
	head := get(t, h, http.MethodHead, "/", nil)
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Empty(t, body(t, head))
	assert.NotEmpty(t, head.Header.Get("Content-Length"))

	post := get(t, h, http.MethodPost, "/", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, post.StatusCode)
	assert.Equal(t, "GET, HEAD", post.Header.Get("Allow"))
}

// The page must never hand model or device text to an HTML parser; the CSP's Trusted Types
// enforce that in the browser, and this keeps the sources honest too.
func TestNoHTMLSinksInScripts(t *testing.T) {
	h := web.Handler()
	for _, name := range []string{"app.js", "api.js", "conversation.js", "dom.js", "icons.js", "markdown.js", "settings.js", "sse.js", "toolcards.js", "topology.js",
		"answer.js", "approvals.js", "capturecard.js", "composer.js", "exercise.js", "exportmenu.js", "liverecord.js", "liveturn.js", "page.js", "projects.js", "sessions.js"} {
		src := body(t, get(t, h, http.MethodGet, "/"+name, nil))
		require.NotEmpty(t, src, name)
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser", "createContextualFragment"} {
			assert.False(t, strings.Contains(src, sink), "%s uses %s", name, sink)
		}
	}
}
