package gns3

import (
	"context"
	"net/http"
	"time"
)

// Snapshot is one saved state of a project (GET /v3/projects/{p}/snapshots).
type Snapshot struct {
	SnapshotID string `json:"snapshot_id"`
	Name       string `json:"name"`
	ProjectID  string `json:"project_id"`
	// CreatedAt is Unix seconds (UTC), as GNS3 sends it.
	CreatedAt int64 `json:"created_at"`
}

// Created is when the snapshot was taken.
func (s Snapshot) Created() time.Time { return time.Unix(s.CreatedAt, 0).UTC() }

// CreateSnapshot is POST /v3/projects/{p}/snapshots (201). GNS3 refuses a name the project
// already has (409) and a closed project (403).
func (c *Client) CreateSnapshot(ctx context.Context, projectID, name string) (*Snapshot, error) {
	var s Snapshot
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/snapshots", projectID), map[string]string{"name": name}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSnapshots is GET /v3/projects/{p}/snapshots, oldest first.
func (c *Client) ListSnapshots(ctx context.Context, projectID string) ([]Snapshot, error) {
	ss := []Snapshot{}
	if err := c.get(ctx, pathf("/v3/projects/%s/snapshots", projectID), &ss); err != nil {
		return nil, err
	}
	return ss, nil
}

// DeleteSnapshot is DELETE /v3/projects/{p}/snapshots/{s} (204).
func (c *Client) DeleteSnapshot(ctx context.Context, projectID, snapshotID string) error {
	return c.send(ctx, http.MethodDelete, pathf("/v3/projects/%s/snapshots/%s", projectID, snapshotID), nil, nil)
}

// RestoreSnapshot is POST /v3/projects/{p}/snapshots/{s}/restore (201, the project reopened).
// GNS3 closes the project, replaces it with the snapshot and opens it again: every node and
// link gets a new ID (names stay), nodes come back stopped, link filters come back as they were
// at the snapshot and no link comes back suspended. Anything that holds node or link IDs must
// look them up again by name.
func (c *Client) RestoreSnapshot(ctx context.Context, projectID, snapshotID string) (*Project, error) {
	var p Project
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/snapshots/%s/restore", projectID, snapshotID), struct{}{}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
