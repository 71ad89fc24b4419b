package activities

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// LiveTopology is the process's live topology (package livetopo).
type LiveTopology interface {
	Read(ctx context.Context, c *gns3.Client, projectID string) (*livetopo.Snapshot, error)
	Refresh(ctx context.Context, projectID string) error
}

// readProject is the project as the turn's user may see it now: the live copy while it is
// current, else a direct read.
func (a *Activities) readProject(ctx context.Context, c *gns3.Client, projectID string) (*livetopo.Snapshot, error) {
	if a.Live != nil {
		return a.Live.Read(ctx, c, projectID)
	}
	return livetopo.ReadDirect(ctx, c, projectID, nil)
}

// refreshAfter brings the live copy up to date after a tool changed the lab, so the next model
// call and the turn's closing mark include the change even if its notification is still on the
// way; otherwise the next turn would report the copilot's own change as made outside the chat.
func (a *Activities) refreshAfter(ctx context.Context, ref workflows.WorkRef, tool string) {
	if a.Live == nil {
		return
	}
	if t, ok := a.Tools.Lookup(tool); !ok || !t.Mutating() {
		return
	}
	if err := a.Live.Refresh(ctx, ref.ProjectID); err != nil && ctx.Err() == nil {
		a.logger(ctx).Warn("refreshing the live topology after a change", "project", ref.ProjectID, "error", err)
	}
}

// outsideChanges says what changed in the lab since the session's previous turn ended (in the
// GNS3 GUI, the web UI or another session), for a turn's first model call; nil when nothing did
// or nothing is known.
func (a *Activities) outsideChanges(ctx context.Context, ref workflows.WorkRef, now *livetopo.Snapshot) []string {
	if a.Marks == nil || now == nil {
		return nil
	}
	m, err := a.Marks.Get(ctx, ref.SessionID)
	if err != nil {
		if !errors.Is(err, models.ErrNotFound) {
			a.logger(ctx).Warn("reading the session's topology mark", "session", ref.SessionID, "error", err)
		}
		return nil
	}
	var before livetopo.Summary
	if m.ProjectID != ref.ProjectID || json.Unmarshal([]byte(m.Summary), &before) != nil {
		return nil
	}
	return livetopo.Drift(before, livetopo.Summarize(now))
}

// markTopology remembers the lab as the turn leaves it, so the next turn can tell changes made
// outside the chat from the copilot's own (outsideChanges).
func (a *Activities) markTopology(ctx context.Context, ref workflows.WorkRef) {
	if a.Marks == nil {
		return
	}
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		return // a retried finalizer after the credentials were dropped: the mark is written
	}
	snap, err := a.readProject(ctx, a.GNS3.WithToken(token), ref.ProjectID)
	if err != nil {
		a.logger(ctx).Warn("reading the topology for the session's mark", "session", ref.SessionID, "error", err)
		return
	}
	b, _ := json.Marshal(livetopo.Summarize(snap))
	if err := a.Marks.Put(ctx, &models.TopologyMark{SessionID: ref.SessionID, ProjectID: ref.ProjectID, Summary: string(b)}); err != nil {
		a.logger(ctx).Warn("storing the session's topology mark", "session", ref.SessionID, "error", err)
	}
}
