package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// LiveTopology is the process's live view of the projects in use (package livetopo). Every
// method that takes a client checks that client's user's access itself.
type LiveTopology interface {
	Project(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error)
	Read(ctx context.Context, c *gns3.Client, projectID string) (*livetopo.Snapshot, error)
	CheckAccess(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error)
	Hold(projectID string) (release func())
	Changes(projectID string, since uint64) ([]livetopo.Change, uint64, <-chan struct{}, bool)
}

// lookupProject reads the project for the project check: from the live topology when there is
// one (no GNS3 round trip while it is current), else from GNS3.
func (s *Server) lookupProject(c *gin.Context, id string) (*gns3.Project, error) {
	if s.deps.Live != nil {
		return s.deps.Live.Project(c.Request.Context(), currentUser(c).GNS3, id)
	}
	return currentUser(c).GNS3.GetProject(c.Request.Context(), id)
}

// The page's picture of the lab: compact nodes and links, in GNS3's own field names.
type topoPort struct {
	Name          string `json:"name"`
	ShortName     string `json:"short_name,omitempty"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
}

type topoNode struct {
	NodeID   string     `json:"node_id"`
	Name     string     `json:"name"`
	NodeType string     `json:"node_type"`
	Status   string     `json:"status"`
	X        int        `json:"x"`
	Y        int        `json:"y"`
	Width    int        `json:"width,omitempty"`
	Height   int        `json:"height,omitempty"`
	Ports    []topoPort `json:"ports"`
}

type topoLinkEnd struct {
	NodeID        string `json:"node_id"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	Label         string `json:"label,omitempty"`
}

type topoLink struct {
	LinkID    string           `json:"link_id"`
	Capturing bool             `json:"capturing"`
	Suspend   bool             `json:"suspend"`
	Filters   gns3.LinkFilters `json:"filters,omitempty"`
	// Conditions says the link's filters and suspension in words, as the model reads them.
	Conditions string        `json:"conditions,omitempty"`
	Nodes      []topoLinkEnd `json:"nodes"`
}

type topoProject struct {
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
}

func viewNode(n *gns3.Node) topoNode {
	v := topoNode{NodeID: n.NodeID, Name: n.Name, NodeType: n.NodeType, Status: n.Status, X: n.X, Y: n.Y,
		Width: n.Width, Height: n.Height, Ports: make([]topoPort, 0, len(n.Ports))}
	for _, p := range n.Ports {
		v.Ports = append(v.Ports, topoPort{Name: p.Name, ShortName: p.ShortName, AdapterNumber: p.AdapterNumber, PortNumber: p.PortNumber})
	}
	return v
}

func viewLink(l *gns3.Link) topoLink {
	v := topoLink{LinkID: l.LinkID, Capturing: l.Capturing, Suspend: l.Suspend, Filters: l.Filters, Conditions: tools.ConditionText(l),
		Nodes: make([]topoLinkEnd, 0, len(l.Nodes))}
	for _, e := range l.Nodes {
		end := topoLinkEnd{NodeID: e.NodeID, AdapterNumber: e.AdapterNumber, PortNumber: e.PortNumber}
		if e.Label != nil {
			end.Label = e.Label.Text
		}
		v.Nodes = append(v.Nodes, end)
	}
	return v
}

func viewProject(p *gns3.Project) topoProject {
	return topoProject{ProjectID: p.ProjectID, Name: p.Name, Status: p.Status}
}

type topologySnapshotEvent struct {
	Type    string      `json:"type"`
	Version uint64      `json:"version"`
	Live    bool        `json:"live"`
	Project topoProject `json:"project"`
	Nodes   []topoNode  `json:"nodes"`
	Links   []topoLink  `json:"links"`
}

type topologyChangeEvent struct {
	Type    string       `json:"type"`
	Version uint64       `json:"version"`
	Action  string       `json:"action"`
	Node    *topoNode    `json:"node,omitempty"`
	Link    *topoLink    `json:"link,omitempty"`
	Project *topoProject `json:"project,omitempty"`
}

func snapshotFrame(s *livetopo.Snapshot) []byte {
	ev := topologySnapshotEvent{Type: relay.TypeTopologySnapshot, Version: s.Version, Live: s.Live,
		Project: viewProject(&s.Project), Nodes: make([]topoNode, 0, len(s.Nodes)), Links: make([]topoLink, 0, len(s.Links))}
	for i := range s.Nodes {
		ev.Nodes = append(ev.Nodes, viewNode(&s.Nodes[i]))
	}
	for i := range s.Links {
		ev.Links = append(ev.Links, viewLink(&s.Links[i]))
	}
	b, _ := json.Marshal(ev)
	return b
}

func changeFrame(c livetopo.Change) []byte {
	ev := topologyChangeEvent{Type: relay.TypeTopologyChange, Version: c.Version, Action: c.Action}
	switch {
	case c.Node != nil:
		n := viewNode(c.Node)
		ev.Node = &n
	case c.Link != nil:
		l := viewLink(c.Link)
		ev.Link = &l
	case c.Project != nil:
		p := viewProject(c.Project)
		ev.Project = &p
	}
	b, _ := json.Marshal(ev)
	return b
}

// topologyStream sends the project's topology as SSE: a full snapshot first, then each change
// as it happens, and a new snapshot whenever the changes in between cannot be known (the live
// copy was read again after a gap). The caller's access is checked again while the stream runs.
// It writes through the same sseWriter as a turn's stream, so a client that stops reading is
// dropped after WriteTimeout in the same way.
func (s *Server) topologyStream(c *gin.Context) {
	if s.deps.Live == nil {
		abort(c, http.StatusNotFound, "The live topology is turned off on this server (--live-topology=false).")
		return
	}
	ctx := c.Request.Context()
	u := currentUser(c)
	pid := currentProject(c).ProjectID
	snap, err := s.deps.Live.Read(ctx, u.GNS3, pid)
	if err != nil {
		abortGNS3(c, err, "Reading the project's topology")
		return
	}
	release := s.deps.Live.Hold(pid)
	defer release()

	w, err := s.startSSE(c)
	defer w.end()
	if err == nil {
		w.frame("", relay.TypeTopologySnapshot, snapshotFrame(snap))
		err = w.send()
	}
	if err != nil {
		s.dropStream(err, "topology", pid)
		return
	}

	heartbeat, _ := json.Marshal(relay.Payload{Type: relay.TypeHeartbeat})
	version, live := snap.Version, snap.Live
	tick := time.NewTicker(s.deps.Heartbeat)
	defer tick.Stop()
	for {
		changes, v, next, ok := s.deps.Live.Changes(pid, version)
		if ok {
			for _, ch := range changes {
				w.frame("", relay.TypeTopologyChange, changeFrame(ch))
			}
			if len(changes) > 0 {
				if err := w.send(); err != nil {
					s.dropStream(err, "topology", pid)
					return
				}
			}
			version = v
		} else if live || (next != nil && v != version) {
			// The changes since the last frame are unknown (a re-read, or the live copy came up
			// after a direct read): send the whole picture again. A copy still being read for the
			// first time (no version yet) is waited for: reading GNS3 again meanwhile would only
			// repeat the direct read just sent.
			if snap, err = s.deps.Live.Read(ctx, u.GNS3, pid); err != nil {
				s.endTopologyStream(c, w, err)
				return
			}
			w.frame("", relay.TypeTopologySnapshot, snapshotFrame(snap))
			if err := w.send(); err != nil {
				s.dropStream(err, "topology", pid)
				return
			}
			version, live = snap.Version, snap.Live
			if live {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		case <-tick.C:
			if _, err := s.deps.Live.CheckAccess(ctx, u.GNS3, pid); err != nil {
				s.endTopologyStream(c, w, err)
				return
			}
			w.frame("", relay.TypeHeartbeat, heartbeat)
			if err := w.send(); err != nil {
				s.dropStream(err, "topology", pid)
				return
			}
		}
	}
}

func (s *Server) endTopologyStream(c *gin.Context, w *sseWriter, err error) {
	if c.Request.Context().Err() != nil {
		return
	}
	msg, _ := json.Marshal(relay.Payload{Type: relay.TypeError, Error: "The topology can no longer be read: " + err.Error()})
	w.frame("", relay.TypeError, msg)
	_ = w.send()
}
