package fakegns3

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
)

// link-available-filters.json is a verbatim copy of shared/gns3/samples/v3.0.6: what GNS3
// offers on a link one of whose nodes can run filters.
//
//go:embed testdata/v3.0.6/link-available-filters.json
var availableFiltersJSON []byte

// filterNodeTypes are the node types GNS3 runs a link's filters on; a link between two others
// (switches, hubs) has no filters to offer.
var filterNodeTypes = map[string]bool{"vpcs": true, "vmware": true, "dynamips": true, "qemu": true, "iou": true,
	"cloud": true, "nat": true, "virtualbox": true, "docker": true}

func (s *Server) availableFilters(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Audit")
	if e != nil {
		return reply{}, e
	}
	if n, _ := filterNode(p, l); n != nil {
		var out []any
		_ = json.Unmarshal(availableFiltersJSON, &out)
		return reply{200, out}, nil
	}
	return reply{200, []any{}}, nil
}

// updateLink is PUT …/links/{link_id}: filters, suspend, link_style and labels, each only when
// given, as GNS3 applies them (filters normalised by normalFilters). A change GNS3 records is
// sent on to uBridge (pushToBridge), which may refuse it after GNS3 has recorded it.
func (s *Server) updateLink(r *http.Request, body []byte, u *user) (reply, *httpErr) {
	p, l, e := s.linkFor(r, u, "Link.Modify")
	if e != nil {
		return reply{}, e
	}
	obj, e := bodyObject(body)
	if e != nil {
		return reply{}, e
	}
	changed := false
	if raw, ok := obj["filters"]; ok && string(raw) != "null" {
		var in map[string]json.RawMessage
		if err := json.Unmarshal(raw, &in); err != nil {
			return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'dict_type', 'loc': ('body', 'filters'), 'msg': 'Input should be a valid dictionary', 'input': %s}]", pyRepr(string(raw)))
		}
		f, herr := normalFilters(in)
		if herr != nil {
			return reply{}, herr
		}
		if changed, e = s.setFilters(p, l, f); e != nil {
			return reply{}, e
		}
	}
	if raw, ok := obj["suspend"]; ok && string(raw) != "null" {
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'bool_parsing', 'loc': ('body', 'suspend'), 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': %s}]", pyRepr(string(raw)))
		}
		c, e := s.setSuspend(p, l, v)
		if e != nil {
			return reply{}, e
		}
		changed = changed || c
	}
	if changed {
		s.emitLink(p, l, "link.updated")
	}
	return reply{200, s.linkJSON(p, l, false)}, nil
}

// setFilters records a link's filters when they change, and sends them on to uBridge, which may
// refuse them after GNS3 recorded them; changed says whether they changed. The caller holds s.mu.
func (s *Server) setFilters(p *project, l *link, f map[string][]any) (changed bool, e *httpErr) {
	if sameFilters(f, l.filters) {
		return false, nil
	}
	prev := appliedFilters(l)
	l.filters = f
	return true, s.pushToBridge(p, l, prev)
}

// setSuspend is setFilters for the link's suspension.
func (s *Server) setSuspend(p *project, l *link, v bool) (changed bool, e *httpErr) {
	if v == l.suspend {
		return false, nil
	}
	prev := appliedFilters(l)
	l.suspend = v
	return true, s.pushToBridge(p, l, prev)
}

// bridgeState is uBridge's side of a link where it differs from what GNS3 shows. GNS3's
// controller keeps a link's filters and sends the active ones (every packet dropped while the
// link is suspended) to the compute of the link's filter node, whose uBridge applies them. The
// fake keeps two facts of the real server:
//
//   - GNS3 3.0.x's compute replaces its copy only with a non-empty set (gns3-server v3.0.6,
//     api/routes/compute/*_nodes.py: "if nio_data.filters: nio.filters = nio_data.filters"), so
//     {} leaves the old filters applied while the API reads {}, and a suspended link resumed
//     without filters goes on dropping everything. 3.1.0a1 fixed it (commit 5e3ca29c, "Fix
//     updating packet filters": nio.filters.clear() first).
//   - a link's bridge can die (KillLinkBridge; uBridge 0.9.19 crashes when filters change while
//     delayed packets are in flight). GNS3 goes on showing the link, nothing crosses it, and
//     every later change answers 409 "bridge … doesn't exist", after GNS3 recorded it. Starting
//     or reloading the filter node starts its uBridge again, with the filters the compute kept.
type bridgeState struct {
	filters map[string][]any
	dead    bool
}

// activeFilters are the filters GNS3 sends for a link (Link.get_active_filters).
func activeFilters(l *link) map[string][]any {
	if l.suspend {
		return map[string][]any{"frequency_drop": {-1}}
	}
	if l.filters == nil {
		return map[string][]any{}
	}
	return cloneFilters(l.filters)
}

// appliedFilters are the filters uBridge applies to the link's packets.
func appliedFilters(l *link) map[string][]any {
	if l.bridge != nil {
		return cloneFilters(l.bridge.filters)
	}
	return activeFilters(l)
}

// filterNode is the node whose uBridge runs the link's filters (Link._get_filter_node): the
// first end that can run them; nil for a link between two switches.
func filterNode(p *project, l *link) (*node, int) {
	for _, end := range l.ends {
		if n := p.node(end.NodeID); n != nil && filterNodeTypes[n.nodeType] {
			return n, end.Adapter
		}
	}
	return nil, 0
}

// pushToBridge sends a link's active filters to its compute, as UDPLink.update does after GNS3
// recorded a change; prev is what uBridge applied before it.
func (s *Server) pushToBridge(p *project, l *link, prev map[string][]any) *httpErr {
	n, adapter := filterNode(p, l)
	if n == nil {
		return nil
	}
	sent := activeFilters(l)
	kept := sent
	if len(sent) == 0 && !s.newerThan30() {
		kept = prev
	}
	dead := l.bridge != nil && l.bridge.dead
	l.bridge = &bridgeState{filters: cloneFilters(kept), dead: dead}
	if !dead && sameFilters(kept, sent) {
		l.bridge = nil
	}
	if dead && n.status == "started" {
		name := bridgeName(n, adapter)
		return errf(http.StatusConflict, "Error while sending command 'bridge reset_packet_filters %s': bridge '%s' doesn't exist: "+
			"uBridge version 0.9.19 running with libpcap version 1.10.5 (with TPACKET_V3)\nHypervisor TCP control server started (IP 127.0.0.1 port 36001)", name, name)
	}
	return nil
}

// bridgeName is the name GNS3 gives a node's uBridge bridge.
func bridgeName(n *node, adapter int) string {
	switch n.nodeType {
	case "vpcs":
		return "VPCS-" + n.id
	case "qemu":
		return fmt.Sprintf("QEMU-%s-%d", n.id, adapter)
	}
	return strings.ToUpper(n.nodeType) + "-" + n.id
}

// bridgesStarted is a node's uBridge started again (the node started or reloaded): the bridges
// of the links it filters exist again, with the filters its compute kept. The caller holds s.mu.
func (s *Server) bridgesStarted(p *project, n *node) {
	for _, l := range p.links {
		if fn, _ := filterNode(p, l); fn != n || l.bridge == nil {
			continue
		}
		l.bridge.dead = false
		if sameFilters(l.bridge.filters, activeFilters(l)) {
			l.bridge = nil
		}
	}
}

// normalFilters does what GNS3's Link.update_filters does: text is trimmed, numbers become
// integers, and a filter whose first value is 0 or empty is dropped (not active). GNS3 checks
// neither the filter types nor the ranges: uBridge is told what was stored.
func normalFilters(in map[string]json.RawMessage) (map[string][]any, *httpErr) {
	out := map[string][]any{}
	for name, raw := range in {
		var values []any
		if err := json.Unmarshal(raw, &values); err != nil {
			// GNS3 iterates the value: anything but a list fails inside the server.
			return nil, errf(http.StatusInternalServerError, "Internal Server Error")
		}
		norm := make([]any, 0, len(values))
		for _, v := range values {
			switch x := v.(type) {
			case string:
				norm = append(norm, strings.Trim(x, "\n "))
			case float64:
				norm = append(norm, int(math.Trunc(x)))
			case bool:
				norm = append(norm, map[bool]int{false: 0, true: 1}[x])
			default:
				return nil, errf(http.StatusInternalServerError, "Internal Server Error")
			}
		}
		if len(norm) == 0 || norm[0] == 0 || norm[0] == "" {
			continue
		}
		out[name] = norm
	}
	return out, nil
}

func sameFilters(a, b map[string][]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return len(a) == len(b) && string(x) == string(y)
}

func cloneFilters(f map[string][]any) map[string][]any {
	if f == nil {
		return nil
	}
	out := make(map[string][]any, len(f))
	for k, v := range f {
		out[k] = append([]any(nil), v...)
	}
	return out
}

// SetLinkConditions sets a link's filters and suspension as a user in GNS3's own link dialog
// does (one PUT of both), with the same effect on uBridge as that PUT, announcing it with
// link.updated. Values are stored as given (ints and strings).
func (s *Server) SetLinkConditions(linkID string, filters map[string][]any, suspend bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.mustLink(linkID)
	// GNS3 keeps what it recorded when uBridge refuses it.
	_, _ = s.setFilters(p, l, cloneFilters(filters))
	_, _ = s.setSuspend(p, l, suspend)
	s.emitLink(p, l, "link.updated")
}

// Bridge tells what uBridge does to a link's packets: the filters it applies (what GNS3 shows,
// unless GNS3 3.0.x kept old ones) and whether its bridge is dead (nothing crosses).
func (s *Server) Bridge(linkID string) (applied map[string][]any, dead bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.mustLink(linkID)
	if n, _ := filterNode(p, l); n == nil {
		return map[string][]any{}, false
	}
	return appliedFilters(l), l.bridge != nil && l.bridge.dead
}

// KillLinkBridge makes a link's uBridge bridge die, as uBridge 0.9.19 does when its filters
// change while delayed packets are in flight (see bridgeState).
func (s *Server) KillLinkBridge(linkID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, l := s.mustLink(linkID)
	l.bridge = &bridgeState{filters: appliedFilters(l), dead: true}
}

// Link returns one link by ID.
func (s *Server) Link(linkID string) (Link, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.findLink(linkID)
	if l == nil {
		return Link{}, false
	}
	return l.snapshot(p.id), true
}

// findLink finds a link of any project; nil when there is none. The caller holds s.mu.
func (s *Server) findLink(id string) (*project, *link) {
	for _, p := range s.projects {
		for _, l := range p.links {
			if l.id == id {
				return p, l
			}
		}
	}
	return nil, nil
}

func (s *Server) mustLink(id string) (*project, *link) {
	p, l := s.findLink(id)
	if l == nil {
		s.t.Fatalf("fakegns3: no link %s", id)
	}
	return p, l
}
