// Package fakegns3 is an in-memory, stateful fake of the GNS3 v3 controller
// REST API for tests, answering with the shapes captured from a real server
// in shared/gns3/samples (fields that are null vs absent included).
//
// What it serves (all under /v3, bearer tokens, bound to 127.0.0.1):
//   - POST access/users/authenticate, GET access/users/me, GET access/users/{id}/groups
//     (401 "Not authenticated" without a token, "Could not validate credentials"
//     for an unknown one; a regular user may read only their own groups);
//   - projects: list (only the visible ones for regular users), get, open, close, stats;
//     a regular user gets 403 "Permission denied (privilege X is required)" on a
//     project they are not a member of; node and link operations on a closed
//     project answer 403; unknown IDs 404 {"message": "... doesn't exist"};
//     IDs that are not UUIDs 422 with a Python-style message;
//   - templates: the built-in ones of a real 3.0.6 server (Cloud, NAT, VPCS,
//     Ethernet switch/hub, Frame Relay and ATM switch) plus one qemu router
//     template ("Router", ports GigabitEthernet0/0-3, short names Gi0/0-3);
//   - nodes: create from a template (names PC1, PC2… allocated like GNS3 does,
//     console ports assigned at creation; like 3.0.x the template usage's
//     "name" is ignored unless WithVersion("3.1…")), list, get, update name/x/y
//     (renaming a started node: 409; a name already taken is renumbered like
//     GNS3 does), delete (and its links), start (422 without a JSON body),
//     stop, suspend, reload and their bulk forms, all 204 with an empty body;
//   - links: create (404 unknown node or port, 409 port already used,
//     422 malformed body), list, get, delete, node links;
//   - link conditions: available_filters, and PUT of a link's filters and suspend, normalised as
//     GNS3 does, with what uBridge then applies: on 3.0.x {} leaves the old filters applied,
//     and a dead bridge answers 409 until its node restarts (linkfilters.go);
//   - snapshots: create, list, delete, restore, with GNS3's rules: a create while any node
//     (built-in ones aside) is not stopped answers 409 "Project must be stopped in order to
//     export it", a name already used 409 "The snapshot name … already exists"; a restore brings
//     every node back stopped under a new ID, every link and snapshot under a new ID too
//     (snapshots.go);
//   - link captures: start, stop, and the live pcap stream (capture.go).
//   - a project's notification stream announcing every state change (notifications.go);
//   - what GNS3's web UI needs to sign in and draw a project (form login, computes, drawings,
//     symbols, the notification WebSockets) and, WithWebUI, a production build of the UI itself
//     at /static/web-ui/ (webui.go).
//
// Tests drive and inspect it with Go methods: AddUser, AddProject, AddNode,
// AddLink, SetConsole (point a node at a real vpcs process), SetStartPolls
// (a node reports "stopped" for N status reads after start), Inject/FailNext
// (make an operation on one ID answer an error, optionally after applying it),
// Hang (make it never answer), SetLatency, Count (requests per route), Nodes/Links/Node/Link
// (state read-back), SetLinkConditions, Bridge and KillLinkBridge (uBridge's side of a link),
// TakeSnapshot and Snapshots.
// The server is closed by t.Cleanup.
package fakegns3

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Credentials of the superadmin every fake server starts with.
const (
	AdminUser     = "admin"
	AdminPassword = "admin"
	AdminToken    = "fake-admin-token"
)

// Template IDs of the fixtures (the built-in ones are GNS3's real IDs).
const (
	VPCSTemplateID           = "52136454-1f50-590a-94e4-816bd02d1062"
	CloudTemplateID          = "b6ed2e82-d5aa-5a86-b6dd-8b9dd1c66800"
	NATTemplateID            = "2d7eb722-90e8-56c1-8dfa-a30d79847984"
	EthernetSwitchTemplateID = "92a43283-9c7e-5a68-9695-1f05a2e8dd05"
	EthernetHubTemplateID    = "8ed8d072-b183-541c-81ec-6e106c3a5a2a"
	RouterTemplateID         = "8a2d3f7e-6c1b-4e59-9f0a-3b7c5d2e1a40"
)

// Op names one route; it is the route's method and pattern.
type Op string

// Routes of the fake.
const (
	OpVersion        Op = "GET /v3/version"
	OpAuthenticate   Op = "POST /v3/access/users/authenticate"
	OpCurrentUser    Op = "GET /v3/access/users/me"
	OpUserGroups     Op = "GET /v3/access/users/{user_id}/groups"
	OpListProjects   Op = "GET /v3/projects"
	OpGetProject     Op = "GET /v3/projects/{project_id}"
	OpOpenProject    Op = "POST /v3/projects/{project_id}/open"
	OpCloseProject   Op = "POST /v3/projects/{project_id}/close"
	OpProjectStats   Op = "GET /v3/projects/{project_id}/stats"
	OpListTemplates  Op = "GET /v3/templates"
	OpCreateNode     Op = "POST /v3/projects/{project_id}/templates/{template_id}"
	OpListNodes      Op = "GET /v3/projects/{project_id}/nodes"
	OpGetNode        Op = "GET /v3/projects/{project_id}/nodes/{node_id}"
	OpUpdateNode     Op = "PUT /v3/projects/{project_id}/nodes/{node_id}"
	OpDeleteNode     Op = "DELETE /v3/projects/{project_id}/nodes/{node_id}"
	OpStartNode      Op = "POST /v3/projects/{project_id}/nodes/{node_id}/start"
	OpStopNode       Op = "POST /v3/projects/{project_id}/nodes/{node_id}/stop"
	OpSuspendNode    Op = "POST /v3/projects/{project_id}/nodes/{node_id}/suspend"
	OpReloadNode     Op = "POST /v3/projects/{project_id}/nodes/{node_id}/reload"
	OpStartAllNodes  Op = "POST /v3/projects/{project_id}/nodes/start"
	OpStopAllNodes   Op = "POST /v3/projects/{project_id}/nodes/stop"
	OpSuspendAll     Op = "POST /v3/projects/{project_id}/nodes/suspend"
	OpReloadAllNodes Op = "POST /v3/projects/{project_id}/nodes/reload"
	OpNodeLinks      Op = "GET /v3/projects/{project_id}/nodes/{node_id}/links"
	OpListLinks      Op = "GET /v3/projects/{project_id}/links"
	OpCreateLink     Op = "POST /v3/projects/{project_id}/links"
	OpGetLink        Op = "GET /v3/projects/{project_id}/links/{link_id}"
	OpDeleteLink     Op = "DELETE /v3/projects/{project_id}/links/{link_id}"
	OpUpdateLink     Op = "PUT /v3/projects/{project_id}/links/{link_id}"
	OpLinkFilters    Op = "GET /v3/projects/{project_id}/links/{link_id}/available_filters"
)

// Node is a read-back of one node's state.
type Node struct {
	ID          string
	ProjectID   string
	Name        string
	NodeType    string
	TemplateID  string
	Status      string
	X, Y        int
	Console     int // 0: no console
	ConsoleHost string
	ConsoleType string
	Locked      bool
	Ports       []Port
}

// Port is one port of a node.
type Port struct {
	Name      string
	ShortName string
	Adapter   int
	Port      int
	LinkType  string
}

// Link is a read-back of one link.
type Link struct {
	ID        string
	ProjectID string
	Ends      [2]LinkEnd
	// Filters are the link's active conditions ({"delay": [200, 20]}); Suspended tells a
	// suspended link (linkfilters.go).
	Filters   map[string][]any
	Suspended bool
}

// LinkEnd is one side of a link.
type LinkEnd struct {
	NodeID  string
	Adapter int
	Port    int
	Label   string
}

// Failure makes requests to Op answer Status with {"message": Message}.
type Failure struct {
	Op      Op
	ID      string // matches any path ID of the request (node, link, project, template); "" = any
	Status  int
	Message string
	// Times limits how many requests fail; 0 means every matching request.
	Times int
	// AfterApply performs the operation before answering the error, like a
	// server that did the work but whose answer was lost.
	AfterApply bool
}

// Option configures New.
type Option func(*Server)

// WithVersion makes the fake report this GNS3 version; "3.1.0a2" (or any
// 3.1+) adds the fields newer servers send (node tags, project created_by).
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithStartPolls makes every started node report "stopped" for n status
// reads before it reports "started".
func WithStartPolls(n int) Option { return func(s *Server) { s.defaultStartPolls = n } }

// WithConsoleHost sets the console_host given to new nodes (default 127.0.0.1).
func WithConsoleHost(h string) Option { return func(s *Server) { s.consoleHost = h } }

// WithConsolePortBase sets the first console port handed out (default 5000).
func WithConsolePortBase(p int) Option { return func(s *Server) { s.nextConsole = p } }

// WithLatency delays every answer by d, as a real controller's 6–8 ms per request does, so
// benchmarks can show what the copilot's own GNS3 round trips cost. SetLatency adds to it per op.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.baseLatency = d } }

// Server is the fake GNS3 controller.
type Server struct {
	URL string

	t       testing.TB
	hs      *httptest.Server
	handler http.Handler

	mu                sync.Mutex
	version           string
	consoleHost       string
	nextConsole       int
	defaultStartPolls int
	users             map[string]*user // by username
	projects          map[string]*project
	projectOrder      []string
	templates         []*template
	counts            map[Op]int
	failures          []*Failure
	hangs             []hang
	latency           map[Op]time.Duration
	baseLatency       time.Duration
	startPolls        map[string]int           // node ID → configured polls for its next start
	captures          map[string]*captureState // by link ID (capture.go)
	feeds             map[string]CaptureFeed   // by link ID, "" for any
	notes             notifier                 // notification streams (notifications.go)
	webUI             string                   // directory of a web UI build (webui.go)
	creds3x           *credentials3x           // GNS3 3.1's API keys and refresh tokens (apikeys.go)
}

type user struct {
	id, name, token, password, email, fullName string
	superadmin                                 bool
	groups                                     []group
	created                                    string
}

type group struct{ id, name string }

type project struct {
	id, name, status, owner string
	members                 map[string]bool
	nodes                   []*node
	links                   []*link
	names                   map[string]bool
	snapshots               []*snapshot // oldest first (snapshots.go)
}

type template struct {
	ID, Name, Type, Category, NameFormat, Symbol, ConsoleType string
	Builtin                                                   bool
	ComputeID                                                 string
	Ports                                                     []Port
	Extra                                                     map[string]any
	// NodeProperties are copied into the properties of every node made from
	// the template (a QEMU appliance's disk image names).
	NodeProperties map[string]any
}

type node struct {
	id, name, nodeType, templateID, status string
	x, y                                   int
	console                                int
	consoleHost, consoleType               string
	locked                                 bool
	ports                                  []Port
	symbol                                 string
	pendingPolls                           int
	tags                                   []string
	properties                             map[string]any
}

type link struct {
	id      string
	ends    [2]LinkEnd
	filters map[string][]any // as GNS3 keeps them: active ones only (linkfilters.go)
	suspend bool
	// bridge is uBridge's side of the link once it differs from what GNS3 shows (linkfilters.go);
	// nil while uBridge applies exactly the link's filters.
	bridge *bridgeState
}

// New starts a fake GNS3 server on 127.0.0.1 with the admin user and the
// template fixtures; it is closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:           t,
		version:     "3.0.6",
		consoleHost: "127.0.0.1",
		nextConsole: 5000,
		users:       map[string]*user{},
		projects:    map[string]*project{},
		counts:      map[Op]int{},
		latency:     map[Op]time.Duration{},
		startPolls:  map[string]int{},
	}
	for _, o := range opts {
		o(s)
	}
	s.templates = defaultTemplates()
	s.users[AdminUser] = &user{
		id: "b5b8aa17-e6a8-4680-b5c4-b8d3ad5afb7d", name: AdminUser, token: AdminToken, password: AdminPassword,
		fullName: "Super Administrator", superadmin: true, created: "2026-11-30T00:23:09",
	}
	s.handler = s.routes()
	s.hs = httptest.NewServer(s.handler)
	s.URL = s.hs.URL
	t.Cleanup(s.Close)
	return s
}

// Handler is the fake's HTTP surface, for a test that serves it together with routes of its own
// (say, the WebSockets and streams a proxy in front of GNS3 must carry).
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the server early (it is also closed by t.Cleanup). Open notification streams are
// ended first: the server waits for its open requests.
func (s *Server) Close() {
	s.mu.Lock()
	for _, subs := range s.notes.subs {
		for sub := range subs {
			sub.close()
		}
	}
	s.mu.Unlock()
	s.hs.Close()
}

func newID() string { return uuid.NewString() }

// AddUser adds a user with a bearer token and returns its user ID. Its
// password is its name followed by "-password" until SetPassword.
func (s *Server) AddUser(name, token string, superadmin bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.users[name]; dup {
		s.t.Fatalf("fakegns3: user %q already exists", name)
	}
	u := &user{id: newID(), name: name, token: token, password: name + "-password", superadmin: superadmin,
		email: name + "@example.com", created: "2026-11-30T01:12:03"}
	s.users[name] = u
	return u.id
}

// SetPassword sets the password POST /v3/access/users/authenticate accepts.
func (s *Server) SetPassword(username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustUser(username).password = password
}

// AddGroup puts the user in a (non built-in) group and returns the group ID.
func (s *Server) AddGroup(username, groupName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.mustUser(username)
	g := group{id: newID(), name: groupName}
	u.groups = append(u.groups, g)
	return g.id
}

func (s *Server) mustUser(name string) *user {
	u, ok := s.users[name]
	if !ok {
		s.t.Fatalf("fakegns3: no user %q", name)
	}
	return u
}

// ProjectOption configures AddProject.
type ProjectOption func(*project)

// Closed adds the project in the closed state.
func Closed() ProjectOption { return func(p *project) { p.status = "closed" } }

// ProjectID fixes the project's ID.
func ProjectID(id string) ProjectOption { return func(p *project) { p.id = id } }

// Members lets these regular users see and change the project.
func Members(usernames ...string) ProjectOption {
	return func(p *project) {
		for _, u := range usernames {
			p.members[u] = true
		}
	}
}

// AddProject adds an opened project owned by the admin and returns its ID.
func (s *Server) AddProject(name string, opts ...ProjectOption) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &project{id: newID(), name: name, status: "opened", owner: AdminUser, members: map[string]bool{}, names: map[string]bool{}}
	for _, o := range opts {
		o(p)
	}
	if _, dup := s.projects[p.id]; dup {
		s.t.Fatalf("fakegns3: project %s already exists", p.id)
	}
	s.projects[p.id] = p
	s.projectOrder = append(s.projectOrder, p.id)
	return p.id
}

// Grant lets a regular user see and change a project.
func (s *Server) Grant(projectID, username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustProject(projectID).members[username] = true
}

// SetProjectStatus opens or closes a project ("opened" / "closed").
func (s *Server) SetProjectStatus(projectID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	p.status = status
	if status == "closed" {
		s.emit(p.id, "project.closed", s.projectJSON(p))
	}
}

func (s *Server) mustProject(id string) *project {
	p, ok := s.projects[id]
	if !ok {
		s.t.Fatalf("fakegns3: no project %s", id)
	}
	return p
}

// AddTemplate adds a template; Ports are the ports of nodes created from it.
// It returns the template ID (generated when empty).
func (s *Server) AddTemplate(id, name, templateType, nameFormat string, ports []Port) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		id = newID()
	}
	s.templates = append(s.templates, &template{
		ID: id, Name: name, Type: templateType, Category: "router", NameFormat: nameFormat,
		Symbol: ":/symbols/router.svg", ConsoleType: "telnet", ComputeID: "local", Ports: ports,
	})
	return id
}

// FRRImage is the disk image of the FRR template AddFRRTemplate adds, as
// GNS3's marketplace appliance names it.
const FRRImage = "frr-8.2.2.qcow2"

// AddFRRTemplate adds a QEMU template like GNS3's marketplace FRR appliance:
// named "FRR", nodes named R1, R2, …, four ports eth0–eth3 (one adapter
// each), a telnet console, and the disk image in hda_disk_image. Nodes made
// from it carry no tag, as on GNS3 v3.0. It returns the template ID.
func (s *Server) AddFRRTemplate() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ports := make([]Port, 4)
	for i := range ports {
		ports[i] = Port{Name: fmt.Sprintf("eth%d", i), ShortName: fmt.Sprintf("eth%d", i), Adapter: i, Port: 0, LinkType: "ethernet"}
	}
	t := &template{
		ID: newID(), Name: "FRR", Type: "qemu", Category: "router", NameFormat: "R{0}",
		Symbol: ":/symbols/affinity/circle/blue/router.svg", ConsoleType: "telnet", ComputeID: "local", Ports: ports,
		NodeProperties: map[string]any{"hda_disk_image": FRRImage, "hdb_disk_image": "", "cdrom_image": "", "platform": "x86_64",
			"adapters": 4, "adapter_type": "virtio-net-pci", "ram": 512, "cpus": 1},
	}
	s.templates = append(s.templates, t)
	return t.ID
}

// NodeSpec describes a node added directly with AddNode.
type NodeSpec struct {
	Template    string // template ID or name; default VPCS
	Name        string // default: the template's name format
	X, Y        int
	Status      string // default stopped (switches, hubs, clouds, NAT: started)
	ConsoleHost string // default the server's console host
	Console     int    // default: next free console port
	Locked      bool
}

// AddNode adds a node to a project without going through HTTP.
func (s *Server) AddNode(projectID string, spec NodeSpec) Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	ref := spec.Template
	if ref == "" {
		ref = VPCSTemplateID
	}
	var tpl *template
	for _, t := range s.templates {
		if t.ID == ref || strings.EqualFold(t.Name, ref) {
			tpl = t
		}
	}
	if tpl == nil {
		s.t.Fatalf("fakegns3: no template %q", ref)
	}
	n, err := s.createNode(p, tpl, spec.Name, spec.X, spec.Y)
	if err != nil {
		s.t.Fatalf("fakegns3: AddNode: %v", err)
	}
	if spec.Status != "" {
		n.status = spec.Status
	}
	if spec.ConsoleHost != "" {
		n.consoleHost = spec.ConsoleHost
	}
	if spec.Console != 0 {
		n.console = spec.Console
	}
	n.locked = spec.Locked
	s.emitNode(p, n, "node.created")
	return n.snapshot(p.id)
}

// AddLink links two node ports (by adapter/port number) without HTTP.
func (s *Server) AddLink(projectID, nodeA string, adapterA, portA int, nodeB string, adapterB, portB int) Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	l, herr := s.createLink(p, []linkEndIn{
		{NodeID: nodeA, AdapterNumber: &adapterA, PortNumber: &portA},
		{NodeID: nodeB, AdapterNumber: &adapterB, PortNumber: &portB},
	})
	if herr != nil {
		s.t.Fatalf("fakegns3: AddLink: %d %s", herr.status, herr.message)
	}
	return l.snapshot(p.id)
}

// SetConsole points a node's console at host:port (e.g. a vpcs process on
// 127.0.0.1).
func (s *Server) SetConsole(nodeID, host string, port int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, n := s.mustNode(nodeID)
	n.consoleHost, n.console = host, port
	s.emitNode(p, n, "node.updated")
}

// SetConsoleType sets a node's console type ("telnet", "ssh" as GNS3 3.1 offers, "vnc", "none"…).
func (s *Server) SetConsoleType(nodeID, consoleType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, n := s.mustNode(nodeID)
	n.consoleType = consoleType
	s.emitNode(p, n, "node.updated")
}

// SetStatus sets a node's status directly.
func (s *Server) SetStatus(nodeID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, n := s.mustNode(nodeID)
	n.status, n.pendingPolls = status, 0
	s.emitNode(p, n, "node.updated")
}

// SetStartPolls makes the node report "stopped" for n status reads (GET of
// the node or of the node list) after its next start.
func (s *Server) SetStartPolls(nodeID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustNode(nodeID)
	s.startPolls[nodeID] = n
}

func (s *Server) mustNode(id string) (*project, *node) {
	for _, p := range s.projects {
		for _, n := range p.nodes {
			if n.id == id {
				return p, n
			}
		}
	}
	s.t.Fatalf("fakegns3: no node %s", id)
	return nil, nil
}

// Inject registers a failure.
func (s *Server) Inject(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fc := f
	s.failures = append(s.failures, &fc)
}

// FailNext makes the next request to op on id (node, link, project or
// template ID; "" for any) answer status with {"message": message}.
func (s *Server) FailNext(op Op, id string, status int, message string) {
	s.Inject(Failure{Op: op, ID: id, Status: status, Message: message, Times: 1})
}

type hang struct {
	op Op
	id string
}

// Hang makes requests to op on id (node, link, project or template ID; "" for any) never
// answer, as a node whose emulator does not stop keeps GNS3's stop request waiting: the client
// gives up, and nothing changes. Unhang answers them again.
func (s *Server) Hang(op Op, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangs = append(s.hangs, hang{op, id})
}

// Unhang undoes Hang.
func (s *Server) Unhang(op Op, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangs = slices.DeleteFunc(s.hangs, func(h hang) bool { return h == hang{op, id} })
}

func (s *Server) hung(op Op, r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hangs {
		if h.op != op {
			continue
		}
		if h.id == "" {
			return true
		}
		for _, k := range pathIDs {
			if r.PathValue(k) == h.id {
				return true
			}
		}
	}
	return false
}

// ClearFailures removes every injected failure.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = nil
}

// SetLatency delays every answer of op by d (or until the client gives up).
func (s *Server) SetLatency(op Op, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency[op] = d
}

// Count returns how many requests reached op (failed ones included).
func (s *Server) Count(op Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[op]
}

// Counts returns a copy of the per-route request counts.
func (s *Server) Counts() map[Op]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Op]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// ResetCounts zeroes the request counts.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = map[Op]int{}
}

// Nodes returns the project's nodes in creation order.
func (s *Server) Nodes(projectID string) []Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	out := make([]Node, 0, len(p.nodes))
	for _, n := range p.nodes {
		out = append(out, n.snapshot(p.id))
	}
	return out
}

// Node returns one node by ID.
func (s *Server) Node(nodeID string) (Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.projects {
		for _, n := range p.nodes {
			if n.id == nodeID {
				return n.snapshot(p.id), true
			}
		}
	}
	return Node{}, false
}

// NodeByName returns the project's node with that name.
func (s *Server) NodeByName(projectID, name string) (Node, bool) {
	for _, n := range s.Nodes(projectID) {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Links returns the project's links in creation order.
func (s *Server) Links(projectID string) []Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.mustProject(projectID)
	out := make([]Link, 0, len(p.links))
	for _, l := range p.links {
		out = append(out, l.snapshot(p.id))
	}
	return out
}

func (n *node) snapshot(projectID string) Node {
	return Node{
		ID: n.id, ProjectID: projectID, Name: n.name, NodeType: n.nodeType, TemplateID: n.templateID,
		Status: n.status, X: n.x, Y: n.y, Console: n.console, ConsoleHost: n.consoleHost,
		ConsoleType: n.consoleType, Locked: n.locked, Ports: append([]Port(nil), n.ports...),
	}
}

func (l *link) snapshot(projectID string) Link {
	return Link{ID: l.id, ProjectID: projectID, Ends: l.ends, Filters: cloneFilters(l.filters), Suspended: l.suspend}
}

// allocateName reproduces GNS3's node name allocation: spaces removed,
// "{0}" replaced by the first free number, and a taken name renumbered
// (trailing digits replaced, or a number appended).
func (p *project) allocateName(base string) (string, error) {
	base = strings.ReplaceAll(base, " ", "")
	if base == "" {
		return "", fmt.Errorf("empty node name")
	}
	if p.names[base] {
		trimmed := strings.TrimRight(base, "0123456789")
		if trimmed != base {
			base = trimmed + "{0}"
		}
	}
	if strings.Contains(base, "{0}") {
		for i := 1; i < 1000000; i++ {
			name := strings.ReplaceAll(base, "{0}", fmt.Sprint(i))
			if !p.names[name] {
				p.names[name] = true
				return name, nil
			}
		}
	} else {
		if !p.names[base] {
			p.names[base] = true
			return base, nil
		}
		for i := 1; i < 1000000; i++ {
			name := base + fmt.Sprint(i)
			if !p.names[name] {
				p.names[name] = true
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("A node name could not be allocated (node limit reached?)")
}

// builtinType reports node types that GNS3 runs inside the controller's
// compute without a console; they are always "started".
func builtinType(t string) bool {
	switch t {
	case "cloud", "nat", "ethernet_switch", "ethernet_hub", "frame_relay_switch", "atm_switch":
		return true
	}
	return false
}

func (s *Server) createNode(p *project, tpl *template, name string, x, y int) (*node, error) {
	if name == "" {
		name = tpl.NameFormat
		if name == "" {
			name = tpl.Name + "-{0}"
		}
	}
	name, err := p.allocateName(name)
	if err != nil {
		return nil, err
	}
	n := &node{
		id: newID(), name: name, nodeType: tpl.Type, templateID: tpl.ID, status: "stopped",
		x: x, y: y, consoleType: tpl.ConsoleType, symbol: tpl.Symbol,
		ports: append([]Port(nil), tpl.Ports...),
	}
	if tpl.NodeProperties != nil {
		n.properties = maps.Clone(tpl.NodeProperties)
	}
	if builtinType(tpl.Type) {
		n.status = "started"
	}
	if n.consoleType == "" {
		n.consoleType = "telnet"
	}
	if n.consoleType != "none" {
		n.console = s.nextConsole
		n.consoleHost = s.consoleHost
		s.nextConsole += 2
	}
	if s.newerThan30() {
		n.tags = []string{}
		if tpl.Type == "vpcs" {
			n.tags = []string{"device_type:gns3_vpcs_telnet"}
		}
	}
	p.nodes = append(p.nodes, n)
	return n, nil
}

func (s *Server) newerThan30() bool { return !strings.HasPrefix(s.version, "3.0") }

func (p *project) node(id string) *node {
	for _, n := range p.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

func (p *project) portInUse(nodeID string, adapter, port int) bool {
	for _, l := range p.links {
		for _, e := range l.ends {
			if e.NodeID == nodeID && e.Adapter == adapter && e.Port == port {
				return true
			}
		}
	}
	return false
}

func ethernetPorts(n int, name, short string) []Port {
	ps := make([]Port, n)
	for i := range ps {
		ps[i] = Port{Name: fmt.Sprintf(name, i), ShortName: fmt.Sprintf(short, i), Adapter: 0, Port: i, LinkType: "ethernet"}
	}
	return ps
}

func defaultTemplates() []*template {
	byType := map[string][]Port{
		"vpcs":            {{Name: "Ethernet0", ShortName: "e0", LinkType: "ethernet"}},
		"ethernet_switch": ethernetPorts(8, "Ethernet%d", "e%d"),
		"ethernet_hub":    ethernetPorts(8, "Ethernet%d", "e%d"),
		"cloud":           ethernetPorts(1, "eth%d", "eth%d"),
		"nat":             ethernetPorts(1, "nat%d", "nat%d"),
	}
	var ts []*template
	for _, b := range builtinTemplates() {
		t := &template{
			ID: b.TemplateID, Name: b.Name, Type: b.TemplateType, Category: b.Category, NameFormat: b.DefaultNameFormat,
			Symbol: b.Symbol, Builtin: true, Ports: byType[b.TemplateType], Extra: b.extra,
		}
		switch {
		case b.ConsoleType != "":
			t.ConsoleType = b.ConsoleType
		case b.TemplateType == "vpcs":
			t.ConsoleType = "telnet"
		default:
			t.ConsoleType = "none"
		}
		ts = append(ts, t)
	}
	router := make([]Port, 4)
	for i := range router {
		router[i] = Port{Name: fmt.Sprintf("GigabitEthernet0/%d", i), ShortName: fmt.Sprintf("Gi0/%d", i), Adapter: i, Port: 0, LinkType: "ethernet"}
	}
	ts = append(ts, &template{
		ID: RouterTemplateID, Name: "Router", Type: "qemu", Category: "router", NameFormat: "R{0}",
		Symbol: ":/symbols/affinity/circle/blue/router.svg", ConsoleType: "telnet", ComputeID: "local", Ports: router,
	})
	return ts
}
