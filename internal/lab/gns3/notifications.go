package gns3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Notification is one line of a project's notification stream: {"action": ..., "event": ...}.
// The event is a node, a link, a project or compute statistics, depending on the action.
type Notification struct {
	Action string          `json:"action"`
	Event  json.RawMessage `json:"event"`
}

// Notification actions the copilot reads; GNS3 sends others too (drawings, snapshots, logs).
const (
	ActionPing          = "ping"
	ActionNodeCreated   = "node.created"
	ActionNodeUpdated   = "node.updated"
	ActionNodeDeleted   = "node.deleted"
	ActionLinkCreated   = "link.created"
	ActionLinkUpdated   = "link.updated"
	ActionLinkDeleted   = "link.deleted"
	ActionProjectClosed = "project.closed"
	// ActionProjectUpdated carries the project (renamed, opened); read as a project change.
	ActionProjectUpdated = "project.updated"
	// ActionSnapshotRestored follows a restore, after the new nodes and links were announced.
	// GNS3 never announces the removal of the old ones: a copy kept from notifications must read
	// the project again.
	ActionSnapshotRestored = "snapshot.restored"
)

// ProjectNotifications opens GET /v3/projects/{id}/notifications, a stream of one JSON object a
// line that stays open until ctx ends or the server goes away. The request's timeout bounds only
// the wait for the answer's headers, never the stream itself. The caller closes the body.
func (c *Client) ProjectNotifications(ctx context.Context, projectID string) (io.ReadCloser, error) {
	return c.openStream(ctx, pathf("/v3/projects/%s/notifications", projectID), "application/json")
}

// openStream sends a GET whose answer is read for as long as the caller wants (a notification
// or capture stream): the server's timeout bounds only the wait for the answer's headers, never
// the body. accept, when set, is sent as the Accept header. The caller closes the body, which
// ends the request's context.
func (c *Client) openStream(ctx context.Context, path, accept string) (_ io.ReadCloser, err error) {
	began, status := time.Now(), 0
	defer func() { c.s.report(http.MethodGet, path, status, err, began) }()
	if c.s.base == "" {
		return nil, &UnreachableError{URL: "(not configured)", Method: http.MethodGet, Path: path, Err: errors.New("no GNS3 server URL configured")}
	}
	sctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.s.base+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	headers := time.AfterFunc(c.s.timeout, cancel)
	resp, err := c.s.http.Do(req)
	timedOut := !headers.Stop()
	noAnswer := &UnreachableError{URL: c.s.base, Method: http.MethodGet, Path: path, TimedOut: true, Err: fmt.Errorf("no answer within %s", c.s.timeout)}
	if err != nil {
		cancel()
		if timedOut && ctx.Err() == nil {
			return nil, noAnswer
		}
		return nil, c.s.transportError(ctx, sctx, http.MethodGet, path, err)
	}
	if timedOut {
		// The timer fired as the answer arrived: its body is already cut off.
		resp.Body.Close()
		cancel()
		return nil, noAnswer
	}
	status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		cancel()
		return nil, apiError(resp.StatusCode, http.MethodGet, path, data, c.token)
	}
	return &streamBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

// streamBody ends the request's context with the body, so nothing outlives Close.
type streamBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *streamBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// TokenDigest identifies the client's credential without revealing it (a SHA-256 of the token),
// for caches keyed by user.
func (c *Client) TokenDigest() string {
	sum := sha256.Sum256([]byte(c.token))
	return hex.EncodeToString(sum[:])
}
