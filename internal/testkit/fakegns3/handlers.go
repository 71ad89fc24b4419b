package fakegns3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

type httpErr struct {
	status  int
	message string
}

func errf(status int, format string, args ...any) *httpErr {
	return &httpErr{status: status, message: fmt.Sprintf(format, args...)}
}

func denied(privilege string) *httpErr {
	return errf(http.StatusForbidden, "Permission denied (privilege %s is required)", privilege)
}

// reply is what a handler produces; status 204 means an empty body.
type reply struct {
	status int
	body   any
}

type handler func(r *http.Request, body []byte, u *user) (reply, *httpErr)

var pathIDs = []string{"project_id", "node_id", "link_id", "template_id", "user_id", "snapshot_id"}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	add := func(op Op, auth bool, h handler) {
		mux.HandleFunc(string(op), s.wrap(op, auth, h))
	}
	add(OpVersion, false, s.versionHandler)
	add(OpAuthenticate, false, s.authenticate)
	add(OpCurrentUser, true, s.currentUser)
	add(OpRefresh, false, s.refresh)
	add(OpUserGroups, true, s.userGroups)
	add(OpListProjects, true, s.listProjects)
	add(OpGetProject, true, s.getProject)
	add(OpOpenProject, true, s.openProject)
	add(OpCloseProject, true, s.closeProject)
	add(OpProjectStats, true, s.projectStats)
	add(OpListTemplates, true, s.listTemplates)
	add(OpCreateNode, true, s.createNodeFromTemplate)
	add(OpListNodes, true, s.listNodes)
	add(OpGetNode, true, s.getNode)
	add(OpUpdateNode, true, s.updateNode)
	add(OpDeleteNode, true, s.deleteNode)
	add(OpStartNode, true, s.power("start"))
	add(OpStopNode, true, s.power("stop"))
	add(OpSuspendNode, true, s.power("suspend"))
	add(OpReloadNode, true, s.power("reload"))
	add(OpStartAllNodes, true, s.powerAll("start"))
	add(OpStopAllNodes, true, s.powerAll("stop"))
	add(OpSuspendAll, true, s.powerAll("suspend"))
	add(OpReloadAllNodes, true, s.powerAll("reload"))
	add(OpNodeLinks, true, s.nodeLinks)
	add(OpListLinks, true, s.listLinks)
	add(OpCreateLink, true, s.createLinkHandler)
	add(OpGetLink, true, s.getLink)
	add(OpDeleteLink, true, s.deleteLink)
	add(OpUpdateLink, true, s.updateLink)
	add(OpLinkFilters, true, s.availableFilters)
	s.snapshotRoutes(add)
	s.captureRoutes(mux, add)
	s.webUIRoutes(mux, add)
	mux.HandleFunc(string(OpNotifications), s.notifications)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeErr(w http.ResponseWriter, e *httpErr) {
	writeJSON(w, e.status, map[string]string{"message": e.message})
}

// wrap applies what every route shares: counting, latency, authentication,
// injected failures and the state lock.
func (s *Server) wrap(op Op, auth bool, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if !s.countAndWait(op, r) {
			return
		}
		if s.hung(op, r) {
			// Never answered: the client gives up, and nothing changed.
			<-r.Context().Done()
			return
		}

		s.mu.Lock()
		defer s.mu.Unlock()
		var u *user
		if auth {
			var herr *httpErr
			if u, herr = s.authUser(r); herr != nil {
				writeErr(w, herr)
				return
			}
		}
		f := s.takeFailure(op, r)
		if f != nil && !f.AfterApply {
			writeErr(w, &httpErr{f.Status, f.Message})
			return
		}
		rep, herr := h(r, body, u)
		if f != nil {
			writeErr(w, &httpErr{f.Status, f.Message})
			return
		}
		if herr != nil {
			writeErr(w, herr)
			return
		}
		if rep.status == http.StatusNoContent {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, rep.status, rep.body)
	}
}

// countAndWait counts a request to op and waits out its latency (WithLatency plus SetLatency);
// false when the client left while it waited.
func (s *Server) countAndWait(op Op, r *http.Request) bool {
	s.mu.Lock()
	s.counts[op]++
	delay := s.baseLatency + s.latency[op]
	s.mu.Unlock()
	if delay <= 0 {
		return true
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) takeFailure(op Op, r *http.Request) *Failure {
	for i, f := range s.failures {
		if f.Op != op {
			continue
		}
		if f.ID != "" {
			match := false
			for _, k := range pathIDs {
				if r.PathValue(k) == f.ID {
					match = true
				}
			}
			if !match {
				continue
			}
		}
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				s.failures = append(s.failures[:i:i], s.failures[i+1:]...)
			}
		}
		cp := *f
		return &cp
	}
	return nil
}

func (s *Server) authUser(r *http.Request) (*user, *httpErr) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errf(http.StatusUnauthorized, "Not authenticated")
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || tok == "" {
		return nil, errf(http.StatusUnauthorized, "Not authenticated")
	}
	for _, u := range s.users {
		if u.token == tok {
			return u, nil
		}
	}
	if u := s.apiKeyUser(tok); u != nil {
		return u, nil
	}
	return nil, errf(http.StatusUnauthorized, "Could not validate credentials")
}

// validUUID answers 422 the way FastAPI/pydantic does for a bad path UUID.
func validUUID(r *http.Request, key string) *httpErr {
	v := r.PathValue(key)
	if _, err := uuid.Parse(v); err == nil && len(v) == 36 {
		return nil
	}
	detail := fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(v))
	for i, c := range v {
		if !strings.ContainsRune("0123456789abcdefABCDEF-", c) {
			detail = fmt.Sprintf("invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `%c` at %d", c, i+1)
			break
		}
	}
	return errf(http.StatusUnprocessableEntity,
		"[{'type': 'uuid_parsing', 'loc': ('path', %s), 'msg': %s, 'input': %s, 'ctx': {'error': %s}}]",
		pyRepr(key), pyRepr("Input should be a valid UUID, "+detail), pyRepr(v), pyRepr(detail))
}

func (s *Server) canAccess(u *user, p *project) bool {
	return u.superadmin || (p != nil && (p.owner == u.name || p.members[u.name]))
}

// projectFor resolves {project_id} with GNS3's order of checks: privilege,
// then path validation, then existence, then (for topology changes and
// node/link reads) that the project is opened.
func (s *Server) projectFor(r *http.Request, u *user, privilege string, needOpen bool) (*project, *httpErr) {
	id := r.PathValue("project_id")
	p := s.projects[id]
	if !s.canAccess(u, p) {
		return nil, denied(privilege)
	}
	if e := validUUID(r, "project_id"); e != nil {
		return nil, e
	}
	if p == nil {
		return nil, errf(http.StatusNotFound, "Project ID %s doesn't exist", id)
	}
	if needOpen && p.status != "opened" {
		return nil, errf(http.StatusForbidden, "The project is not opened")
	}
	return p, nil
}

func (s *Server) nodeFor(r *http.Request, u *user, privilege string) (*project, *node, *httpErr) {
	p, e := s.projectFor(r, u, privilege, true)
	if e != nil {
		return nil, nil, e
	}
	if e := validUUID(r, "node_id"); e != nil {
		return nil, nil, e
	}
	id := r.PathValue("node_id")
	n := p.node(id)
	if n == nil {
		return nil, nil, errf(http.StatusNotFound, "Node ID %s doesn't exist", id)
	}
	return p, n, nil
}

func (s *Server) versionHandler(r *http.Request, _ []byte, _ *user) (reply, *httpErr) {
	return reply{200, map[string]any{"controller_host": "127.0.0.1", "version": s.version, "local": false}}, nil
}

func (s *Server) authenticate(r *http.Request, body []byte, _ *user) (reply, *httpErr) {
	var c struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	if err := json.Unmarshal(body, &c); err != nil || c.Username == nil || c.Password == nil {
		return reply{}, errf(http.StatusUnprocessableEntity,
			"[{'type': 'missing', 'loc': ('body', 'username'), 'msg': 'Field required', 'input': {}}, {'type': 'missing', 'loc': ('body', 'password'), 'msg': 'Field required', 'input': {}}]")
	}
	u, ok := s.users[*c.Username]
	if !ok || u.password != *c.Password {
		return reply{}, errf(http.StatusUnauthorized, "Authentication was unsuccessful.")
	}
	return reply{200, map[string]string{"access_token": u.token, "token_type": "bearer"}}, nil
}

func (s *Server) currentUser(_ *http.Request, _ []byte, u *user) (reply, *httpErr) {
	return reply{200, userJSON(u)}, nil
}

// userGroups lets a superadmin read anyone's groups and a regular user only
// their own.
func (s *Server) userGroups(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	id := r.PathValue("user_id")
	if !u.superadmin && id != u.id {
		return reply{}, denied("Group.Audit")
	}
	if e := validUUID(r, "user_id"); e != nil {
		return reply{}, e
	}
	for _, x := range s.users {
		if x.id == id {
			out := make([]groupOut, 0, len(x.groups))
			for _, g := range x.groups {
				out = append(out, groupOut{Name: g.name, CreatedAt: x.created, UpdatedAt: x.created, UserGroupID: g.id})
			}
			return reply{200, out}, nil
		}
	}
	return reply{}, errf(http.StatusNotFound, "User '%s' not found", id)
}

func (s *Server) listProjects(_ *http.Request, _ []byte, u *user) (reply, *httpErr) {
	out := []projectOut{}
	for _, id := range s.projectOrder {
		if p := s.projects[id]; s.canAccess(u, p) {
			out = append(out, s.projectJSON(p))
		}
	}
	return reply{200, out}, nil
}

func (s *Server) getProject(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Project.Audit", false)
	if e != nil {
		return reply{}, e
	}
	return reply{200, s.projectJSON(p)}, nil
}

func (s *Server) openProject(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Project.Allocate", false)
	if e != nil {
		return reply{}, e
	}
	p.status = "opened"
	return reply{201, s.projectJSON(p)}, nil
}

func (s *Server) closeProject(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Project.Allocate", false)
	if e != nil {
		return reply{}, e
	}
	p.status = "closed"
	for _, n := range p.nodes {
		if !builtinType(n.nodeType) && n.status != "stopped" {
			n.status = "stopped"
			s.emitNode(p, n, "node.updated")
		}
	}
	s.emit(p.id, "project.closed", s.projectJSON(p))
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) projectStats(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Project.Audit", false)
	if e != nil {
		return reply{}, e
	}
	return reply{200, map[string]int{"nodes": len(p.nodes), "links": len(p.links), "drawings": 0, "snapshots": len(p.snapshots)}}, nil
}

func (s *Server) listTemplates(_ *http.Request, _ []byte, _ *user) (reply, *httpErr) {
	out := make([]any, 0, len(s.templates))
	for _, t := range s.templates {
		out = append(out, templateJSON(t))
	}
	return reply{200, out}, nil
}

// intField reads a required integer body field the way pydantic validates it.
func intField(obj map[string]json.RawMessage, key string, missing, bad *[]string) int {
	raw, ok := obj[key]
	if !ok {
		*missing = append(*missing, fmt.Sprintf("{'type': 'missing', 'loc': ('body', %s), 'msg': 'Field required', 'input': {}}", pyRepr(key)))
		return 0
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		*bad = append(*bad, fmt.Sprintf("{'type': 'int_parsing', 'loc': ('body', %s), 'msg': 'Input should be a valid integer, unable to parse string as an integer', 'input': %s}", pyRepr(key), pyRepr(string(raw))))
		return 0
	}
	if f != math.Trunc(f) {
		*bad = append(*bad, fmt.Sprintf("{'type': 'int_from_float', 'loc': ('body', %s), 'msg': 'Input should be a valid integer, got a number with a fractional part', 'input': %s}", pyRepr(key), string(raw)))
		return 0
	}
	return int(f)
}

func bodyObject(body []byte) (map[string]json.RawMessage, *httpErr) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errf(http.StatusUnprocessableEntity, "[{'type': 'missing', 'loc': ('body',), 'msg': 'Field required', 'input': None}]")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, errf(http.StatusUnprocessableEntity, "[{'type': 'model_attributes_type', 'loc': ('body',), 'msg': 'Input should be a valid dictionary or object to extract fields from', 'input': %s}]", pyRepr(string(body)))
	}
	return obj, nil
}

func (s *Server) createNodeFromTemplate(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Node.Allocate", false)
	if e != nil {
		return reply{}, e
	}
	if e := validUUID(r, "template_id"); e != nil {
		return reply{}, e
	}
	obj, e := bodyObject(body)
	if e != nil {
		return reply{}, e
	}
	var missing, bad []string
	x := intField(obj, "x", &missing, &bad)
	y := intField(obj, "y", &missing, &bad)
	if all := append(missing, bad...); len(all) > 0 {
		return reply{}, errf(http.StatusUnprocessableEntity, "[%s]", strings.Join(all, ", "))
	}
	tid := r.PathValue("template_id")
	var tpl *template
	for _, t := range s.templates {
		if t.ID == tid {
			tpl = t
		}
	}
	if tpl == nil {
		return reply{}, errf(http.StatusNotFound, "Template '%s' not found", tid)
	}
	if p.status != "opened" {
		return reply{}, errf(http.StatusForbidden, "The project is not opened")
	}
	// GNS3 3.0.x accepts "name" in the schema but ignores it; 3.1 honours it.
	name := ""
	if s.newerThan30() {
		if raw, ok := obj["name"]; ok {
			_ = json.Unmarshal(raw, &name)
		}
	}
	n, err := s.createNode(p, tpl, name, x, y)
	if err != nil {
		return reply{}, errf(http.StatusConflict, "%s", err.Error())
	}
	s.emitNode(p, n, "node.created")
	return reply{201, s.nodeJSON(p, n, shapeFull)}, nil
}

func (s *Server) listNodes(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Node.Audit", false)
	if e != nil {
		return reply{}, e
	}
	shape := shapeList
	if p.status != "opened" {
		shape = shapeClosed
	}
	out := make([]nodeOut, 0, len(p.nodes))
	for _, n := range p.nodes {
		out = append(out, s.nodeJSON(p, n, shape))
	}
	return reply{200, out}, nil
}

func (s *Server) getNode(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, n, e := s.nodeFor(r, u, "Node.Audit")
	if e != nil {
		return reply{}, e
	}
	return reply{200, s.nodeJSON(p, n, shapeFull)}, nil
}

func (s *Server) updateNode(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, n, e := s.nodeFor(r, u, "Node.Modify")
	if e != nil {
		return reply{}, e
	}
	obj, e := bodyObject(body)
	if e != nil {
		return reply{}, e
	}
	var name *string
	if raw, ok := obj["name"]; ok {
		if err := json.Unmarshal(raw, &name); err != nil {
			return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'string_type', 'loc': ('body', 'name'), 'msg': 'Input should be a valid string', 'input': %s}]", pyRepr(string(raw)))
		}
	}
	var missing, bad []string
	x, y := n.x, n.y
	if _, ok := obj["x"]; ok && string(obj["x"]) != "null" {
		x = intField(obj, "x", &missing, &bad)
	}
	if _, ok := obj["y"]; ok && string(obj["y"]) != "null" {
		y = intField(obj, "y", &missing, &bad)
	}
	if len(bad) > 0 {
		return reply{}, errf(http.StatusUnprocessableEntity, "[%s]", strings.Join(bad, ", "))
	}
	if name != nil && *name != "" && *name != n.name {
		if n.status == "started" && !builtinType(n.nodeType) {
			return reply{}, errf(http.StatusConflict, "Sorry, it is not possible to rename a node that is already powered on")
		}
		delete(p.names, n.name)
		newName, err := p.allocateName(*name)
		if err != nil {
			p.names[n.name] = true
			return reply{}, errf(http.StatusConflict, "%s", err.Error())
		}
		n.name = newName
	}
	n.x, n.y = x, y
	s.emitNode(p, n, "node.updated")
	return reply{200, s.nodeJSON(p, n, shapeFull)}, nil
}

func (s *Server) deleteNode(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, n, e := s.nodeFor(r, u, "Node.Allocate")
	if e != nil {
		return reply{}, e
	}
	if n.locked {
		return reply{}, errf(http.StatusConflict, "Node %s cannot be deleted because it is locked", n.name)
	}
	kept := p.links[:0]
	for _, l := range p.links {
		if l.ends[0].NodeID != n.id && l.ends[1].NodeID != n.id {
			kept = append(kept, l)
		} else {
			s.emitLink(p, l, "link.deleted")
		}
	}
	p.links = kept
	s.emitNode(p, n, "node.deleted")
	for i, x := range p.nodes {
		if x == n {
			p.nodes = append(p.nodes[:i], p.nodes[i+1:]...)
			break
		}
	}
	delete(p.names, n.name)
	return reply{status: http.StatusNoContent}, nil
}

func (s *Server) applyPower(p *project, n *node, action string) {
	if builtinType(n.nodeType) {
		return
	}
	before := n.status
	defer func() {
		if n.status != before || action == "reload" {
			s.emitNode(p, n, "node.updated")
		}
		if n.status == "started" && (before != "started" || action == "reload") {
			s.bridgesStarted(p, n)
		}
	}()
	switch action {
	case "start":
		if n.status != "started" {
			polls, ok := s.startPolls[n.id]
			if !ok {
				polls = s.defaultStartPolls
			}
			delete(s.startPolls, n.id)
			n.pendingPolls = polls
		}
		n.status = "started"
	case "stop":
		n.status, n.pendingPolls = "stopped", 0
	case "suspend":
		// VPCS has no suspend: GNS3 answers 204 and the node keeps running.
		if n.nodeType != "vpcs" && n.status == "started" {
			n.status = "suspended"
		}
	case "reload":
		n.status, n.pendingPolls = "started", 0
	}
}

func (s *Server) power(action string) handler {
	return func(r *http.Request, body []byte, u *user) (reply, *httpErr) {
		p, n, e := s.nodeFor(r, u, "Node.PowerMgmt")
		if e != nil {
			return reply{}, e
		}
		if action == "start" {
			if _, e := bodyObject(body); e != nil {
				return reply{}, e
			}
		}
		s.applyPower(p, n, action)
		return reply{status: http.StatusNoContent}, nil
	}
}

func (s *Server) powerAll(action string) handler {
	return func(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
		p, e := s.projectFor(r, u, "Node.PowerMgmt", true)
		if e != nil {
			return reply{}, e
		}
		for _, n := range p.nodes {
			s.applyPower(p, n, action)
		}
		return reply{status: http.StatusNoContent}, nil
	}
}

func (s *Server) nodeLinks(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, n, e := s.nodeFor(r, u, "Link.Audit")
	if e != nil {
		return reply{}, e
	}
	out := []linkOut{}
	for _, l := range p.links {
		if l.ends[0].NodeID == n.id || l.ends[1].NodeID == n.id {
			out = append(out, s.linkJSON(p, l, false))
		}
	}
	return reply{200, out}, nil
}

func (s *Server) listLinks(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Link.Audit", false)
	if e != nil {
		return reply{}, e
	}
	out := make([]linkOut, 0, len(p.links))
	for _, l := range p.links {
		out = append(out, s.linkJSON(p, l, false))
	}
	return reply{200, out}, nil
}

type linkEndIn struct {
	NodeID        string `json:"node_id"`
	AdapterNumber *int   `json:"adapter_number"`
	PortNumber    *int   `json:"port_number"`
	Label         *struct {
		Text string `json:"text"`
	} `json:"label"`
}

func (s *Server) createLinkHandler(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, e := s.projectFor(r, u, "Link.Allocate", true)
	if e != nil {
		return reply{}, e
	}
	obj, e := bodyObject(body)
	if e != nil {
		return reply{}, e
	}
	raw, ok := obj["nodes"]
	if !ok {
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'missing', 'loc': ('body', 'nodes'), 'msg': 'Field required', 'input': {}}]")
	}
	var ends []linkEndIn
	if err := json.Unmarshal(raw, &ends); err != nil {
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'list_type', 'loc': ('body', 'nodes'), 'msg': 'Input should be a valid list', 'input': %s}]", pyRepr(string(raw)))
	}
	if len(ends) != 2 {
		kind, cmp := "too_short", "at least"
		if len(ends) > 2 {
			kind, cmp = "too_long", "at most"
		}
		return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': '%s', 'loc': ('body', 'nodes'), 'msg': 'List should have %s 2 items after validation, not %d', 'input': []}]", kind, cmp, len(ends))
	}
	var problems []string
	for i, end := range ends {
		if _, err := uuid.Parse(end.NodeID); err != nil {
			problems = append(problems, fmt.Sprintf("{'type': 'uuid_parsing', 'loc': ('body', 'nodes', %d, 'node_id'), 'msg': 'Input should be a valid UUID', 'input': %s}", i, pyRepr(end.NodeID)))
		}
		if end.AdapterNumber == nil {
			problems = append(problems, fmt.Sprintf("{'type': 'missing', 'loc': ('body', 'nodes', %d, 'adapter_number'), 'msg': 'Field required', 'input': {}}", i))
		}
		if end.PortNumber == nil {
			problems = append(problems, fmt.Sprintf("{'type': 'missing', 'loc': ('body', 'nodes', %d, 'port_number'), 'msg': 'Field required', 'input': {}}", i))
		}
	}
	if len(problems) > 0 {
		return reply{}, errf(http.StatusUnprocessableEntity, "[%s]", strings.Join(problems, ", "))
	}
	l, herr := s.createLink(p, ends)
	if herr != nil {
		return reply{}, herr
	}
	return reply{201, s.linkJSON(p, l, true)}, nil
}

func (s *Server) createLink(p *project, ends []linkEndIn) (*link, *httpErr) {
	l := &link{id: newID()}
	for i, end := range ends {
		n := p.node(end.NodeID)
		if n == nil {
			return nil, errf(http.StatusNotFound, "Node ID %s doesn't exist", end.NodeID)
		}
		a, pt := *end.AdapterNumber, *end.PortNumber
		found := false
		for _, port := range n.ports {
			if port.Adapter == a && port.Port == pt {
				found = true
			}
		}
		if !found {
			return nil, errf(http.StatusNotFound, "Port %d/%d for %s not found", a, pt, n.name)
		}
		if p.portInUse(n.id, a, pt) || (i == 1 && l.ends[0].NodeID == n.id && l.ends[0].Adapter == a && l.ends[0].Port == pt) {
			return nil, errf(http.StatusConflict, "Port is already used")
		}
		label := fmt.Sprintf("%d/%d", a, pt)
		if end.Label != nil && end.Label.Text != "" {
			label = end.Label.Text
		}
		l.ends[i] = LinkEnd{NodeID: n.id, Adapter: a, Port: pt, Label: label}
	}
	p.links = append(p.links, l)
	s.emitLink(p, l, "link.created")
	return l, nil
}

func (s *Server) linkFor(r *http.Request, u *user, privilege string) (*project, *link, *httpErr) {
	p, e := s.projectFor(r, u, privilege, true)
	if e != nil {
		return nil, nil, e
	}
	if e := validUUID(r, "link_id"); e != nil {
		return nil, nil, e
	}
	id := r.PathValue("link_id")
	for _, l := range p.links {
		if l.id == id {
			return p, l, nil
		}
	}
	return nil, nil, errf(http.StatusNotFound, "Link ID %s doesn't exist", id)
}

func (s *Server) getLink(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Audit")
	if e != nil {
		return reply{}, e
	}
	return reply{200, s.linkJSON(p, l, false)}, nil
}

func (s *Server) deleteLink(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Allocate")
	if e != nil {
		return reply{}, e
	}
	for i, x := range p.links {
		if x == l {
			p.links = append(p.links[:i], p.links[i+1:]...)
			break
		}
	}
	s.emitLink(p, l, "link.deleted")
	return reply{status: http.StatusNoContent}, nil
}
