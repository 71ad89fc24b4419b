package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// MinNodeSpacing is the smallest distance in px kept between two nodes so
// interface labels stay readable.
const MinNodeSpacing = 250

const maxNodesPerCall = 30

// openTopology reads the project and refuses a closed one, whose nodes
// cannot be changed.
func openTopology(ctx context.Context, env Env) (*topology, error) {
	t, err := loadTopology(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("could not read the project: %w", explain(err))
	}
	if t.project.Status != gns3.ProjectOpened {
		return nil, fmt.Errorf("project %q is %s; ask the user to open it in GNS3 first", t.project.Name, t.project.Status)
	}
	return t, nil
}

// openNodeList starts a tool whose only argument is node_ids: it checks the arguments, then reads
// the project. refs are the requested nodes, trimmed and without repeats.
func openNodeList(ctx context.Context, env Env, raw json.RawMessage) (refs []string, t *topology, err error) {
	var args struct {
		projectArg
		NodeIDs []string `json:"node_ids"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, nil, err
	}
	if err := args.check(env); err != nil {
		return nil, nil, err
	}
	if refs, err = nodeRefs("node_ids", args.NodeIDs, maxNodesPerCall); err != nil {
		return nil, nil, err
	}
	if t, err = openTopology(ctx, env); err != nil {
		return nil, nil, err
	}
	return refs, t, nil
}

// resolveNodeList is openNodeList with every requested node found, for a preview: the nodes, or
// why some cannot be (each unknown or ambiguous reference, naming the nodes there are).
func resolveNodeList(ctx context.Context, env Env, raw json.RawMessage) ([]*gns3.Node, *topology, error) {
	refs, t, err := openNodeList(ctx, env, raw)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := resolveAll(refs, t.findNode)
	if err != nil {
		return nil, nil, err
	}
	return nodes, t, nil
}

// resolveAll resolves every reference of a call, or says why each one that cannot be is not.
func resolveAll[R, T any](refs []R, resolve func(R) (T, error)) ([]T, error) {
	out := make([]T, 0, len(refs))
	var unknown []string
	for _, ref := range refs {
		v, err := resolve(ref)
		if err != nil {
			unknown = append(unknown, err.Error())
			continue
		}
		out = append(out, v)
	}
	if len(unknown) > 0 {
		return nil, errors.New(strings.Join(unknown, "; "))
	}
	return out, nil
}

// openLinkList starts a tool whose only argument is links: it checks the references, then reads
// the project.
func openLinkList(ctx context.Context, env Env, raw json.RawMessage) ([]linkRef, *topology, error) {
	var args struct {
		projectArg
		Links []linkRef `json:"links"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, nil, err
	}
	if err := args.check(env); err != nil {
		return nil, nil, err
	}
	if err := checkLinkRefs(args.Links); err != nil {
		return nil, nil, err
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	return args.Links, t, nil
}

// noArgumentsSchema is the schema of a tool that takes no argument.
const noArgumentsSchema = `{"type":"object","properties":{},"additionalProperties":false}`

// noArguments checks the arguments of a tool that takes none (project_id aside).
func noArguments(env Env, raw json.RawMessage) error {
	var args struct{ projectArg }
	if err := decodeArgs(raw, &args); err != nil {
		return err
	}
	return args.check(env)
}

// deleteFailed is the item for a delete GNS3 refused. On a retried call "not found" means an
// earlier attempt already deleted it, which is what was asked for.
func deleteFailed(env Env, id, name string, err error) Item {
	if errors.Is(err, gns3.ErrNotFound) && env.retried() {
		return ok(id, name, "deleted (by an earlier attempt of this call)")
	}
	return failed(id, name, "deleting failed: "+describeGNS3Error(err))
}

// validNodeName mirrors what GNS3 does silently (drops spaces, renumbers
// taken names) as explicit errors, so the model gets the name it asked for
// or knows why not.
func validNodeName(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	if len(name) > 100 {
		return fmt.Errorf("the name %q is longer than 100 characters", name)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("the name %q contains spaces or control characters, which GNS3 does not keep in node names", name)
		}
	}
	return nil
}

type point struct{ x, y int }

func (p point) String() string { return fmt.Sprintf("(%d, %d)", p.x, p.y) }

func farEnough(p point, occupied []point) bool {
	for _, o := range occupied {
		dx, dy := float64(p.x-o.x), float64(p.y-o.y)
		if dx*dx+dy*dy < MinNodeSpacing*MinNodeSpacing {
			return false
		}
	}
	return true
}

// place returns want if it keeps MinNodeSpacing from every occupied point,
// otherwise the nearest free point on a MinNodeSpacing grid around want.
// It is deterministic, so a retried create can recompute where an earlier
// attempt put a node.
func place(want point, occupied []point) point {
	if farEnough(want, occupied) {
		return want
	}
	for k := 1; k <= 200; k++ {
		var ring []point
		for i := -k; i <= k; i++ {
			for j := -k; j <= k; j++ {
				if max(abs(i), abs(j)) == k {
					ring = append(ring, point{want.x + i*MinNodeSpacing, want.y + j*MinNodeSpacing})
				}
			}
		}
		sort.SliceStable(ring, func(a, b int) bool {
			da, db := dist2(ring[a], want), dist2(ring[b], want)
			if da != db {
				return da < db
			}
			if ring[a].y != ring[b].y {
				return ring[a].y < ring[b].y
			}
			return ring[a].x > ring[b].x
		})
		for _, p := range ring {
			if farEnough(p, occupied) {
				return p
			}
		}
	}
	return want
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func dist2(a, b point) int { return (a.x-b.x)*(a.x-b.x) + (a.y-b.y)*(a.y-b.y) }

func nodeSummary(n *gns3.Node, host string) string {
	ports := make([]string, 0, len(n.Ports))
	for _, p := range n.Ports {
		ports = append(ports, portLabel(p))
	}
	s := fmt.Sprintf("%s node %s at (%d, %d), %s, %s", n.NodeType, n.Name, n.X, n.Y, statusText(n), consoleText(n, host))
	if len(ports) > 0 {
		s += "; ports: " + strings.Join(ports, ", ")
	}
	return s
}

// ---- create_gns3_node ----

type createNodeTool struct{ spec }

func newCreateNodeTool() Tool {
	return &createNodeTool{spec{
		name: "create_gns3_node",
		description: "Create nodes in the project from templates (template_id from get_gns3_templates; a template name is also accepted) " +
			"at canvas coordinates x/y, optionally with a name. IMPORTANT: keep nodes at least 250 px apart so labels stay readable; " +
			"a node asked for closer to another one is moved to the nearest free spot and the result says where. " +
			"New nodes are stopped; start them with start_gns3_node.",
		schema: `{"type":"object","properties":{"nodes":{"type":"array","minItems":1,"maxItems":30,` +
			`"description":"Nodes to create, one entry per node.","items":{"type":"object","properties":{` +
			`"template_id":{"type":"string","description":"Template ID (or exact template name)."},` +
			`"x":{"type":"integer","description":"Canvas x coordinate in px."},` +
			`"y":{"type":"integer","description":"Canvas y coordinate in px."},` +
			`"name":{"type":"string","description":"Node name without spaces; default: the template's naming (PC1, PC2, …)."}` +
			`},"required":["template_id","x","y"],"additionalProperties":false}}},"required":["nodes"],"additionalProperties":false}`,
		modes:    bothModes,
		mutating: true,
	}}
}

type nodeRequest struct {
	TemplateID string   `json:"template_id"`
	X          *float64 `json:"x"`
	Y          *float64 `json:"y"`
	Name       string   `json:"name"`
}

type createNodeArgs struct {
	projectArg
	Nodes []nodeRequest `json:"nodes"`
}

type plannedNode struct {
	template string
	at       point
	name     string
}

func (a createNodeArgs) validate() ([]plannedNode, error) {
	if len(a.Nodes) == 0 {
		return nil, errors.New("nodes must list at least one node, e.g. {\"nodes\": [{\"template_id\": \"…\", \"x\": 0, \"y\": 0}]}")
	}
	if len(a.Nodes) > maxNodesPerCall {
		return nil, fmt.Errorf("nodes lists %d nodes; at most %d per call", len(a.Nodes), maxNodesPerCall)
	}
	names := map[string]int{}
	out := make([]plannedNode, 0, len(a.Nodes))
	for i, n := range a.Nodes {
		tid := strings.TrimSpace(n.TemplateID)
		if tid == "" {
			return nil, fmt.Errorf("nodes[%d].template_id is required", i)
		}
		x, err := coord(fmt.Sprintf("nodes[%d].x", i), n.X)
		if err != nil {
			return nil, err
		}
		y, err := coord(fmt.Sprintf("nodes[%d].y", i), n.Y)
		if err != nil {
			return nil, err
		}
		if n.Name != "" {
			if err := validNodeName(n.Name); err != nil {
				return nil, fmt.Errorf("nodes[%d].name: %v", i, err)
			}
			if j, dup := names[n.Name]; dup {
				return nil, fmt.Errorf("nodes[%d] and nodes[%d] are both named %q", j, i, n.Name)
			}
			names[n.Name] = i
		}
		out = append(out, plannedNode{template: tid, at: point{x, y}, name: n.Name})
	}
	return out, nil
}

func findTemplate(ts []gns3.Template, ref string) (*gns3.Template, error) {
	for i := range ts {
		if ts[i].TemplateID == ref {
			return &ts[i], nil
		}
	}
	var matches []*gns3.Template
	for i := range ts {
		if strings.EqualFold(ts[i].Name, ref) {
			matches = append(matches, &ts[i])
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, fmt.Errorf("no template %q; call get_gns3_templates for the template_id", ref)
	}
	return nil, fmt.Errorf("%d templates are named %q; use its template_id", len(matches), ref)
}

func (ct *createNodeTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args createNodeArgs
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	plan, err := args.validate()
	if err != nil {
		return failWith(err)
	}
	templates, err := env.GNS3.ListTemplates(ctx)
	if err != nil {
		return failWith(fmt.Errorf("could not list templates: %w", explain(err)))
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	c := &nodeCreator{env: env, topo: t, adopted: map[string]bool{}}
	items := make([]Item, 0, len(plan))
	for _, p := range plan {
		if ctx.Err() != nil {
			items = append(items, failed("", p.name, "cancelled before this node was created"))
			continue
		}
		tpl, err := findTemplate(templates, p.template)
		if err != nil {
			items = append(items, failed("", p.name, err.Error()))
			continue
		}
		items = append(items, c.create(ctx, tpl, p))
	}
	return Collect(items)
}

type nodeCreator struct {
	env     Env
	topo    *topology
	adopted map[string]bool // nodes already accounted for in this call
}

func (c *nodeCreator) occupied(except string) []point {
	pts := make([]point, 0, len(c.topo.nodes))
	for _, n := range c.topo.nodes {
		if n.NodeID != except {
			pts = append(pts, point{n.X, n.Y})
		}
	}
	return pts
}

// previous finds the node an earlier attempt of this activity created for
// p: same template (and name when one was asked for) at the place the
// placement rule gives for it.
func (c *nodeCreator) previous(tpl *gns3.Template, p plannedNode) *gns3.Node {
	for i := range c.topo.nodes {
		n := &c.topo.nodes[i]
		if c.adopted[n.NodeID] || n.TemplateID != tpl.TemplateID {
			continue
		}
		if p.name != "" {
			if n.Name == p.name {
				return n
			}
			continue
		}
		at := point{n.X, n.Y}
		if at == p.at || place(p.at, c.occupied(n.NodeID)) == at {
			return n
		}
	}
	return nil
}

func (c *nodeCreator) create(ctx context.Context, tpl *gns3.Template, p plannedNode) Item {
	env := c.env
	host := env.gns3Host()
	if env.retried() {
		if n := c.previous(tpl, p); n != nil {
			c.adopted[n.NodeID] = true
			env.progress(n.NodeID, n.Name, "created", "created by an earlier attempt")
			return ok(n.NodeID, n.Name, "created (by an earlier attempt of this call): "+nodeSummary(n, host))
		}
	}
	if p.name != "" {
		for _, n := range c.topo.nodes {
			if n.Name == p.name {
				return failed("", p.name, fmt.Sprintf("a node named %s already exists (node_id %s); choose another name", p.name, n.NodeID))
			}
		}
	}
	at := place(p.at, c.occupied(""))
	computeID := tpl.ComputeID
	if computeID == "" {
		computeID = "local"
	}
	label := p.name
	if label == "" {
		label = tpl.Name
	}
	env.progress("", label, "creating", fmt.Sprintf("creating from template %s at %s", tpl.Name, at))
	n, err := env.GNS3.CreateNodeWithUsage(ctx, env.ProjectID, tpl.TemplateID, gns3.TemplateUsage{X: at.x, Y: at.y, Name: p.name, ComputeID: computeID})
	if err != nil && gns3.Retryable(err) {
		// The answer was lost, not necessarily the node: look before
		// reporting a failure the model would answer with a second create.
		n = c.findCreated(ctx, tpl, at)
	}
	if n == nil {
		env.progress("", label, "failed", describeGNS3Error(err))
		return failed("", label, fmt.Sprintf("creating a %s node failed: %s", tpl.Name, describeGNS3Error(err)))
	}
	var notes []string
	if at != p.at {
		notes = append(notes, fmt.Sprintf("placed at %s instead of %s to keep %d px from other nodes", at, p.at, MinNodeSpacing))
	}
	if p.name != "" && n.Name != p.name {
		// GNS3 3.0 ignores the name of a template usage; rename explicitly.
		name := p.name
		renamed, rerr := env.GNS3.UpdateNode(ctx, env.ProjectID, n.NodeID, gns3.NodeUpdate{Name: &name})
		switch {
		case rerr != nil:
			notes = append(notes, fmt.Sprintf("could not rename it to %s: %s", p.name, describeGNS3Error(rerr)))
		case renamed.Name != p.name:
			notes = append(notes, fmt.Sprintf("GNS3 named it %s instead of %s", renamed.Name, p.name))
			n = renamed
		default:
			n = renamed
		}
	}
	c.topo.nodes = append(c.topo.nodes, *n)
	c.topo.index()
	c.adopted[n.NodeID] = true
	env.progress(n.NodeID, n.Name, "created", "")
	res := "created " + nodeSummary(n, host)
	if len(notes) > 0 {
		res += " (" + strings.Join(notes, "; ") + ")"
	}
	return ok(n.NodeID, n.Name, res)
}

func (c *nodeCreator) findCreated(ctx context.Context, tpl *gns3.Template, at point) *gns3.Node {
	nodes, err := c.env.GNS3.ListNodes(ctx, c.env.ProjectID)
	if err != nil {
		return nil
	}
	for i := range nodes {
		n := &nodes[i]
		if _, known := c.topo.byID[n.NodeID]; !known && n.TemplateID == tpl.TemplateID && n.X == at.x && n.Y == at.y {
			return n
		}
	}
	return nil
}

// ---- update_gns3_node_name ----

type renameTool struct{ spec }

func newRenameTool() Tool {
	return &renameTool{spec{
		name: "update_gns3_node_name",
		description: "Rename nodes. GNS3 only renames stopped nodes; names must be unique in the project and contain no spaces. " +
			"node_id accepts a node ID or the current name.",
		schema: `{"type":"object","properties":{"nodes":{"type":"array","minItems":1,"maxItems":30,"items":{"type":"object","properties":{` +
			`"node_id":{"type":"string","description":"Node ID or current node name."},` +
			`"new_name":{"type":"string","description":"New unique name, no spaces."}` +
			`},"required":["node_id","new_name"],"additionalProperties":false}}},"required":["nodes"],"additionalProperties":false}`,
		modes:      bothModes,
		mutating:   true,
		idempotent: true,
	}}
}

func (rt *renameTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args struct {
		projectArg
		Nodes []struct {
			NodeID  string `json:"node_id"`
			NewName string `json:"new_name"`
		} `json:"nodes"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	if len(args.Nodes) == 0 || len(args.Nodes) > maxNodesPerCall {
		return Failure("nodes must list 1 to %d entries of {node_id, new_name}", maxNodesPerCall)
	}
	seen := map[string]bool{}
	for i, n := range args.Nodes {
		if strings.TrimSpace(n.NodeID) == "" {
			return Failure("nodes[%d].node_id is required", i)
		}
		if err := validNodeName(n.NewName); err != nil {
			return Failure("nodes[%d].new_name: %v", i, err)
		}
		if seen[n.NewName] {
			return Failure("two nodes cannot both be renamed to %q", n.NewName)
		}
		seen[n.NewName] = true
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	items := make([]Item, 0, len(args.Nodes))
	for _, req := range args.Nodes {
		n, err := t.findNode(req.NodeID)
		if err != nil {
			items = append(items, failed(req.NodeID, req.NodeID, err.Error()))
			continue
		}
		old := n.Name
		if old == req.NewName {
			items = append(items, ok(n.NodeID, old, "already named "+old))
			continue
		}
		if other, err := t.findNode(req.NewName); err == nil && other.Name == req.NewName {
			items = append(items, failed(n.NodeID, old, fmt.Sprintf("the name %s is already used by another node (node_id %s)", req.NewName, other.NodeID)))
			continue
		}
		if n.Status == gns3.NodeStarted && !builtinNodeType(n.NodeType) {
			items = append(items, failed(n.NodeID, old, fmt.Sprintf("%s is started and GNS3 only renames stopped nodes; it must be stopped first", old)))
			continue
		}
		name := req.NewName
		upd, err := env.GNS3.UpdateNode(ctx, env.ProjectID, n.NodeID, gns3.NodeUpdate{Name: &name})
		if err != nil {
			items = append(items, failed(n.NodeID, old, "renaming failed: "+describeGNS3Error(err)))
			continue
		}
		n.Name = upd.Name
		if upd.Name != req.NewName {
			items = append(items, failed(n.NodeID, upd.Name, fmt.Sprintf("GNS3 renamed %s to %s instead of %s", old, upd.Name, req.NewName)))
			continue
		}
		env.progress(n.NodeID, upd.Name, "renamed", "was "+old)
		items = append(items, ok(n.NodeID, upd.Name, fmt.Sprintf("renamed %s to %s", old, upd.Name)))
	}
	return Collect(items)
}

// builtinNodeType reports GNS3's built-in helper nodes, which are always
// running and have no console.
func builtinNodeType(t string) bool { return utilityTypes[t] }

// ---- delete_gns3_node ----

type deleteNodeTool struct{ spec }

func newDeleteNodeTool() Tool {
	return &deleteNodeTool{spec{
		name: domain.DeleteNodeTool,
		description: "Delete nodes and every link attached to them. This cannot be undone: the node's configuration and disks are lost. " +
			"node_ids accepts node IDs or names.",
		schema: `{"type":"object","properties":{"node_ids":{"type":"array","minItems":1,"maxItems":30,"uniqueItems":true,` +
			`"items":{"type":"string"},"description":"Node IDs or names."}},"required":["node_ids"],"additionalProperties":false}`,
		modes:    labOnly,
		mutating: true,
	}}
}

// Preview names the nodes a delete would remove, each with its links.
func (dt *deleteNodeTool) Preview(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	nodes, t, err := resolveNodeList(ctx, env, raw)
	if err != nil {
		return "Delete nodes", err
	}
	used := t.usedPorts()
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, fmt.Sprintf("%s and its %d link(s)", n.Name, linkCount(n, used)))
	}
	return "Delete " + clipNames(names, 10) + "; this cannot be undone: their configuration and disks are lost", nil
}

// linkCount is how many of a node's ports are linked (used is topology.usedPorts).
func linkCount(n *gns3.Node, used map[string]peer) int {
	links := 0
	for _, p := range n.Ports {
		if _, ok := used[portKey(n.NodeID, p.AdapterNumber, p.PortNumber)]; ok {
			links++
		}
	}
	return links
}

func (dt *deleteNodeTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	refs, t, err := openNodeList(ctx, env, raw)
	if err != nil {
		return failWith(err)
	}
	used := t.usedPorts()
	items := make([]Item, 0, len(refs))
	for _, ref := range refs {
		n, err := t.findNode(ref)
		if err != nil {
			if env.retried() {
				items = append(items, ok(ref, ref, "not in the project any more (deleted by an earlier attempt of this call)"))
			} else {
				items = append(items, failed(ref, ref, err.Error()))
			}
			continue
		}
		links := linkCount(n, used)
		id, name := n.NodeID, n.Name
		if err := env.GNS3.DeleteNode(ctx, env.ProjectID, id); err != nil {
			items = append(items, deleteFailed(env, id, name, err))
			continue
		}
		t.removeNode(id)
		env.progress(id, name, "deleted", "")
		items = append(items, ok(id, name, fmt.Sprintf("deleted %s and its %d link(s)", name, links)))
	}
	return Collect(items)
}

func (t *topology) removeNode(id string) {
	kept := t.nodes[:0]
	for _, n := range t.nodes {
		if n.NodeID != id {
			kept = append(kept, n)
		}
	}
	t.nodes = kept
	links := t.links[:0]
	for _, l := range t.links {
		attached := false
		for _, e := range l.Nodes {
			attached = attached || e.NodeID == id
		}
		if !attached {
			links = append(links, l)
		}
	}
	t.links = links
	t.index()
}
