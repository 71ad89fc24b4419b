package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
)

// topology is one consistent read of a project.
type topology struct {
	project *gns3.Project
	nodes   []gns3.Node
	links   []gns3.Link
	byID    map[string]*gns3.Node
}

// readTopology fetches the project, its nodes and its links in parallel.
func readTopology(ctx context.Context, c *gns3.Client, projectID string) (*topology, error) {
	s, err := livetopo.ReadDirect(ctx, c, projectID, nil)
	if err != nil {
		return nil, err
	}
	return fromSnapshot(s), nil
}

// readNodes fetches only what most tools need: nodes and links.
func readNodes(ctx context.Context, c *gns3.Client, projectID string) (*topology, error) {
	var (
		wg    sync.WaitGroup
		t     topology
		nErr  error
		lErr  error
		nodes []gns3.Node
		links []gns3.Link
	)
	wg.Add(2)
	go func() { defer wg.Done(); nodes, nErr = c.ListNodes(ctx, projectID) }()
	go func() { defer wg.Done(); links, lErr = c.ListLinks(ctx, projectID) }()
	wg.Wait()
	if err := errors.Join(nErr, lErr); err != nil {
		return nil, err
	}
	t.nodes, t.links = nodes, links
	t.index()
	return &t, nil
}

func (t *topology) index() {
	t.byID = make(map[string]*gns3.Node, len(t.nodes))
	for i := range t.nodes {
		t.byID[t.nodes[i].NodeID] = &t.nodes[i]
	}
}

// findNode resolves a node ID or a node name. An exact name match wins over
// a case-insensitive one; a name shared by two nodes is an error, never a
// guess.
func (t *topology) findNode(ref string) (*gns3.Node, error) {
	ref = strings.TrimSpace(ref)
	if n, ok := t.byID[ref]; ok {
		return n, nil
	}
	var exact, folded []*gns3.Node
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.Name == ref {
			exact = append(exact, n)
		} else if strings.EqualFold(n.Name, ref) {
			folded = append(folded, n)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = folded
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, fmt.Errorf("no node %q in this project (nodes: %s)", ref, t.nodeNames(20))
	}
	ids := make([]string, len(matches))
	for i, n := range matches {
		ids[i] = n.NodeID
	}
	return nil, fmt.Errorf("%d nodes are named %q; use a node_id instead: %s", len(matches), ref, strings.Join(ids, ", "))
}

func (t *topology) nodeNames(max int) string {
	if len(t.nodes) == 0 {
		return "none"
	}
	names := make([]string, 0, len(t.nodes))
	for _, n := range t.nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return clipNames(names, max)
}

func (t *topology) nodeName(id string) string {
	if n, ok := t.byID[id]; ok {
		return n.Name
	}
	return id
}

// portName names a node's port by adapter/port number.
func portName(n *gns3.Node, adapter, port int) string {
	if n != nil {
		for _, p := range n.Ports {
			if p.AdapterNumber == adapter && p.PortNumber == port {
				return p.Name
			}
		}
	}
	return fmt.Sprintf("%d/%d", adapter, port)
}

// findPort resolves a port by name or short name, listing the node's ports
// when it does not exist.
func findPort(n *gns3.Node, ref string) (gns3.Port, error) {
	if p, ok := n.FindPort(ref); ok {
		return p, nil
	}
	if len(n.Ports) == 0 {
		return gns3.Port{}, fmt.Errorf("node %s has no ports", n.Name)
	}
	names := make([]string, 0, len(n.Ports))
	for _, p := range n.Ports {
		names = append(names, portLabel(p))
	}
	return gns3.Port{}, fmt.Errorf("node %s has no port %q (ports: %s)", n.Name, ref, strings.Join(names, ", "))
}

func portLabel(p gns3.Port) string {
	if p.ShortName != "" && p.ShortName != p.Name {
		return p.Name + " (" + p.ShortName + ")"
	}
	return p.Name
}

// peer describes what is connected to one end of a link.
type peer struct {
	link     *gns3.Link
	nodeID   string
	portName string
}

// usedPorts maps "nodeID adapter/port" to the far end of the link on it.
func (t *topology) usedPorts() map[string]peer {
	used := map[string]peer{}
	for i := range t.links {
		l := &t.links[i]
		if len(l.Nodes) != 2 {
			continue
		}
		for j, e := range l.Nodes {
			far := l.Nodes[1-j]
			used[portKey(e.NodeID, e.AdapterNumber, e.PortNumber)] = peer{
				link: l, nodeID: far.NodeID, portName: portName(t.byID[far.NodeID], far.AdapterNumber, far.PortNumber),
			}
		}
	}
	return used
}

func portKey(nodeID string, adapter, port int) string {
	return fmt.Sprintf("%s %d/%d", nodeID, adapter, port)
}

// consoleText describes how to reach a node's console.
func consoleText(n *gns3.Node, host string) string {
	if n.ConsoleType == "" || n.ConsoleType == "none" || n.ConsolePort() == 0 {
		return "no console"
	}
	return n.ConsoleType + " " + n.ConsoleAddr(host)
}

func statusText(n *gns3.Node) string {
	if n.Status == "" {
		return "unknown"
	}
	return n.Status
}

// nodeLine is the compact one-line description of a node shared by the
// topology tool and the system-prompt context.
func (t *topology) nodeLine(n *gns3.Node, host string, used map[string]peer, maxFree int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %s", n.NodeType, statusText(n), consoleText(n, host))
	var conn, free []string
	for _, p := range n.Ports {
		if pe, ok := used[portKey(n.NodeID, p.AdapterNumber, p.PortNumber)]; ok {
			conn = append(conn, fmt.Sprintf("%s→%s %s", p.Name, t.nodeName(pe.nodeID), pe.portName))
		} else {
			free = append(free, p.Name)
		}
	}
	if len(conn) > 0 {
		b.WriteString("; connected: " + strings.Join(conn, ", "))
	}
	if len(free) > 0 {
		b.WriteString("; free ports: ")
		if maxFree > 0 && len(free) > maxFree {
			b.WriteString(strings.Join(free[:maxFree], ", ") + fmt.Sprintf(" (+%d more)", len(free)-maxFree))
		} else {
			b.WriteString(strings.Join(free, ", "))
		}
	}
	if n.Ports == nil && n.Status == "" {
		b.WriteString("; ports unknown while the project is closed")
	}
	return b.String()
}

func (t *topology) linkLine(l *gns3.Link) string {
	if len(l.Nodes) != 2 {
		return fmt.Sprintf("link with %d ends", len(l.Nodes))
	}
	a, b := l.Nodes[0], l.Nodes[1]
	return fmt.Sprintf("%s %s <-> %s %s", t.nodeName(a.NodeID), portName(t.byID[a.NodeID], a.AdapterNumber, a.PortNumber),
		t.nodeName(b.NodeID), portName(t.byID[b.NodeID], b.AdapterNumber, b.PortNumber))
}

// linkWithConditions is a link's line followed by its conditions, when it has any, so the model
// and the teaching assistant see a slowed, lossy or suspended link.
func (t *topology) linkWithConditions(l *gns3.Link) string {
	line := t.linkLine(l)
	if c := ConditionText(l); c != "" {
		line += conditionsMark + c + "]"
	}
	return line
}

// Limits that keep the prompt context compact on big labs.
const (
	contextMaxNodes = 150
	contextMaxLinks = 300
	contextMaxFree  = 6
)

// The marks of a project's rendering (topology.context) that LabChanges reads back to tell the
// model what changed since: written and read through these, the two cannot drift apart.
const (
	nodesHeading   = "Nodes ("
	linksHeading   = "Links ("
	noneYet        = "- none yet"
	nodeIDMark     = "; node_id "
	conditionsMark = " [conditions: "
	moreMark       = "… " // opens the line that stands for the nodes or links left out
)

// ProjectContext renders the project's current topology as compact text
// for the system prompt: name, id and status, then one line per node (type,
// status, console, connected and free ports, id) and one per link.
func ProjectContext(ctx context.Context, c *gns3.Client, projectID string) (string, error) {
	t, err := readTopology(ctx, c, projectID)
	if err != nil {
		return "", err
	}
	return t.context(c.Server().Host()), nil
}

func (t *topology) context(host string) string {
	var b strings.Builder
	p := t.project
	fmt.Fprintf(&b, "Project: %s (project_id %s, %s)\n", p.Name, p.ProjectID, p.Status)
	if p.Status != gns3.ProjectOpened {
		b.WriteString("The project is closed: nodes and links cannot be changed or started until it is opened in GNS3.\n")
	}
	nodes := append([]gns3.Node(nil), t.nodes...)
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	fmt.Fprintf(&b, nodesHeading+"%d):\n", len(nodes))
	if len(nodes) == 0 {
		b.WriteString(noneYet + "\n")
	}
	used := t.usedPorts()
	for i := range nodes {
		if i == contextMaxNodes {
			fmt.Fprintf(&b, "- "+moreMark+"%d more nodes (call get_gns3_topology for all of them)\n", len(nodes)-contextMaxNodes)
			break
		}
		n := &nodes[i]
		fmt.Fprintf(&b, "- %s: %s"+nodeIDMark+"%s\n", n.Name, t.nodeLine(n, host, used, contextMaxFree), n.NodeID)
	}
	fmt.Fprintf(&b, linksHeading+"%d):\n", len(t.links))
	if len(t.links) == 0 {
		b.WriteString(noneYet + "\n")
	}
	lines := make([]string, 0, len(t.links))
	for i := range t.links {
		lines = append(lines, t.linkWithConditions(&t.links[i]))
	}
	sort.Strings(lines)
	for i, l := range lines {
		if i == contextMaxLinks {
			fmt.Fprintf(&b, "- "+moreMark+"%d more links (call get_gns3_topology for all of them)\n", len(lines)-contextMaxLinks)
			break
		}
		b.WriteString("- " + l + "\n")
	}
	return b.String()
}

// describeGNS3Error makes a GNS3 failure actionable for the model.
func describeGNS3Error(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, gns3.ErrUnauthorized):
		return "GNS3 rejected the user's credentials (session expired?): " + err.Error()
	case errors.Is(err, gns3.ErrForbidden):
		return "the user is not allowed to do this in GNS3: " + err.Error()
	}
	return err.Error()
}

// explained is a GNS3 error with the actionable text of describeGNS3Error
// that still unwraps to the original (for gns3.Retryable, errors.Is).
type explained struct{ err error }

func (e explained) Error() string { return describeGNS3Error(e.err) }
func (e explained) Unwrap() error { return e.err }

func explain(err error) error { return explained{err} }

// failWith is a whole-call failure; metadata.retryable tells the caller
// that the same call may succeed later (GNS3 unreachable or failing
// internally), which only matters for tools safe to repeat.
func failWith(err error) Result {
	r := Failure("%v", err)
	if gns3.Retryable(err) {
		r.Metadata["retryable"] = true
	}
	return r
}

type topologyTool struct{ spec }

func newTopologyTool() Tool {
	return &topologyTool{spec{
		name: "get_gns3_topology",
		description: "Read the current GNS3 project: every node with its node_id, type, status, console (protocol host:port) " +
			"and ports (name and short name, with what each connected port links to), and every link as node/port pairs. " +
			"In the copilot's chat the conversation already shows the project (<lab>) and what changed since (<lab_update>); " +
			"call this there when you need all ports.",
		schema:     noArgumentsSchema,
		modes:      readingModes,
		idempotent: true,
	}}
}

func (tt *topologyTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	if err := noArguments(env, raw); err != nil {
		return failWith(err)
	}
	t, err := loadTopology(ctx, env)
	if err != nil {
		return failWith(fmt.Errorf("could not read the project topology: %w", explain(err)))
	}
	host := env.gns3Host()
	used := t.usedPorts()
	items := make([]Item, 0, len(t.nodes)+len(t.links))
	for i := range t.nodes {
		n := &t.nodes[i]
		var b strings.Builder
		b.WriteString(t.nodeLine(n, host, used, 0))
		if len(n.Ports) > 0 {
			ports := make([]string, 0, len(n.Ports))
			for _, p := range n.Ports {
				ports = append(ports, portLabel(p))
			}
			b.WriteString("; all ports: " + strings.Join(ports, ", "))
		}
		fmt.Fprintf(&b, "; position (%d, %d)", n.X, n.Y)
		items = append(items, ok(n.NodeID, n.Name, b.String()))
	}
	for i := range t.links {
		l := &t.links[i]
		kind := l.LinkType
		if kind == "" {
			kind = "ethernet"
		}
		result := kind + " link"
		if c := ConditionText(l); c != "" {
			result += "; conditions: " + c
		}
		items = append(items, ok(l.LinkID, t.linkLine(l), result))
	}
	r := Collect(items)
	r.Metadata["project_id"] = t.project.ProjectID
	r.Metadata["project_name"] = t.project.Name
	r.Metadata["project_status"] = t.project.Status
	r.Metadata["nodes"] = len(t.nodes)
	r.Metadata["links"] = len(t.links)
	return r
}
