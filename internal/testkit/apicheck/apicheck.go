// Package apicheck validates HTTP exchanges against the copilot's OpenAPI document
// (api/openapi.json, as served at /openapi.json), so that tests fail as soon as the code and the
// document drift apart: a route the document does not describe, a status it does not list, a
// body or an SSE frame that does not match its schema.
package apicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

// Checker validates exchanges against the document.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
}

var load = sync.OnceValues(func() (*Checker, error) {
	raw, err := api.OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("routing the OpenAPI document: %w", err)
	}
	openapi3filter.RegisterBodyDecoder("text/event-stream", decodeEventStream)
	// The Markdown session export is text, checked as a string.
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	return &Checker{doc: doc, router: router}, nil
})

// New returns the checker of the served document (loaded once per test binary).
func New() (*Checker, error) { return load() }

// Document is the parsed document.
func (c *Checker) Document() *openapi3.T { return c.doc }

// apiPath says whether a path belongs to the API rather than to the chat page's files, which
// are served for any other path.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/v3/") || p == "/healthz" || p == "/metrics" || p == "/openapi.json" || p == "/mcp"
}

// Check validates one exchange. The request is validated when the server accepted it (a
// request the document calls invalid must not succeed); a refused request only needs its
// answer to be a documented error. A route the document does not know must answer 404 or 405.
func (c *Checker) Check(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if !apiPath(req.URL.Path) {
		return nil
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	// The document's server is "/": match on the path whatever host the test server has.
	r.URL.Scheme, r.URL.Host, r.Host = "", "", ""
	route, params, err := c.router.FindRoute(r)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("route %s %s is not in the OpenAPI document (api/openapi.json), yet it answered %d: describe it there",
			req.Method, req.URL.Path, status)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	var problems []string
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			problems = append(problems, "request: "+err.Error())
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		problems = append(problems, fmt.Sprintf("response %d: %v", status, err))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s %s (operation %s) does not match the OpenAPI document:\n%s",
			req.Method, req.URL.Path, route.Operation.OperationID, strings.Join(problems, "\n"))
	}
	return nil
}

// Transport checks every exchange that goes through it and hands problems to report. A
// response is checked when its body is closed; a stream the client left early is checked up
// to its last whole frame.
func (c *Checker) Transport(base http.RoundTripper, report func(error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		var reqBody []byte
		if req.Body != nil {
			b, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			reqBody = b
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
		resp, err := base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		// A body the client closed unread is read to its end for the check, except a stream's.
		drain := !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
		rec := &recordedBody{body: resp.Body, drain: drain}
		rec.done = func() {
			if err := c.Check(req, reqBody, resp.StatusCode, resp.Header, rec.buf.Bytes()); err != nil {
				report(err)
			}
		}
		resp.Body = rec
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type recordedBody struct {
	body  io.ReadCloser
	drain bool
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	done  func()
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	b.buf.Write(p[:n])
	b.mu.Unlock()
	return n, err
}

func (b *recordedBody) Close() error {
	if b.drain {
		b.mu.Lock()
		_, _ = io.Copy(&b.buf, io.LimitReader(b.body, 16<<20))
		b.mu.Unlock()
	}
	err := b.body.Close()
	b.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.done()
	})
	return err
}

// decodeEventStream reads an SSE body as the document describes it: an array of frames
// {id, event, data}, data parsed as JSON. A last frame cut off by a client that hung up is left
// out.
func decodeEventStream(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	frames := []any{}
	rd := ssetest.NewReader(r)
	for {
		f, err := rd.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return frames, nil
		}
		if err != nil {
			return nil, err
		}
		if len(f.Other) > 0 {
			return nil, fmt.Errorf("SSE frame %d: unknown field %q", len(frames), f.Other[0])
		}
		frame := map[string]any{}
		if f.ID != "" {
			frame["id"] = f.ID
		}
		if f.Event != "" {
			frame["event"] = f.Event
		}
		if f.Data != "" {
			var v any
			if err := json.Unmarshal([]byte(f.Data), &v); err != nil {
				return nil, fmt.Errorf("SSE frame %d: data is not JSON: %w", len(frames), err)
			}
			frame["data"] = v
		}
		frames = append(frames, frame)
	}
}
