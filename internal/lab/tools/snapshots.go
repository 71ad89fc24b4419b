package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Names of the snapshot tools; the restore is destructive (domain.IsDestructiveTool).
const (
	CreateSnapshotTool  = "create_gns3_snapshot"
	ListSnapshotsTool   = "list_gns3_snapshots"
	RestoreSnapshotTool = domain.RestoreSnapshotTool
)

const maxSnapshotName = 100

// snapshotContents says what a GNS3 snapshot keeps and what it cannot, for the model and the
// person it tells: GNS3 saves the project's files, not the devices' memory.
const snapshotContents = "A snapshot keeps the nodes, links, link conditions and what each device saved (write memory, " +
	"VPCS save), no running state."

// ---- create_gns3_snapshot ----

type createSnapshotTool struct{ spec }

func newCreateSnapshotTool() Tool {
	return &createSnapshotTool{spec{
		name: CreateSnapshotTool,
		description: "Save the project under a name (a GNS3 snapshot), to restore it later with restore_gns3_snapshot. " +
			snapshotContents + " GNS3 snapshots only a stopped lab: running devices save their configuration first, and the lab " +
			"is paused while the snapshot is taken (the result says how long). Names are unique within the project.",
		schema: `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100,` +
			`"description":"The snapshot's name, e.g. \"before-ospf\"."}},"required":["name"],"additionalProperties":false}`,
		modes:    changingModes,
		mutating: true,
	}}
}

func validSnapshotName(name string) error {
	switch {
	case name == "":
		return errors.New("name must not be empty")
	case len(name) > maxSnapshotName:
		return fmt.Errorf("name must be at most %d characters", maxSnapshotName)
	case strings.ContainsAny(name, `/\`):
		// GNS3 stores a snapshot as a file named after it.
		return fmt.Errorf("name %q must not contain / or \\", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("name %q must not contain control characters", name)
		}
	}
	return nil
}

// Run takes the snapshot of a lab whose nodes are all stopped. Pausing a running lab saves the
// devices on their consoles first, which a workflow does step by step (PlanSavePoint, the
// activities' save point); here a running node is a refusal that says so, and nothing stops.
func (ct *createSnapshotTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	name, err := snapshotArgs(env, raw)
	if err != nil {
		return failWith(err)
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	if running := runningNames(t.nodes); running != "" {
		return Collect([]Item{failed("", name, fmt.Sprintf("GNS3 takes a snapshot only while every node of the lab is stopped, and %s run; "+
			"nothing was saved and nothing was stopped", running))})
	}
	s, err := TakeSnapshot(ctx, env, name)
	if err != nil {
		return Collect([]Item{failed("", name, "taking the snapshot failed: "+describeGNS3Error(err))})
	}
	env.progress(s.SnapshotID, s.Name, "created", "")
	r := Collect([]Item{ok(s.SnapshotID, s.Name, fmt.Sprintf("snapshot %q taken %s of %d node(s) and %d link(s). %s",
		s.Name, takenAt(s.Created(), time.Now()), len(t.nodes), len(t.links), snapshotContents))})
	snapshotMetadata(r.Metadata, s)
	return r
}

// Preview says, for an approval, what taking the snapshot does to the lab now: which running
// nodes it pauses, and how each saves its configuration first.
func (ct *createSnapshotTool) Preview(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	plan, err := PlanSavePoint(ctx, env, raw)
	if err != nil {
		return "Take a snapshot", err
	}
	return SavePointPreview(plan), nil
}

func snapshotMetadata(m map[string]any, s *gns3.Snapshot) {
	m["snapshot_id"] = s.SnapshotID
	m["snapshot_name"] = s.Name
	m["taken_at"] = panelTime(s.Created())
	// Unix seconds, as GNS3 lists it: what finds the snapshot's save point again.
	m["snapshot_created"] = s.CreatedAt
}

// panelTime is a timestamp GNS3's panel parses: an explicit offset, never a bare Z.
func panelTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }

// takenAt says when a snapshot was taken, absolutely and relative to now.
func takenAt(at, now time.Time) string {
	return fmt.Sprintf("on %s UTC (%s)", at.UTC().Format("2006-01-02 15:04:05"), agoText(now.Sub(at)))
}

func agoText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min ago", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// ---- list_gns3_snapshots ----

type listSnapshotsTool struct{ spec }

func newListSnapshotsTool() Tool {
	return &listSnapshotsTool{spec{
		name:        ListSnapshotsTool,
		description: "List the project's snapshots, oldest first: each one's snapshot_id, name and when it was taken.",
		schema:      noArgumentsSchema,
		modes:       changingModes,
		idempotent:  true,
	}}
}

func (lt *listSnapshotsTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	if err := noArguments(env, raw); err != nil {
		return failWith(err)
	}
	list, err := env.GNS3.ListSnapshots(ctx, env.ProjectID)
	if err != nil {
		return failWith(fmt.Errorf("could not list the snapshots: %w", explain(err)))
	}
	now := time.Now()
	items := make([]Item, 0, len(list))
	for _, s := range list {
		items = append(items, ok(s.SnapshotID, s.Name, "taken "+takenAt(s.Created(), now)))
	}
	r := Collect(items)
	r.Metadata["snapshots"] = len(list)
	if len(list) == 0 {
		r.Metadata["note"] = "this project has no snapshots; create_gns3_snapshot takes one"
	}
	return r
}

// SnapshotNamed finds the project's snapshot of that name; nil when there is none.
func SnapshotNamed(ctx context.Context, env Env, name string) (*gns3.Snapshot, error) {
	list, err := env.GNS3.ListSnapshots(ctx, env.ProjectID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
	}
	return nil, nil
}

// Running reports whether a node keeps GNS3 from taking a snapshot: any not stopped (suspended
// too), but the built-in ones, which always run and which GNS3 leaves out.
func Running(n *gns3.Node) bool { return n.Status != gns3.NodeStopped && !builtinNodeType(n.NodeType) }

// runningNames lists the nodes that keep GNS3 from taking a snapshot, as "name (status)" by
// name, clipped; "" when there is none.
func runningNames(nodes []gns3.Node) string {
	var names []string
	for i := range nodes {
		if Running(&nodes[i]) {
			names = append(names, fmt.Sprintf("%s (%s)", nodes[i].Name, nodes[i].Status))
		}
	}
	sort.Strings(names)
	return clipNames(names, 10)
}

// findSnapshot resolves a snapshot by ID or exact name; the error names the ones there are.
func findSnapshot(list []gns3.Snapshot, ref string) (*gns3.Snapshot, error) {
	ref = strings.TrimSpace(ref)
	for i := range list {
		if list[i].SnapshotID == ref {
			return &list[i], nil
		}
	}
	var named []*gns3.Snapshot
	for i := range list {
		if list[i].Name == ref {
			named = append(named, &list[i])
		}
	}
	if len(named) == 1 {
		return named[0], nil
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("this project has no snapshots, so there is no %q to restore (create_gns3_snapshot takes one)", ref)
	}
	now := time.Now()
	known := make([]string, 0, len(list))
	for _, s := range list {
		known = append(known, fmt.Sprintf("%q (snapshot_id %s, taken %s)", s.Name, s.SnapshotID, takenAt(s.Created(), now)))
	}
	return nil, fmt.Errorf("no snapshot %q in this project; its snapshots are: %s", ref, strings.Join(known, "; "))
}

// ---- restore_gns3_snapshot ----

type restoreSnapshotTool struct{ spec }

func newRestoreSnapshotTool() Tool {
	return &restoreSnapshotTool{spec{
		name: RestoreSnapshotTool,
		description: "Put the project back as it was when a snapshot was taken (snapshot: its snapshot_id or exact name, from " +
			"list_gns3_snapshots); everything changed since is lost. " + snapshotContents + " The nodes that ran then start again " +
			"and each device is read back: the result says what came back. Afterwards every node and link has a NEW " +
			"node_id/link_id (names stay).",
		schema: `{"type":"object","properties":{"snapshot":{"type":"string","description":"The snapshot's snapshot_id or exact name."}},` +
			`"required":["snapshot"],"additionalProperties":false}`,
		modes:      labOnly,
		mutating:   true,
		idempotent: true,
	}}
}

// restoreArgs reads the one argument of a restore.
func restoreArgs(env Env, raw json.RawMessage) (string, error) {
	var args struct {
		projectArg
		Snapshot string `json:"snapshot"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	if err := args.check(env); err != nil {
		return "", err
	}
	if strings.TrimSpace(args.Snapshot) == "" {
		return "", errors.New("snapshot is required: a snapshot_id or the exact name from list_gns3_snapshots")
	}
	return args.Snapshot, nil
}

// restoreTarget reads what a restore of the snapshot ref needs to know first: the lab as it is
// and the snapshot.
func restoreTarget(ctx context.Context, env Env, ref string) (*topology, *gns3.Snapshot, error) {
	t, err := openTopology(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	list, err := env.GNS3.ListSnapshots(ctx, env.ProjectID)
	if err != nil {
		return nil, nil, fmt.Errorf("could not list the snapshots: %w", explain(err))
	}
	s, err := findSnapshot(list, ref)
	if err != nil {
		return nil, nil, err
	}
	return t, s, nil
}

// Preview says, for the approval, what the restore would lose now.
func (rt *restoreSnapshotTool) Preview(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	ref, err := restoreArgs(env, raw)
	if err != nil {
		return "Restore a snapshot", err
	}
	t, s, err := restoreTarget(ctx, env, ref)
	if err != nil {
		return fmt.Sprintf("Restore snapshot %q", strings.TrimSpace(ref)), err
	}
	var started []string
	for _, n := range t.nodes {
		if n.Status == gns3.NodeStarted && !builtinNodeType(n.NodeType) {
			started = append(started, n.Name)
		}
	}
	sort.Strings(started)
	running := "no node is running now"
	if len(started) > 0 {
		running = fmt.Sprintf("%d running node(s) (%s) are stopped and lose their unsaved configuration", len(started), clipNames(started, 10))
	}
	return fmt.Sprintf("Restore snapshot %q, taken %s. Lost: every change made since then (nodes, links and link conditions "+
		"added, removed or changed) and all running state: %s. The lab has %d node(s) and %d link(s) now; afterwards every "+
		"node and link has a new id; GNS3 brings every node back stopped, and the copilot starts again those that ran when it "+
		"took the snapshot", s.Name, takenAt(s.Created(), time.Now()), running, len(t.nodes), len(t.links)), nil
}

func clipNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

func (rt *restoreSnapshotTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	ref, err := restoreArgs(env, raw)
	if err != nil {
		return failWith(err)
	}
	before, s, err := restoreTarget(ctx, env, ref)
	if err != nil {
		return failWith(err)
	}
	env.progress(s.SnapshotID, s.Name, "restoring", "")
	if _, err := env.GNS3.RestoreSnapshot(ctx, env.ProjectID, s.SnapshotID); err != nil {
		return Collect([]Item{failed(s.SnapshotID, s.Name, "restoring failed: "+describeGNS3Error(err))})
	}
	env.progress(s.SnapshotID, s.Name, "restored", "")
	// Read from GNS3 itself: the live copy may not have heard of the restore yet, and every ID
	// it holds is gone.
	after, err := readTopology(ctx, env.GNS3, env.ProjectID)
	if err != nil {
		it := ok(s.SnapshotID, s.Name, fmt.Sprintf("restored snapshot %q; the project could not be read back (%s): every node and link has a new id, "+
			"read them with get_gns3_topology", s.Name, describeGNS3Error(err)))
		return Collect([]Item{it})
	}
	r := Collect(restoredItems(before, after, s))
	snapshotMetadata(r.Metadata, s)
	r.Metadata["nodes"] = len(after.nodes)
	r.Metadata["links"] = len(after.links)
	r.Metadata["ids_changed"] = true
	return r
}

// restoredItems are the snapshot's item, saying what went and what came back, then one item per
// node under its new ID with the ID it had.
func restoredItems(before, after *topology, s *gns3.Snapshot) []Item {
	old := map[string]string{}
	for _, n := range before.nodes {
		old[n.Name] = n.NodeID
	}
	kept := map[string]bool{}
	nodes := make([]Item, 0, len(after.nodes))
	for _, n := range after.nodes {
		kept[n.Name] = true
		was := "it did not exist before the restore"
		if id, ok := old[n.Name]; ok {
			was = "was " + id
		}
		nodes = append(nodes, ok(n.NodeID, n.Name, fmt.Sprintf("%s is back as at the snapshot, %s; node_id %s (%s)", n.Name, statusText(&n), n.NodeID, was)))
	}
	var gone []string
	for _, n := range before.nodes {
		if !kept[n.Name] {
			gone = append(gone, n.Name)
		}
	}
	sort.Strings(gone)
	text := fmt.Sprintf("restored snapshot %q (taken %s): %d node(s) and %d link(s), every one with a new id; GNS3 brings every "+
		"node back stopped", s.Name, takenAt(s.Created(), time.Now()), len(after.nodes), len(after.links))
	if len(gone) > 0 {
		text += "; removed (added after the snapshot): " + clipNames(gone, 20)
	}
	return append([]Item{ok(s.SnapshotID, s.Name, text)}, nodes...)
}
