// Package web is the copilot's chat page: plain HTML, CSS and JavaScript embedded in the binary
// and served with a strict Content-Security-Policy, so the page works on a machine that reaches
// nothing but the copilot itself.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// The explicit patterns keep static/package.json (which only tells Node that the page's
// scripts are ES modules, for their unit tests) out of the binary.
//
//go:embed static/*.html static/*.js static/*.css static/*.svg
var files embed.FS

// ContentSecurityPolicy allows the page to load and talk to its own origin only. Trusted Types
// with no policy make the browser itself refuse any HTML string written into the DOM
// (innerHTML and friends), so model or device output can only ever become text.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'; object-src 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

type asset struct {
	contentType string
	body        []byte
	etag        string
	gzipped     []byte // nil when compressing does not pay
	gzipETag    string
}

// Handler serves the page at / and its assets by name. Everything is revalidated on every load
// (Cache-Control: no-cache with a strong ETag): the asset names carry no version, and a stale
// script talking to a newer API is worse than a 304 round trip.
func Handler() http.Handler {
	assets, err := load(files)
	if err != nil {
		// The files are compiled in; failing to read them is a broken build, not a runtime condition.
		panic("web: reading embedded assets: " + err.Error())
	}
	return &handler{assets: assets}
}

func load(fsys fs.FS) (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(fsys, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		a := &asset{contentType: ct, body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		if buf.Len() < len(body)*9/10 {
			a.gzipped = buf.Bytes()
			a.gzipETag = `"` + hex.EncodeToString(sum[:12]) + `-gz"`
		}
		out[strings.TrimPrefix(p, "static/")] = a
		return nil
	})
	return out, err
}

type handler struct {
	assets map[string]*asset
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), interest-cohort=()")

	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	a, ok := h.assets[name]
	if !ok || strings.Contains(name, "/") {
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("Not found: " + r.URL.Path + "\n"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte("The chat page is read-only: use GET.\n"))
		return
	}

	body, etag := a.body, a.etag
	if a.gzipped != nil {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			body, etag = a.gzipped, a.gzipETag
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		hd.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		// "gzip;q=0" is an explicit refusal.
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
