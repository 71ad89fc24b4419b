package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

const topologyTemplate = "gns3://projects/{project_id}/topology"

// TopologyURI is the topology resource of a project.
func TopologyURI(projectID string) string { return "gns3://projects/" + projectID + "/topology" }

// topologyProject reads the project id out of a topology resource URI.
func topologyProject(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "gns3://projects/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/topology")
	if !ok {
		return "", false
	}
	if _, err := uuid.Parse(id); err != nil {
		return "", false
	}
	return id, true
}

// snapshot reads a project's topology as the caller may see it: from the live copy, or from
// GNS3 when the live topology is turned off.
func (f *frontDoor) snapshot(ctx context.Context, caller auth.Caller, projectID string) (*livetopo.Snapshot, error) {
	if f.d.Live != nil {
		return f.d.Live.Read(ctx, caller.GNS3, projectID)
	}
	return livetopo.ReadDirect(ctx, caller.GNS3, projectID, nil)
}

func (s *session) readTopology(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	caller, ok := callerOf(req.Extra)
	if !ok {
		return nil, errors.New("unauthenticated")
	}
	pid, ok := topologyProject(req.Params.URI)
	if !ok {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	snap, err := s.f.snapshot(ctx, caller, pid)
	if err != nil {
		if errors.Is(err, gns3.ErrNotFound) || errors.Is(err, gns3.ErrForbidden) {
			// Someone else's project looks exactly like one that does not exist.
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		}
		return nil, fmt.Errorf("reading the topology: %w", err)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// subscribe watches a project's live topology for the session and tells it when it changes.
func (s *session) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	caller, ok := callerOf(req.Extra)
	if !ok {
		return errors.New("unauthenticated")
	}
	pid, ok := topologyProject(req.Params.URI)
	if !ok {
		return sdk.ResourceNotFoundError(req.Params.URI)
	}
	if s.f.d.Live == nil {
		return errors.New("change notifications need the live topology, which is turned off on this server")
	}
	snap, err := s.f.d.Live.Read(ctx, caller.GNS3, pid)
	if err != nil {
		if errors.Is(err, gns3.ErrNotFound) || errors.Is(err, gns3.ErrForbidden) {
			return sdk.ResourceNotFoundError(req.Params.URI)
		}
		return fmt.Errorf("reading the topology: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, watching := s.watches[req.Params.URI]; watching {
		return nil
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.watches[req.Params.URI] = cancel
	s.closing.Do(func() {
		// Watches end with the session.
		go func() {
			_ = req.Session.Wait()
			s.stopWatches()
		}()
	})
	go s.watch(wctx, caller, pid, req.Params.URI, snap)
	return nil
}

func (s *session) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cancel, ok := s.watches[req.Params.URI]; ok {
		cancel()
		delete(s.watches, req.Params.URI)
	}
	return nil
}

func (s *session) stopWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri, cancel := range s.watches {
		cancel()
		delete(s.watches, uri)
	}
}

// accessRecheck is how often a watch checks that its user may still see the project.
const accessRecheck = 30 * time.Second

// watch sends notifications/resources/updated whenever the live copy of the project changes,
// until the subscription, the session or the user's access ends.
func (s *session) watch(ctx context.Context, caller auth.Caller, projectID, uri string, snap *livetopo.Snapshot) {
	live := s.f.d.Live
	release := live.Hold(projectID)
	defer release()
	notify := func() {
		if err := s.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil && ctx.Err() == nil {
			s.f.log.Debug("notifying a topology change", "uri", uri, "error", err)
		}
	}
	version, isLive := snap.Version, snap.Live
	tick := time.NewTicker(accessRecheck)
	defer tick.Stop()
	for {
		changes, v, next, ok := live.Changes(projectID, version)
		switch {
		case ok:
			if len(changes) > 0 {
				notify()
			}
			version = v
		case isLive || next != nil:
			// What changed in between is unknown (a re-read): say it changed.
			fresh, err := live.Read(ctx, caller.GNS3, projectID)
			if err != nil {
				return
			}
			version, isLive = fresh.Version, fresh.Live
			notify()
			if isLive {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		case <-tick.C:
			if _, err := live.CheckAccess(ctx, caller.GNS3, projectID); err != nil {
				return
			}
		}
	}
}

// The two tools that help an agent find its way: which projects there are, and opening one.
var (
	listProjectsTool = &sdk.Tool{
		Name:        "list_gns3_projects",
		Description: "List the GNS3 projects you can see, with their project_id and status (opened or closed). Lab tools need an opened project's project_id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
	openProjectTool = &sdk.Tool{
		Name:        "open_gns3_project",
		Description: "Open a GNS3 project so lab tools can work on it (the topology itself is not changed).",
		InputSchema: WithProjectID(json.RawMessage(`{"type":"object","properties":{}}`)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
)

func (s *session) listProjects(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	caller, ok := callerOf(req.Extra)
	if !ok {
		return nil, errors.New("unauthenticated")
	}
	ps, err := caller.GNS3.ListProjects(ctx)
	if err != nil {
		return failure(listProjectsTool.Name, "Listing your GNS3 projects failed: "+err.Error()), nil
	}
	items := make([]tools.Item, 0, len(ps))
	for _, p := range ps {
		items = append(items, tools.Item{ID: p.ProjectID, Name: p.Name, Status: tools.StatusSuccess, Result: "status: " + p.Status})
	}
	r := tools.Collect(items)
	r.Metadata = map[string]any{"tool_name": listProjectsTool.Name, "version": tools.FormatVersion}
	return standardResult(r.JSON(), nil), nil
}

func (s *session) openProject(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	caller, ok := callerOf(req.Extra)
	if !ok {
		return nil, errors.New("unauthenticated")
	}
	name := openProjectTool.Name
	_, pid, err := splitArguments(req.Params.Arguments)
	if err != nil {
		return failure(name, err.Error()), nil
	}
	p, err := caller.GNS3.OpenProject(ctx, pid)
	switch {
	case errors.Is(err, gns3.ErrNotFound):
		return failure(name, fmt.Sprintf("Project '%s' not found.", pid)), nil
	case errors.Is(err, gns3.ErrForbidden):
		return failure(name, fmt.Sprintf("You do not have access to project '%s'.", pid)), nil
	case err != nil:
		return failure(name, "Opening the project failed: "+err.Error()), nil
	}
	r := tools.Collect([]tools.Item{{ID: p.ProjectID, Name: p.Name, Status: tools.StatusSuccess, Result: "status: " + p.Status}})
	r.Metadata = map[string]any{"tool_name": name, "version": tools.FormatVersion}
	return standardResult(r.JSON(), nil), nil
}
