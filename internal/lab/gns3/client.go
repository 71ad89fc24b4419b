// Package gns3 is a typed client for the subset of the GNS3 v3 controller
// REST API the copilot uses. Every call carries the calling user's token so
// GNS3's own permissions apply, has an explicit timeout, and maps failures
// to Go errors (*APIError with the HTTP status and GNS3's message, or
// *UnreachableError) usable with errors.Is.
package gns3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout is used when NewServer is given a non-positive timeout.
const DefaultTimeout = 10 * time.Second

// maxBody caps how much of an answer is read; a topology is far smaller.
const maxBody = 32 << 20

// Server is one GNS3 controller. It is safe for concurrent use and meant to
// be shared; per-user Clients are derived from it with WithToken.
type Server struct {
	base    string // scheme://host[:port][/prefix], no trailing slash
	host    string
	timeout time.Duration
	http    *http.Client
	observe RequestObserver
}

// RequestObserver is told of every request a Server made, for metrics: the route template
// (IDs replaced by {id}, so the values are bounded by the code's routes), how it ended
// ("2xx", "4xx", "5xx", … or "timeout", "unreachable", "cancelled") and how long it took. For
// a stream, the time is until its answer began.
type RequestObserver func(method, route, outcome string, took time.Duration)

// Observe makes s report every request to o. Call it before s is shared.
func (s *Server) Observe(o RequestObserver) *Server {
	s.observe = o
	return s
}

// report tells the observer how a request ended; status is 0 when there was no answer.
func (s *Server) report(method, path string, status int, err error, began time.Time) {
	if s.observe == nil {
		return
	}
	outcome := ""
	var ue *UnreachableError
	switch {
	case status > 0:
		outcome = strconv.Itoa(status/100) + "xx"
	case errors.As(err, &ue) && ue.TimedOut:
		outcome = "timeout"
	case errors.As(err, &ue):
		outcome = "unreachable"
	default:
		outcome = "cancelled" // the caller gave up: not the server's doing
	}
	s.observe(method, routeTemplate(path), outcome, time.Since(began))
}

// collections are the path segments followed by an ID in GNS3's routes.
var collections = map[string]bool{"projects": true, "nodes": true, "links": true, "templates": true,
	"users": true, "groups": true, "computes": true, "drawings": true, "snapshots": true, "images": true,
	"roles": true, "pools": true, "acl": true, "appliances": true}

// routeTemplate turns a request path into its route: /v3/projects/1f…/nodes/9c…/start becomes
// /v3/projects/{id}/nodes/{id}/start.
func routeTemplate(path string) string {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs); i++ {
		if collections[segs[i-1]] && segs[i] != "" {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// NewServer returns a Server for baseURL (e.g. "http://127.0.0.1:3080"; a
// missing scheme means http). timeout bounds every single request.
func NewServer(baseURL string, timeout time.Duration) *Server {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if base != "" && !strings.Contains(base, "://") {
		base = "http://" + base
	}
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = u.Hostname()
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          IdleConns,
		MaxIdleConnsPerHost:   IdleConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &Server{
		base:    base,
		host:    host,
		timeout: timeout,
		http:    &http.Client{Transport: transport},
	}
}

// BaseURL returns the normalised base URL.
func (s *Server) BaseURL() string { return s.base }

// Host returns the host part of the base URL; console_host 0.0.0.0 or ::
// means "the GNS3 host" and is replaced by it.
func (s *Server) Host() string { return s.host }

// Timeout returns the per-request timeout.
func (s *Server) Timeout() time.Duration { return s.timeout }

// IdleConns is how many connections to the GNS3 server are kept open between requests. A class
// pressing Enter together asks GNS3 who each student is, what the project is and which groups
// they are in, all at once; with 32 kept, every such wave beyond the 32nd request dialled anew and
// closed again (169 connections for 105 turns in the load benchmark, 100 with 128 kept), each one
// a TCP handshake for GNS3 too. An idle connection costs a socket and about 10 KB here, and the
// real GNS3 closes its side after a few idle seconds.
const IdleConns = 128

// WithToken returns a Client acting as the user the token belongs to.
func (s *Server) WithToken(token string) *Client { return &Client{s: s, token: token} }

// Authenticate exchanges a username and password for a bearer token.
func (s *Server) Authenticate(ctx context.Context, username, password string) (*Token, error) {
	var t Token
	body := map[string]string{"username": username, "password": password}
	if err := s.do(ctx, "", http.MethodPost, "/v3/access/users/authenticate", body, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Version answers GET /v3/version, which needs no token; useful as a health
// check.
func (s *Server) Version(ctx context.Context) (*Version, error) {
	var v Version
	if err := s.do(ctx, "", http.MethodGet, "/v3/version", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Client is a Server bound to one user's token. It is cheap to create.
type Client struct {
	s     *Server
	token string
}

// Server returns the server the client talks to.
func (c *Client) Server() *Server { return c.s }

// pathf builds an API path, escaping every argument as one path segment so
// an ID can never change which route is called.
func pathf(format string, ids ...string) string {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, args...)
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.s.do(ctx, c.token, http.MethodGet, path, nil, out)
}

func (c *Client) send(ctx context.Context, method, path string, body, out any) error {
	return c.s.do(ctx, c.token, method, path, body, out)
}

// do performs one request. body == nil sends no body at all (GNS3 treats a
// missing body differently from {}); out == nil discards the answer.
func (s *Server) do(ctx context.Context, token, method, path string, body, out any) error {
	if s.base == "" {
		return &UnreachableError{URL: "(not configured)", Method: method, Path: path, Err: errors.New("no GNS3 server URL configured")}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("GNS3 %s %s: encoding request: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, s.base+path, rd)
	if err != nil {
		return fmt.Errorf("GNS3 %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	began := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		err = s.transportError(ctx, rctx, method, path, err)
		s.report(method, path, 0, err, began)
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		err = s.transportError(ctx, rctx, method, path, err)
		s.report(method, path, 0, err, began)
		return err
	}
	s.report(method, path, resp.StatusCode, nil, began)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, method, path, data, token)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("GNS3 %s %s: unexpected answer (%d bytes): %w", method, path, len(data), err)
	}
	return nil
}

// transportError tells apart the caller giving up (its context ended: not
// the server's fault) from the server being down or slower than the timeout.
func (s *Server) transportError(parent, rctx context.Context, method, path string, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("GNS3 %s %s: %w", method, path, parent.Err())
	}
	// url.Error repeats the full URL; the base is already in the message.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		timedOut = true
	}
	if timedOut {
		err = fmt.Errorf("no answer within %s", s.timeout)
	}
	return &UnreachableError{URL: s.base, Method: method, Path: path, TimedOut: timedOut, Err: err}
}

func apiError(status int, method, path string, data []byte, token string) error {
	raw := extractMessage(data)
	if token != "" {
		raw = strings.ReplaceAll(raw, token, "[redacted]")
	}
	msg := raw
	if status == http.StatusUnprocessableEntity {
		msg = readableValidation(raw)
	}
	return &APIError{Status: status, Message: msg, Method: method, Path: path, Raw: raw}
}

// maxMessage bounds how much of GNS3's own error message is kept; tool results carry it to the
// model and the user.
const maxMessage = 500

// extractMessage reads GNS3's {"message": ...} (or FastAPI's {"detail": ...}, string or list,
// from the same server). Any other body yields "", so the status alone is reported: a proxy's
// error page or a stack trace is not something to pass on to the model and the user.
func extractMessage(data []byte) string {
	var body struct {
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	for _, f := range []json.RawMessage{body.Message, body.Detail} {
		if len(f) == 0 || string(f) == "null" {
			continue
		}
		s := string(f)
		var str string
		if json.Unmarshal(f, &str) == nil {
			s = str
		}
		if len(s) > maxMessage {
			s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
		}
		return s
	}
	return ""
}

// CurrentUser is GET /v3/access/users/me.
func (c *Client) CurrentUser(ctx context.Context) (*User, error) {
	var u User
	if err := c.get(ctx, "/v3/access/users/me", &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// UserGroups is GET /v3/access/users/{id}/groups.
func (c *Client) UserGroups(ctx context.Context, userID string) ([]Group, error) {
	gs := []Group{}
	if err := c.get(ctx, pathf("/v3/access/users/%s/groups", userID), &gs); err != nil {
		return nil, err
	}
	return gs, nil
}

// ListProjects is GET /v3/projects (only the projects the user may see).
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	ps := []Project{}
	if err := c.get(ctx, "/v3/projects", &ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// GetProject is GET /v3/projects/{id}.
func (c *Client) GetProject(ctx context.Context, projectID string) (*Project, error) {
	var p Project
	if err := c.get(ctx, pathf("/v3/projects/%s", projectID), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// OpenProject is POST /v3/projects/{id}/open.
func (c *Client) OpenProject(ctx context.Context, projectID string) (*Project, error) {
	var p Project
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/open", projectID), nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ProjectStats is GET /v3/projects/{id}/stats.
func (c *Client) ProjectStats(ctx context.Context, projectID string) (*ProjectStats, error) {
	var st ProjectStats
	if err := c.get(ctx, pathf("/v3/projects/%s/stats", projectID), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ListTemplates is GET /v3/templates.
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	ts := []Template{}
	if err := c.get(ctx, "/v3/templates", &ts); err != nil {
		return nil, err
	}
	return ts, nil
}

// ListNodes is GET /v3/projects/{p}/nodes.
func (c *Client) ListNodes(ctx context.Context, projectID string) ([]Node, error) {
	ns := []Node{}
	if err := c.get(ctx, pathf("/v3/projects/%s/nodes", projectID), &ns); err != nil {
		return nil, err
	}
	return ns, nil
}

// GetNode is GET /v3/projects/{p}/nodes/{n}.
func (c *Client) GetNode(ctx context.Context, projectID, nodeID string) (*Node, error) {
	var n Node
	if err := c.get(ctx, pathf("/v3/projects/%s/nodes/%s", projectID, nodeID), &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// CreateNodeFromTemplate creates a node from a template at x/y on the local
// compute. name may be empty (GNS3 then uses the template's name format).
func (c *Client) CreateNodeFromTemplate(ctx context.Context, projectID, templateID string, x, y int, name string) (*Node, error) {
	return c.CreateNodeWithUsage(ctx, projectID, templateID, TemplateUsage{X: x, Y: y, Name: name, ComputeID: "local"})
}

// CreateNodeWithUsage is POST /v3/projects/{p}/templates/{t} with a full
// TemplateUsage (e.g. the template's own compute).
func (c *Client) CreateNodeWithUsage(ctx context.Context, projectID, templateID string, usage TemplateUsage) (*Node, error) {
	var n Node
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/templates/%s", projectID, templateID), usage, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// UpdateNode is PUT /v3/projects/{p}/nodes/{n}.
func (c *Client) UpdateNode(ctx context.Context, projectID, nodeID string, upd NodeUpdate) (*Node, error) {
	var n Node
	if err := c.send(ctx, http.MethodPut, pathf("/v3/projects/%s/nodes/%s", projectID, nodeID), upd, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// DeleteNode is DELETE /v3/projects/{p}/nodes/{n}; GNS3 also deletes the
// node's links.
func (c *Client) DeleteNode(ctx context.Context, projectID, nodeID string) error {
	return c.send(ctx, http.MethodDelete, pathf("/v3/projects/%s/nodes/%s", projectID, nodeID), nil, nil)
}

// StartNode starts one node. GNS3 answers 422 unless a JSON body is sent.
func (c *Client) StartNode(ctx context.Context, projectID, nodeID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/%s/start", projectID, nodeID), struct{}{}, nil)
}

// StopNode stops one node (204, empty body).
func (c *Client) StopNode(ctx context.Context, projectID, nodeID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/%s/stop", projectID, nodeID), nil, nil)
}

// SuspendNode suspends one node (204, empty body).
func (c *Client) SuspendNode(ctx context.Context, projectID, nodeID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/%s/suspend", projectID, nodeID), nil, nil)
}

// ReloadNode reloads one node (204, empty body).
func (c *Client) ReloadNode(ctx context.Context, projectID, nodeID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/%s/reload", projectID, nodeID), nil, nil)
}

// StartAllNodes starts every node of the project.
func (c *Client) StartAllNodes(ctx context.Context, projectID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/start", projectID), nil, nil)
}

// StopAllNodes stops every node of the project.
func (c *Client) StopAllNodes(ctx context.Context, projectID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/stop", projectID), nil, nil)
}

// SuspendAllNodes suspends every node of the project.
func (c *Client) SuspendAllNodes(ctx context.Context, projectID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/suspend", projectID), nil, nil)
}

// ReloadAllNodes reloads every node of the project.
func (c *Client) ReloadAllNodes(ctx context.Context, projectID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/nodes/reload", projectID), nil, nil)
}

// NodeLinks is GET /v3/projects/{p}/nodes/{n}/links.
func (c *Client) NodeLinks(ctx context.Context, projectID, nodeID string) ([]Link, error) {
	ls := []Link{}
	if err := c.get(ctx, pathf("/v3/projects/%s/nodes/%s/links", projectID, nodeID), &ls); err != nil {
		return nil, err
	}
	return ls, nil
}

// ListLinks is GET /v3/projects/{p}/links.
func (c *Client) ListLinks(ctx context.Context, projectID string) ([]Link, error) {
	ls := []Link{}
	if err := c.get(ctx, pathf("/v3/projects/%s/links", projectID), &ls); err != nil {
		return nil, err
	}
	return ls, nil
}

// GetLink is GET /v3/projects/{p}/links/{l}.
func (c *Client) GetLink(ctx context.Context, projectID, linkID string) (*Link, error) {
	var l Link
	if err := c.get(ctx, pathf("/v3/projects/%s/links/%s", projectID, linkID), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// CreateLink is POST /v3/projects/{p}/links.
func (c *Client) CreateLink(ctx context.Context, projectID string, req LinkCreate) (*Link, error) {
	var l Link
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/links", projectID), req, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// DeleteLink is DELETE /v3/projects/{p}/links/{l}.
func (c *Client) DeleteLink(ctx context.Context, projectID, linkID string) error {
	return c.send(ctx, http.MethodDelete, pathf("/v3/projects/%s/links/%s", projectID, linkID), nil, nil)
}
