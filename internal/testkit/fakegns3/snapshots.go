package fakegns3

import (
	"encoding/json"
	"maps"
	"net/http"
	"sort"
	"time"
)

// Snapshot routes, answering as in snapshot-create-201.json, snapshots-list.json and
// snapshot-restore.json.
const (
	OpCreateSnapshot  Op = "POST /v3/projects/{project_id}/snapshots"
	OpListSnapshots   Op = "GET /v3/projects/{project_id}/snapshots"
	OpDeleteSnapshot  Op = "DELETE /v3/projects/{project_id}/snapshots/{snapshot_id}"
	OpRestoreSnapshot Op = "POST /v3/projects/{project_id}/snapshots/{snapshot_id}/restore"
)

// ActionSnapshotRestored is the notification GNS3 sends once a restore is done.
const ActionSnapshotRestored = "snapshot.restored"

// snapshot is a project's nodes and links as they were, kept apart from the live ones.
type snapshot struct {
	id, name  string
	createdAt int64
	nodes     []*node
	links     []*link
}

// Snapshot is a read-back of one snapshot.
type Snapshot struct {
	ID, Name  string
	CreatedAt time.Time
	Nodes     int
	Links     int
}

func (sn *snapshot) readBack() Snapshot {
	return Snapshot{ID: sn.id, Name: sn.name, CreatedAt: time.Unix(sn.createdAt, 0).UTC(), Nodes: len(sn.nodes), Links: len(sn.links)}
}

type snapshotOut struct {
	Name       string `json:"name"`
	SnapshotID string `json:"snapshot_id"`
	ProjectID  string `json:"project_id"`
	CreatedAt  int64  `json:"created_at"`
}

func (sn *snapshot) json(projectID string) snapshotOut {
	return snapshotOut{Name: sn.name, SnapshotID: sn.id, ProjectID: projectID, CreatedAt: sn.createdAt}
}

func (s *Server) snapshotRoutes(add func(Op, bool, handler)) {
	add(OpCreateSnapshot, true, s.createSnapshotHandler)
	add(OpListSnapshots, true, s.listSnapshots)
	add(OpDeleteSnapshot, true, s.deleteSnapshot)
	add(OpRestoreSnapshot, true, s.restoreSnapshotHandler)
}

func (n *node) clone() *node {
	c := *n
	c.ports = append([]Port(nil), n.ports...)
	if n.tags != nil {
		c.tags = append([]string{}, n.tags...)
	}
	c.properties = maps.Clone(n.properties)
	return &c
}

func (l *link) clone() *link {
	c := *l
	c.filters = cloneFilters(l.filters)
	return &c
}

// takeSnapshot records the project as it is; the caller holds s.mu and checked the name.
func (s *Server) takeSnapshot(p *project, name string) *snapshot {
	sn := &snapshot{id: newID(), name: name, createdAt: time.Now().Unix()}
	for _, n := range p.nodes {
		sn.nodes = append(sn.nodes, n.clone())
	}
	for _, l := range p.links {
		sn.links = append(sn.links, l.clone())
	}
	p.snapshots = append(p.snapshots, sn)
	sort.SliceStable(p.snapshots, func(i, j int) bool {
		a, b := p.snapshots[i], p.snapshots[j]
		return a.createdAt < b.createdAt || (a.createdAt == b.createdAt && a.name < b.name)
	})
	return sn
}

// restore replaces the project's nodes and links with the snapshot's the way GNS3 imports a
// snapshot: every node and link gets a new ID, names and console ports stay, nodes come back
// stopped, filters come back as they were, no link comes back suspended, and every snapshot of
// the project gets a new ID. GNS3 announces the
// new nodes and links and then snapshot.restored, but not the removal of the old ones.
func (s *Server) restore(p *project, sn *snapshot) {
	for _, l := range p.links {
		s.stopCapture(l)
	}
	newIDs := map[string]string{}
	p.nodes, p.links, p.names = nil, nil, map[string]bool{}
	for _, old := range sn.nodes {
		n := old.clone()
		n.id = newID()
		newIDs[old.id] = n.id
		n.status, n.pendingPolls = "stopped", 0
		if builtinType(n.nodeType) {
			n.status = "started"
		}
		p.nodes = append(p.nodes, n)
		p.names[n.name] = true
	}
	for _, old := range sn.links {
		l := old.clone()
		l.id, l.suspend = newID(), false
		for i := range l.ends {
			l.ends[i].NodeID = newIDs[l.ends[i].NodeID]
		}
		p.links = append(p.links, l)
	}
	// GNS3 imports the snapshot as the project and opens it again, which reads the snapshots
	// from disk under new IDs: every snapshot ID known before the restore is gone.
	for _, other := range p.snapshots {
		other.id = newID()
	}
	for _, n := range p.nodes {
		s.emitNode(p, n, "node.created")
	}
	for _, l := range p.links {
		s.emitLink(p, l, "link.created")
	}
	s.emit(p.id, ActionSnapshotRestored, map[string]any{"snapshot_id": sn.id, "name": sn.name, "created_at": sn.createdAt,
		"description": "Snapshot '" + sn.name + "' taken on " + time.Unix(sn.createdAt, 0).UTC().Format("2006-01-02 at 15:04:05"),
		"filename":    sn.name + ".gns3snapshot", "project_id": p.id})
}

func (s *Server) createSnapshotHandler(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Snapshot.Allocate", true)
	if e != nil {
		return reply{}, e
	}
	obj, e := bodyObject(body)
	if e != nil {
		return reply{}, e
	}
	raw, ok := obj["name"]
	if !ok {
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'missing', 'loc': ('body', 'name'), 'msg': 'Field required', 'input': {}}]")
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'string_type', 'loc': ('body', 'name'), 'msg': 'Input should be a valid string', 'input': %s}]", pyRepr(string(raw)))
	}
	for _, sn := range p.snapshots {
		if sn.name == name {
			return reply{}, errf(http.StatusConflict, "The snapshot name %s already exists", name)
		}
	}
	if running(p) != "" {
		return reply{}, errf(http.StatusConflict, "%s", MustBeStopped)
	}
	return reply{201, s.takeSnapshot(p, name).json(p.id)}, nil
}

// MustBeStopped is GNS3's answer to a snapshot of a project whose nodes run: a snapshot is an
// export, and GNS3 exports only a project whose every node (built-in ones aside) is stopped.
const MustBeStopped = "Project must be stopped in order to export it"

// running names the first node of the project that keeps GNS3 from exporting it: any status
// but stopped counts (suspended too), built-in nodes, which always run, do not.
func running(p *project) string {
	for _, n := range p.nodes {
		if n.status != "stopped" && !builtinType(n.nodeType) {
			return n.name
		}
	}
	return ""
}

func (s *Server) listSnapshots(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Snapshot.Audit", false)
	if e != nil {
		return reply{}, e
	}
	out := make([]snapshotOut, 0, len(p.snapshots))
	for _, sn := range p.snapshots {
		out = append(out, sn.json(p.id))
	}
	return reply{200, out}, nil
}

// snapshotFor resolves {snapshot_id} in an opened project, as GNS3's get_snapshot does.
func (s *Server) snapshotFor(r *http.Request, u *user, privilege string) (*project, int, *httpErr) {
	p, e := s.projectFor(r, u, privilege, true)
	if e != nil {
		return nil, 0, e
	}
	if e := validUUID(r, "snapshot_id"); e != nil {
		return nil, 0, e
	}
	id := r.PathValue("snapshot_id")
	for i, sn := range p.snapshots {
		if sn.id == id {
			return p, i, nil
		}
	}
	return nil, 0, errf(http.StatusNotFound, "Snapshot ID %s doesn't exist", id)
}

func (s *Server) deleteSnapshot(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, i, e := s.snapshotFor(r, u, "Snapshot.Allocate")
	if e != nil {
		return reply{}, e
	}
	p.snapshots = append(p.snapshots[:i:i], p.snapshots[i+1:]...)
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) restoreSnapshotHandler(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, i, e := s.snapshotFor(r, u, "Snapshot.Restore")
	if e != nil {
		return reply{}, e
	}
	s.restore(p, p.snapshots[i])
	return reply{201, s.projectJSON(p)}, nil
}

// TakeSnapshot records the project as it is now, as a user in the GNS3 GUI does; like GNS3, only
// while every node is stopped.
func (s *Server) TakeSnapshot(projectID, name string) Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	for _, sn := range p.snapshots {
		if sn.name == name {
			s.t.Fatalf("fakegns3: project %s already has a snapshot %q", projectID, name)
		}
	}
	if n := running(p); n != "" {
		s.t.Fatalf("fakegns3: GNS3 takes no snapshot of project %s while %s runs (%s)", projectID, n, MustBeStopped)
	}
	return s.takeSnapshot(p, name).readBack()
}

// Snapshots returns the project's snapshots, oldest first.
func (s *Server) Snapshots(projectID string) []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	out := make([]Snapshot, 0, len(p.snapshots))
	for _, sn := range p.snapshots {
		out = append(out, sn.readBack())
	}
	return out
}
