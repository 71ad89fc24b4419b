package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// A save point is a GNS3 snapshot of a running lab. GNS3 exports only a project whose every
// node is stopped ("Project must be stopped in order to export it"), so the nodes that run are
// saved on their consoles, stopped, snapshotted and started again. This file holds GNS3's half
// of it (which nodes run, stopping, the snapshot, starting); the consoles' half (saving, and
// waiting until each console answers again) runs in the activities, under the device locks.

// SavePointNode is a node a save point pauses (domain.SavePointNode).
type SavePointNode = domain.SavePointNode

// SavePointPlan is a create_gns3_snapshot call resolved against the lab: the snapshot's name,
// free in the project, and the nodes that must be paused for it.
type SavePointPlan struct {
	Name    string
	Running []SavePointNode
	// Nodes and Links count the lab, for the answer.
	Nodes, Links int
}

// PlanSavePoint checks a create_gns3_snapshot call and reads, from GNS3 itself (a stale copy
// could miss a node that started), which nodes run. An error is the call's refusal in words: a
// bad name, a name already taken, a closed project.
func PlanSavePoint(ctx context.Context, env Env, raw json.RawMessage) (SavePointPlan, error) {
	name, err := snapshotArgs(env, raw)
	if err != nil {
		return SavePointPlan{}, err
	}
	t, err := readTopology(ctx, env.GNS3, env.ProjectID)
	if err != nil {
		return SavePointPlan{}, fmt.Errorf("could not read the project: %w", explain(err))
	}
	if t.project.Status != gns3.ProjectOpened {
		return SavePointPlan{}, fmt.Errorf("project %q is %s; ask the user to open it in GNS3 first", t.project.Name, t.project.Status)
	}
	taken, err := SnapshotNamed(ctx, env, name)
	if err != nil {
		return SavePointPlan{}, fmt.Errorf("could not list the snapshots: %w", explain(err))
	}
	if taken != nil {
		return SavePointPlan{}, nameTakenError(taken)
	}
	return SavePointPlan{Name: name, Running: runningNodes(ctx, env, t), Nodes: len(t.nodes), Links: len(t.links)}, nil
}

// runningNodes are the nodes GNS3 would not export: every one not stopped (suspended too), but
// the built-in ones, which always run and which GNS3 leaves out. Ordered by name.
func runningNodes(ctx context.Context, env Env, t *topology) []SavePointNode {
	var out []SavePointNode
	var templates map[string]string
	for i := range t.nodes {
		n := &t.nodes[i]
		if !Running(n) {
			continue
		}
		target := nodeTarget(n, "")
		p, err := devices.DetectPlatform(target)
		if err != nil && n.TemplateID != "" {
			if templates == nil {
				templates = templateIndex(ctx, env)
			}
			target = nodeTarget(n, templates[n.TemplateID])
			p, err = devices.DetectPlatform(target)
		}
		sn := SavePointNode{NodeID: n.NodeID, Name: n.Name, NodeType: n.NodeType, Status: n.Status, Target: domain.DeviceTarget(target)}
		if err == nil {
			sn.Platform = p.Name
		}
		out = append(out, sn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// templateIndex names the server's templates by ID; empty when they cannot be read (the
// console's prompt then tells the platform).
func templateIndex(ctx context.Context, env Env) map[string]string {
	out := map[string]string{}
	if ts, err := env.GNS3.ListTemplates(ctx); err == nil {
		for _, t := range ts {
			out[t.TemplateID] = t.Name
		}
	}
	return out
}

// snapshotArgs reads create_gns3_snapshot's one argument.
func snapshotArgs(env Env, raw json.RawMessage) (string, error) {
	var args struct {
		projectArg
		Name string `json:"name"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	if err := args.check(env); err != nil {
		return "", err
	}
	name := strings.TrimSpace(args.Name)
	return name, validSnapshotName(name)
}

// SavePointPreview says what a save point will do to the lab, for the approval a pause asks.
func SavePointPreview(plan SavePointPlan) string {
	if len(plan.Running) == 0 {
		return fmt.Sprintf("Take snapshot %q of the lab (%d node(s), %d link(s)); no node runs, so nothing is paused", plan.Name, plan.Nodes, plan.Links)
	}
	var saves, none []string
	for _, n := range plan.Running {
		saves = append(saves, fmt.Sprintf("%s (%s)", n.Name, saveWords(n)))
		if p, err := devices.ProfileByName(n.Platform); err == nil {
			if cmd, _ := p.SaveCommand(); cmd == "" {
				none = append(none, n.Name)
			}
		}
	}
	text := fmt.Sprintf("Take snapshot %q of the lab (%d node(s), %d link(s)). GNS3 takes a snapshot only of a stopped lab, so the %d running "+
		"node(s) are paused: each first saves its running configuration on the device (%s), then they are stopped, the snapshot is "+
		"taken, and they are started again; the pause lasts until their consoles answer (about a second for VPCS, longer for "+
		"routers that boot)", plan.Name, plan.Nodes, plan.Links, len(plan.Running), clipNames(saves, 10))
	if len(none) > 0 {
		text += fmt.Sprintf(". %s cannot save a running configuration (what was set only on the console, such as an address added "+
			"by hand, is lost when it stops)", clipNames(none, 10))
	}
	return text
}

// saveWords says how a node saves its configuration, as far as its fields tell.
func saveWords(n SavePointNode) string {
	p, err := devices.ProfileByName(n.Platform)
	if err != nil {
		return "its platform's save command"
	}
	cmd, inConfig := p.SaveCommand()
	switch {
	case cmd == "":
		return "nothing to save"
	case inConfig:
		return cmd + " in configuration mode"
	}
	return cmd
}

// How long a node may take to stop: GNS3 answers the stop once the emulator has exited, which
// VPCS does at once and a QEMU guest once it is powered off. A node past its bound is reported
// as one that cannot be stopped.
var stopWaitByType = map[string]time.Duration{
	"vpcs": 20 * time.Second, "docker": 60 * time.Second, "iou": 30 * time.Second, "dynamips": 60 * time.Second,
	"qemu": 2 * time.Minute, "virtualbox": 2 * time.Minute, "vmware": 2 * time.Minute,
}

const defaultStopWait = time.Minute

func stopWait(nodeType string) time.Duration {
	if d, ok := stopWaitByType[nodeType]; ok {
		return d
	}
	return defaultStopWait
}

// pollEvery is how often a pause reads the nodes' status while it waits for them: the lab is
// paused meanwhile, so it reads often (one list request covers every node).
const pollEvery = 100 * time.Millisecond

// StopNodes stops the nodes all at once and waits until GNS3 reports each stopped. It returns
// the ones that stopped and, for every other one, why not (GNS3 refused, or it did not stop in
// time), so a caller can start the stopped ones again.
func StopNodes(ctx context.Context, env Env, nodes []SavePointNode) (stopped []SavePointNode, failed []Item) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		waiting []SavePointNode
	)
	for _, n := range nodes {
		wg.Go(func() {
			env.progress(n.NodeID, n.Name, "stopping", "")
			sctx, cancel := context.WithTimeout(ctx, stopWait(n.NodeType))
			err := env.GNS3.StopNode(sctx, env.ProjectID, n.NodeID)
			cancel()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := "GNS3 could not stop it: " + describeGNS3Error(err)
				if errors.Is(err, context.DeadlineExceeded) || gns3.Retryable(err) && ctx.Err() == nil {
					msg = fmt.Sprintf("it did not stop within %s (%s)", stopWait(n.NodeType), describeGNS3Error(err))
				}
				env.progress(n.NodeID, n.Name, "failed", msg)
				failed = append(failed, failed1(n, msg))
				return
			}
			waiting = append(waiting, n)
		})
	}
	wg.Wait()
	done, late := awaitStatus(ctx, env, waiting, gns3.NodeStopped, func(n SavePointNode) time.Duration { return stopWait(n.NodeType) })
	for _, n := range done {
		env.progress(n.NodeID, n.Name, "stopped", "")
	}
	for _, f := range late {
		env.progress(f.ID, f.Name, "failed", f.Error)
	}
	return done, append(failed, late...)
}

func failed1(n SavePointNode, msg string) Item { return failed(n.NodeID, n.Name, msg) }

// awaitStatus reads the project's nodes until each of nodes reports status, or its own bound
// passes, or ctx ends. Nodes are matched by ID.
func awaitStatus(ctx context.Context, env Env, nodes []SavePointNode, status string, bound func(SavePointNode) time.Duration) (done []SavePointNode, late []Item) {
	if len(nodes) == 0 {
		return nil, nil
	}
	start := time.Now()
	left := map[string]SavePointNode{}
	last := map[string]string{}
	for _, n := range nodes {
		left[n.NodeID] = n
	}
	for {
		list, err := env.GNS3.ListNodes(ctx, env.ProjectID)
		if err == nil {
			seen := map[string]bool{}
			for _, g := range list {
				seen[g.NodeID] = true
				if n, ok := left[g.NodeID]; ok {
					last[g.NodeID] = g.Status
					if g.Status == status {
						done = append(done, n)
						delete(left, g.NodeID)
					}
				}
			}
			for id, n := range left {
				if !seen[id] {
					late = append(late, failed1(n, "the node disappeared from the project"))
					delete(left, id)
				}
			}
		}
		for id, n := range left {
			if time.Since(start) >= bound(n) || ctx.Err() != nil {
				msg := fmt.Sprintf("GNS3 accepted the request but %s did not report %s within %s (last status: %s)", n.Name, status, bound(n), cmp.Or(last[id], "unknown"))
				if ctx.Err() != nil {
					msg = fmt.Sprintf("stopped waiting for %s to report %s: %v", n.Name, status, ctx.Err())
				}
				if err != nil {
					msg += "; reading its status failed: " + describeGNS3Error(err)
				}
				late = append(late, failed1(n, msg))
				delete(left, id)
			}
		}
		if len(left) == 0 {
			return done, late
		}
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// StartedNode is a node started again by a save point or after a restore: as GNS3 has it now
// (a restore renews its ID, and may move its console), or why it could not be started.
type StartedNode struct {
	SavePointNode
	Err string
	// Accepted is when GNS3 answered its start (or found it running).
	Accepted time.Time
}

// StartNodes starts the nodes, found by name (a restore renews every ID), all at once, and waits
// until GNS3 reports each started. Nodes already running count as started. then, when not nil,
// runs for each node as soon as GNS3 accepted its start, beside the others (waiting for its
// console, so that a node slow to start delays only itself); what it returns, when not "", is
// why the node is not back. The result follows the order of nodes.
func StartNodes(ctx context.Context, env Env, nodes []SavePointNode, then func(StartedNode) string) []StartedNode {
	out := make([]StartedNode, len(nodes))
	list, err := env.GNS3.ListNodes(ctx, env.ProjectID)
	if err != nil {
		for i, n := range nodes {
			out[i] = StartedNode{SavePointNode: n, Err: "could not read the project to start it: " + describeGNS3Error(err)}
		}
		return out
	}
	t := &topology{nodes: list}
	t.index()
	var (
		wg, thens sync.WaitGroup
		mu        sync.Mutex
		waiting   []SavePointNode
		place     = map[string]int{}
		thenErr   = make([]string, len(nodes))
	)
	accepted := func(i int) {
		out[i].Accepted = time.Now()
		if then != nil {
			n := out[i]
			thens.Go(func() { thenErr[i] = then(n) })
		}
	}
	for i, n := range nodes {
		g, err := t.findNode(n.Name)
		if err != nil {
			out[i] = StartedNode{SavePointNode: n, Err: err.Error()}
			continue
		}
		cur := n
		cur.NodeID, cur.Status = g.NodeID, g.Status
		cur.Target = domain.DeviceTarget(nodeTarget(g, n.Target.TemplateName))
		out[i] = StartedNode{SavePointNode: cur}
		place[cur.NodeID] = i
		if g.Status == gns3.NodeStarted {
			accepted(i)
			continue
		}
		wg.Go(func() {
			env.progress(cur.NodeID, cur.Name, "starting", "")
			err := env.GNS3.StartNode(ctx, env.ProjectID, cur.NodeID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := "GNS3 could not start it: " + describeGNS3Error(err)
				env.progress(cur.NodeID, cur.Name, "failed", msg)
				out[i].Err = msg
				return
			}
			waiting = append(waiting, cur)
			accepted(i)
		})
	}
	wg.Wait()
	done, late := awaitStatus(ctx, env, waiting, gns3.NodeStarted, func(n SavePointNode) time.Duration { return StartWait(n.NodeType) })
	for _, n := range done {
		out[place[n.NodeID]].Status = gns3.NodeStarted
		env.progress(n.NodeID, n.Name, "started", "")
	}
	for _, f := range late {
		out[place[f.ID]].Err = f.Error
		env.progress(f.ID, f.Name, "failed", f.Error)
	}
	thens.Wait()
	for i := range out {
		if out[i].Err == "" && thenErr[i] != "" {
			out[i].Err = thenErr[i]
		}
	}
	return out
}

// SnapshotError is a snapshot GNS3 refused, in words a person understands.
type SnapshotError struct {
	Sentence string
	Err      error
	// Taken is the snapshot that already has the name, when that was the refusal.
	Taken *gns3.Snapshot
}

func (e *SnapshotError) Error() string { return e.Sentence }
func (e *SnapshotError) Unwrap() error { return e.Err }

// GNS3's two conflicts on a snapshot, told apart by their messages (both are 409).
const (
	gns3MustBeStopped = "must be stopped in order to export"
	gns3NameExists    = "already exists"
)

// TakeSnapshot creates the snapshot. A retried call that finds its name taken takes the
// snapshot it finds as the one its earlier attempt made. Both of GNS3's 409s come back as a
// *SnapshotError that says which it was.
func TakeSnapshot(ctx context.Context, env Env, name string) (*gns3.Snapshot, error) {
	s, err := env.GNS3.CreateSnapshot(ctx, env.ProjectID, name)
	if err == nil {
		return s, nil
	}
	if env.retried() && conflictSays(err, gns3NameExists) {
		if s, lerr := SnapshotNamed(ctx, env, name); lerr == nil && s != nil {
			return s, nil
		}
	}
	return nil, snapshotConflict(ctx, env, name, err)
}

// conflictSays reports whether err is GNS3's 409 with this in its message.
func conflictSays(err error, this string) bool {
	var api *gns3.APIError
	return errors.As(err, &api) && errors.Is(err, gns3.ErrConflict) && strings.Contains(strings.ToLower(api.Message), this)
}

// snapshotConflict turns GNS3's refusal of a snapshot into a sentence; other failures pass
// through.
func snapshotConflict(ctx context.Context, env Env, name string, err error) error {
	var api *gns3.APIError
	if !errors.As(err, &api) || !errors.Is(err, gns3.ErrConflict) {
		return err
	}
	msg := strings.ToLower(api.Message)
	switch {
	case strings.Contains(msg, gns3MustBeStopped):
		running := ""
		if nodes, rerr := env.GNS3.ListNodes(ctx, env.ProjectID); rerr == nil {
			if names := runningNames(nodes); names != "" {
				running = ": " + names + " still run"
			}
		}
		return &SnapshotError{Err: err, Sentence: fmt.Sprintf("GNS3 takes a snapshot only while every node of the lab is stopped "+
			"(it answered %q)%s; nothing was saved", api.Message, running)}
	case strings.Contains(msg, gns3NameExists):
		s, lerr := SnapshotNamed(ctx, env, name)
		switch {
		case lerr != nil:
			return &SnapshotError{Err: err, Sentence: fmt.Sprintf("a snapshot named %q already exists; choose another name, or restore that one", name)}
		case s != nil:
			return nameTakenError(s)
		}
		// GNS3 names its snapshot files by the second: two of the same name in one second clash
		// before either is listed.
		return &SnapshotError{Err: err, Sentence: fmt.Sprintf("GNS3 refused the snapshot %q: %s; try again in a second", name, api.Message)}
	}
	return &SnapshotError{Err: err, Sentence: "GNS3 refused the snapshot: " + api.Message}
}

func nameTakenError(s *gns3.Snapshot) error {
	return &SnapshotError{Err: gns3.ErrConflict, Taken: s, Sentence: fmt.Sprintf("a snapshot named %q already exists (taken %s); choose another name, or restore that one",
		s.Name, takenAt(s.Created(), time.Now()))}
}

// HasCLIConsole reports whether a node's console is one the console driver speaks (telnet or
// SSH, with a port): what a save point can save on and wait for.
func HasCLIConsole(t domain.DeviceTarget) bool {
	_, err := devices.Target(t).Endpoint("127.0.0.1")
	return err == nil
}
