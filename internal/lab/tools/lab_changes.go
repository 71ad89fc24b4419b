package tools

import (
	"strings"
)

// LabChanges says what differs between two renderings of a project (SnapshotContext), one line
// per change, each short and carrying the ids the model needs: a new node is given whole ("- PC3
// added: vpcs, started, …; node_id …"), a changed one without the id it had under the same name,
// a deleted one by name and id, a link by its ends. Deleted things come first, then the rest in the order of the new rendering. Nothing
// changed is nil.
//
// It reads the text SnapshotContext writes, since the text is all that is kept of what the model
// was shown: a note about a later change is computed against exactly that.
func LabChanges(before, now string) []string {
	old, cur := labLines(before), labLines(now)
	oldByKey := make(map[string]labLine, len(old))
	for _, l := range old {
		oldByKey[l.key] = l
	}
	curKeys := make(map[string]bool, len(cur))
	for _, l := range cur {
		curKeys[l.key] = true
	}
	var out []string
	for _, l := range old {
		if curKeys[l.key] {
			continue
		}
		switch l.kind {
		case lineNode:
			out = append(out, "- "+l.name+" deleted ("+l.key+")")
		case lineLink:
			out = append(out, "- "+l.key+" removed")
		}
	}
	for _, l := range cur {
		prev, had := oldByKey[l.key]
		if had && prev.text == l.text {
			continue
		}
		switch {
		case l.kind == lineNode && had && prev.name == l.name:
			// The model has its id already, under the same name.
			desc, _, _ := strings.Cut(l.body, nodeIDMark)
			out = append(out, "- "+l.name+" now: "+desc)
		case l.kind == lineNode && had:
			out = append(out, "- "+l.name+" now: "+l.body)
		case l.kind == lineNode:
			out = append(out, "- "+l.name+" added: "+l.body)
		case l.kind == lineLink && !had:
			out = append(out, "- "+l.text+" added")
		case l.kind == lineLink && l.body == "":
			out = append(out, "- "+l.key+" now without conditions")
		case l.kind == lineLink:
			out = append(out, "- "+l.key+" now: "+l.body)
		default:
			out = append(out, "- "+l.text)
		}
	}
	return out
}

type lineKind int

const (
	lineProject lineKind = iota // the project's own lines: its name, id and status, closed or not
	lineNode
	lineLink
	lineMore // "… 3 more nodes"
)

// labLine is one line of a rendered project that can change on its own.
type labLine struct {
	kind lineKind
	// key is what stays the same when the thing it describes changes: "node_id <id>", "link <its
	// ends>", or the line itself.
	key string
	// text is the line without its list mark (a link's with "link " before it); name is a node's
	// name and body what follows it: a node's description, a link's conditions.
	text, name, body string
}

// labLines reads a rendering of SnapshotContext back into its lines.
func labLines(s string) []labLine {
	var out []labLine
	section := lineProject
	for _, raw := range strings.Split(s, "\n") {
		switch {
		case raw == "":
			continue
		case strings.HasPrefix(raw, nodesHeading):
			section = lineNode
			continue
		case strings.HasPrefix(raw, linksHeading):
			section = lineLink
			continue
		}
		text, item := strings.CutPrefix(raw, "- ")
		switch {
		case !item || section == lineProject:
			out = append(out, labLine{kind: lineProject, key: raw, text: raw})
		case raw == noneYet:
		case strings.HasPrefix(text, moreMark):
			key := "more nodes"
			if section == lineLink {
				key = "more links"
			}
			out = append(out, labLine{kind: lineMore, key: key, text: text})
		case section == lineNode:
			name, body, _ := strings.Cut(text, ": ")
			key := "node " + name
			if _, id, ok := strings.Cut(body, nodeIDMark); ok {
				key = "node_id " + id
			}
			out = append(out, labLine{kind: lineNode, key: key, text: text, name: name, body: body})
		default:
			ends, conditions, conditioned := strings.Cut(text, conditionsMark)
			l := labLine{kind: lineLink, key: "link " + ends, text: "link " + text}
			if conditioned {
				l.body = strings.TrimPrefix(conditionsMark, " ") + conditions
			}
			out = append(out, l)
		}
	}
	return out
}
