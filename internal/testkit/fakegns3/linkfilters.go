package fakegns3

import (
	_ "embed"
	"encoding/json"
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
	for _, end := range l.ends {
		if n := p.node(end.NodeID); n != nil && filterNodeTypes[n.nodeType] {
			var out []any
			_ = json.Unmarshal(availableFiltersJSON, &out)
			return reply{200, out}, nil
		}
	}
	return reply{200, []any{}}, nil
}

// updateLink is PUT …/links/{link_id}: filters, suspend, link_style and labels, each only when
// given, as GNS3 applies them (filters normalised by normalFilters).
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
		if !sameFilters(f, l.filters) {
			l.filters, changed = f, true
		}
	}
	if raw, ok := obj["suspend"]; ok && string(raw) != "null" {
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return reply{}, errf(http.StatusUnprocessableEntity, "[{'type': 'bool_parsing', 'loc': ('body', 'suspend'), 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': %s}]", pyRepr(string(raw)))
		}
		if v != l.suspend {
			l.suspend, changed = v, true
		}
	}
	if changed {
		s.emitLink(p, l, "link.updated")
	}
	return reply{200, s.linkJSON(p, l, false)}, nil
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

// SetLinkConditions sets a link's filters and suspension directly, as a user in the GNS3 GUI
// does, announcing it with link.updated. Values are stored as given (ints and strings).
func (s *Server) SetLinkConditions(linkID string, filters map[string][]any, suspend bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, l := s.mustLink(linkID)
	l.filters, l.suspend = cloneFilters(filters), suspend
	s.emitLink(p, l, "link.updated")
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
