package livetopo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Summary is what a chat session last saw of its lab: enough to say later what changed, in the
// words a user would use (names, not ids). It is stored as JSON between turns.
type Summary struct {
	Nodes map[string]NodeMark `json:"nodes"` // by node_id
	Links map[string]LinkMark `json:"links"` // by link_id
}

// NodeMark is a node as the session saw it.
type NodeMark struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
}

// LinkMark is a link as the session saw it, described by its ends' names when it was seen (a
// removed link's nodes may be gone too).
type LinkMark struct {
	Text      string `json:"text"`
	Capturing bool   `json:"capturing,omitempty"`
}

// Summarize reduces a snapshot to a Summary.
func Summarize(s *Snapshot) Summary {
	out := Summary{Nodes: make(map[string]NodeMark, len(s.Nodes)), Links: make(map[string]LinkMark, len(s.Links))}
	byID := make(map[string]*gns3.Node, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		byID[n.NodeID] = n
		out.Nodes[n.NodeID] = NodeMark{Name: n.Name, Status: n.Status, X: n.X, Y: n.Y}
	}
	for i := range s.Links {
		l := &s.Links[i]
		out.Links[l.LinkID] = LinkMark{Text: linkText(l, byID), Capturing: l.Capturing}
	}
	return out
}

func linkText(l *gns3.Link, byID map[string]*gns3.Node) string {
	ends := make([]string, 0, 2)
	for _, e := range l.Nodes {
		n := byID[e.NodeID]
		name, port := e.NodeID, fmt.Sprintf("%d/%d", e.AdapterNumber, e.PortNumber)
		if n != nil {
			name = n.Name
			for _, p := range n.Ports {
				if p.AdapterNumber == e.AdapterNumber && p.PortNumber == e.PortNumber {
					port = p.Name
					if p.ShortName != "" {
						port = p.ShortName
					}
				}
			}
		}
		ends = append(ends, name+" "+port)
	}
	return strings.Join(ends, " — ")
}

// maxDriftItems keeps the note short on a lab rebuilt from scratch.
const maxDriftItems = 12

// Drift lists what changed from before to now, one phrase per change ("R2 stopped", "link
// R1 Gi0/1 — R3 Gi0/0 removed"), in a stable order: nodes, then links.
func Drift(before, now Summary) []string {
	var added, removed, changed, links []string
	for id, n := range now.Nodes {
		old, ok := before.Nodes[id]
		if !ok {
			added = append(added, n.Name+" added")
			continue
		}
		if old.Name != n.Name {
			changed = append(changed, old.Name+" renamed to "+n.Name)
		}
		if old.Status != n.Status && n.Status != "" {
			changed = append(changed, n.Name+" "+n.Status)
		}
		if old.X != n.X || old.Y != n.Y {
			changed = append(changed, n.Name+" moved")
		}
	}
	for id, n := range before.Nodes {
		if _, ok := now.Nodes[id]; !ok {
			removed = append(removed, n.Name+" deleted")
		}
	}
	for id, l := range now.Links {
		old, ok := before.Links[id]
		switch {
		case !ok:
			links = append(links, "link "+l.Text+" added")
		case old.Capturing != l.Capturing && l.Capturing:
			links = append(links, "capture started on link "+l.Text)
		case old.Capturing != l.Capturing:
			links = append(links, "capture stopped on link "+l.Text)
		}
	}
	for id, l := range before.Links {
		if _, ok := now.Links[id]; !ok {
			links = append(links, "link "+l.Text+" removed")
		}
	}
	for _, s := range [][]string{added, removed, changed, links} {
		sort.Strings(s)
	}
	out := append(append(append(removed, added...), changed...), links...)
	if len(out) > maxDriftItems {
		more := len(out) - maxDriftItems
		out = append(out[:maxDriftItems], fmt.Sprintf("and %d more changes", more))
	}
	return out
}

// OutsideChangeNote tells the model of changes made outside the chat (Drift's phrases).
func OutsideChangeNote(changes []string) string {
	return "Since your last answer, the lab changed outside this chat (in the GNS3 GUI, the web UI or another session): " +
		strings.Join(changes, ", ") + "."
}
