package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

const maxLinksPerCall = 50

// ---- create_gns3_link ----

type createLinkTool struct{ spec }

func newCreateLinkTool() Tool {
	return &createLinkTool{spec{
		name: "create_gns3_link",
		description: "Cable two node ports together. Nodes are given by node ID or name, ports by name or short name " +
			"as listed in the topology (e.g. Ethernet0 or e0, GigabitEthernet0/0 or Gi0/0). A port carries one link only; " +
			"a link that already exists is reported as such.",
		schema: `{"type":"object","properties":{"links":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{` +
			`"node_a":{"type":"string","description":"First node: node ID or name."},` +
			`"port_a":{"type":"string","description":"Port of the first node: name or short name."},` +
			`"node_b":{"type":"string","description":"Second node: node ID or name."},` +
			`"port_b":{"type":"string","description":"Port of the second node: name or short name."}` +
			`},"required":["node_a","port_a","node_b","port_b"],"additionalProperties":false}}},"required":["links"],"additionalProperties":false}`,
		modes:    bothModes,
		mutating: true,
	}}
}

type linkRequest struct {
	NodeA string `json:"node_a"`
	PortA string `json:"port_a"`
	NodeB string `json:"node_b"`
	PortB string `json:"port_b"`
}

func (r linkRequest) label() string {
	return fmt.Sprintf("%s %s <-> %s %s", r.NodeA, r.PortA, r.NodeB, r.PortB)
}

type endpoint struct {
	node *gns3.Node
	port gns3.Port
}

func (e endpoint) key() string {
	return portKey(e.node.NodeID, e.port.AdapterNumber, e.port.PortNumber)
}

func (e endpoint) String() string { return e.node.Name + " " + e.port.Name }

func (t *topology) endpoint(nodeRef, portRef string) (endpoint, error) {
	n, err := t.findNode(nodeRef)
	if err != nil {
		return endpoint{}, err
	}
	p, err := findPort(n, portRef)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{node: n, port: p}, nil
}

func (t *topology) freePorts(n *gns3.Node, used map[string]peer) string {
	var free []string
	for _, p := range n.Ports {
		if _, busy := used[portKey(n.NodeID, p.AdapterNumber, p.PortNumber)]; !busy {
			free = append(free, p.Name)
		}
	}
	if len(free) == 0 {
		return "none"
	}
	return strings.Join(free, ", ")
}

func (ct *createLinkTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args struct {
		projectArg
		Links []linkRequest `json:"links"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	if len(args.Links) == 0 || len(args.Links) > maxLinksPerCall {
		return Failure("links must list 1 to %d entries of {node_a, port_a, node_b, port_b}", maxLinksPerCall)
	}
	for i, l := range args.Links {
		for field, v := range map[string]string{"node_a": l.NodeA, "port_a": l.PortA, "node_b": l.NodeB, "port_b": l.PortB} {
			if strings.TrimSpace(v) == "" {
				return Failure("links[%d].%s is required", i, field)
			}
		}
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	used := t.usedPorts()
	items := make([]Item, 0, len(args.Links))
	for _, req := range args.Links {
		items = append(items, ct.link(ctx, env, t, used, req))
	}
	return Collect(items)
}

func (ct *createLinkTool) link(ctx context.Context, env Env, t *topology, used map[string]peer, req linkRequest) Item {
	a, err := t.endpoint(req.NodeA, req.PortA)
	if err != nil {
		return failed("", req.label(), err.Error())
	}
	b, err := t.endpoint(req.NodeB, req.PortB)
	if err != nil {
		return failed("", req.label(), err.Error())
	}
	name := a.String() + " <-> " + b.String()
	if a.key() == b.key() {
		return failed("", name, "a port cannot be linked to itself")
	}
	pa, aBusy := used[a.key()]
	if aBusy && pa.nodeID == b.node.NodeID && pa.portName == b.port.Name {
		return ok(pa.link.LinkID, name, "already linked (link_id "+pa.link.LinkID+")")
	}
	for _, e := range []endpoint{a, b} {
		if p, busy := used[e.key()]; busy {
			return failed("", name, fmt.Sprintf("port %s of %s is already linked to %s %s (link_id %s); free ports of %s: %s",
				e.port.Name, e.node.Name, t.nodeName(p.nodeID), p.portName, p.link.LinkID, e.node.Name, t.freePorts(e.node, used)))
		}
	}
	req2 := gns3.LinkCreate{Nodes: []gns3.LinkEnd{a.linkEnd(), b.linkEnd()}}
	l, err := env.GNS3.CreateLink(ctx, env.ProjectID, req2)
	if err != nil && gns3.Retryable(err) {
		// The answer was lost, not necessarily the link: look before
		// reporting a failure.
		l = ct.findLink(ctx, env, a, b)
	}
	if l == nil {
		msg := "linking failed: " + describeGNS3Error(err)
		env.progress("", name, "failed", msg)
		return failed("", name, msg)
	}
	t.links = append(t.links, *l)
	added := &t.links[len(t.links)-1]
	used[a.key()] = peer{link: added, nodeID: b.node.NodeID, portName: b.port.Name}
	used[b.key()] = peer{link: added, nodeID: a.node.NodeID, portName: a.port.Name}
	env.progress(l.LinkID, name, "linked", "")
	return ok(l.LinkID, name, "linked "+name)
}

func (e endpoint) linkEnd() gns3.LinkEnd {
	label := e.port.ShortName
	if label == "" {
		label = e.port.Name
	}
	return gns3.LinkEnd{NodeID: e.node.NodeID, AdapterNumber: e.port.AdapterNumber, PortNumber: e.port.PortNumber, Label: &gns3.Label{Text: label}}
}

func (ct *createLinkTool) findLink(ctx context.Context, env Env, a, b endpoint) *gns3.Link {
	links, err := env.GNS3.NodeLinks(ctx, env.ProjectID, a.node.NodeID)
	if err != nil {
		return nil
	}
	for i := range links {
		if linkJoins(&links[i], a, b) {
			return &links[i]
		}
	}
	return nil
}

func linkJoins(l *gns3.Link, a, b endpoint) bool {
	if len(l.Nodes) != 2 {
		return false
	}
	match := func(e gns3.LinkEnd, x endpoint) bool {
		return e.NodeID == x.node.NodeID && e.AdapterNumber == x.port.AdapterNumber && e.PortNumber == x.port.PortNumber
	}
	return (match(l.Nodes[0], a) && match(l.Nodes[1], b)) || (match(l.Nodes[0], b) && match(l.Nodes[1], a))
}

// ---- delete_gns3_link ----

type deleteLinkTool struct{ spec }

func newDeleteLinkTool() Tool {
	return &deleteLinkTool{spec{
		name: domain.DeleteLinkTool,
		description: "Remove links. Identify each link by link_id, by one of its ends (node_a + port_a), " +
			"or by the two nodes it joins (node_a + node_b, when only one link joins them).",
		schema: `{"type":"object","properties":{"links":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{` +
			linkSelector + `},"additionalProperties":false}}},"required":["links"],"additionalProperties":false}`,
		modes:    labOnly,
		mutating: true,
	}}
}

type linkRef struct {
	LinkID string `json:"link_id"`
	NodeA  string `json:"node_a"`
	PortA  string `json:"port_a"`
	NodeB  string `json:"node_b"`
	PortB  string `json:"port_b"`
}

func (r linkRef) label() string {
	if r.LinkID != "" {
		return "link " + r.LinkID
	}
	s := r.NodeA
	if r.PortA != "" {
		s += " " + r.PortA
	}
	if r.NodeB != "" {
		s += " <-> " + r.NodeB
		if r.PortB != "" {
			s += " " + r.PortB
		}
	}
	return s
}

// resolve finds the one link a reference designates.
func (t *topology) resolveLink(r linkRef) (*gns3.Link, error) {
	if r.LinkID != "" {
		for i := range t.links {
			if t.links[i].LinkID == r.LinkID {
				return &t.links[i], nil
			}
		}
		return nil, fmt.Errorf("no link %s in this project (links: %s)", r.LinkID, t.linkNames(20))
	}
	a, err := t.findNode(r.NodeA)
	if err != nil {
		return nil, err
	}
	var b *gns3.Node
	if r.NodeB != "" {
		if b, err = t.findNode(r.NodeB); err != nil {
			return nil, err
		}
	}
	var candidates []*gns3.Link
	for i := range t.links {
		l := &t.links[i]
		if len(l.Nodes) != 2 {
			continue
		}
		for j, e := range l.Nodes {
			far := l.Nodes[1-j]
			if e.NodeID != a.NodeID {
				continue
			}
			if r.PortA != "" {
				p, err := findPort(a, r.PortA)
				if err != nil {
					return nil, err
				}
				if p.AdapterNumber != e.AdapterNumber || p.PortNumber != e.PortNumber {
					continue
				}
			}
			if b != nil {
				if far.NodeID != b.NodeID {
					continue
				}
				if r.PortB != "" {
					p, err := findPort(b, r.PortB)
					if err != nil {
						return nil, err
					}
					if p.AdapterNumber != far.AdapterNumber || p.PortNumber != far.PortNumber {
						continue
					}
				}
			}
			candidates = append(candidates, l)
			break
		}
	}
	switch len(candidates) {
	case 1:
		return candidates[0], nil
	case 0:
		return nil, fmt.Errorf("no link matches %s (links: %s)", r.label(), t.linkNames(20))
	}
	lines := make([]string, len(candidates))
	for i, l := range candidates {
		lines[i] = t.linkLine(l) + " (link_id " + l.LinkID + ")"
	}
	return nil, fmt.Errorf("%d links match %s; say which port: %s", len(candidates), r.label(), strings.Join(lines, "; "))
}

// Preview names the links a delete would remove, or each reference that matches none (naming
// the links there are).
func (dt *deleteLinkTool) Preview(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	refs, t, err := openLinkList(ctx, env, raw)
	if err != nil {
		return "Delete links", err
	}
	links, err := resolveAll(refs, t.resolveLink)
	if err != nil {
		return "Delete links", err
	}
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, t.linkLine(l))
	}
	return "Delete links: " + clipNames(names, 10), nil
}

func (dt *deleteLinkTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	refs, t, err := openLinkList(ctx, env, raw)
	if err != nil {
		return failWith(err)
	}
	items := make([]Item, 0, len(refs))
	for _, ref := range refs {
		l, err := t.resolveLink(ref)
		if err != nil {
			if env.retried() && ref.LinkID != "" {
				items = append(items, ok(ref.LinkID, ref.label(), "not in the project any more (deleted by an earlier attempt of this call)"))
			} else {
				items = append(items, failed(ref.LinkID, ref.label(), err.Error()))
			}
			continue
		}
		id, name := l.LinkID, t.linkLine(l)
		if err := env.GNS3.DeleteLink(ctx, env.ProjectID, id); err != nil {
			items = append(items, deleteFailed(env, id, name, err))
			continue
		}
		t.removeLink(id)
		env.progress(id, name, "deleted", "")
		items = append(items, ok(id, name, "deleted link "+name))
	}
	return Collect(items)
}

// linkNames lists the project's links by their ends and IDs, for an error that must say what
// exists.
func (t *topology) linkNames(max int) string {
	if len(t.links) == 0 {
		return "none"
	}
	names := make([]string, 0, len(t.links))
	for i := range t.links {
		names = append(names, t.linkLine(&t.links[i])+" (link_id "+t.links[i].LinkID+")")
	}
	sort.Strings(names)
	return clipNames(names, max)
}

func (t *topology) removeLink(id string) {
	kept := t.links[:0]
	for _, l := range t.links {
		if l.LinkID != id {
			kept = append(kept, l)
		}
	}
	t.links = kept
}
