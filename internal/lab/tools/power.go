package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// How long a node type may take to report "started" when the model does
// not say; a whole start call waits for its slowest node.
var startWaitByType = map[string]time.Duration{
	"vpcs":       30 * time.Second,
	"docker":     90 * time.Second,
	"iou":        90 * time.Second,
	"dynamips":   3 * time.Minute,
	"qemu":       5 * time.Minute,
	"virtualbox": 5 * time.Minute,
	"vmware":     5 * time.Minute,
}

const (
	defaultStartWait = 3 * time.Minute
	maxStartWait     = 15 * time.Minute
	startParallelism = 4
)

// StartWait bounds how long a node of this type may take to report started, and, once started,
// until its console answers with a prompt: VPCS at once, a router once it has booted.
func StartWait(nodeType string) time.Duration {
	if d, ok := startWaitByType[nodeType]; ok {
		return d
	}
	return defaultStartWait
}

// ---- start_gns3_node ----

type startTool struct {
	spec
	// Poll timing; tests shorten it.
	firstPoll, maxPoll, progressEvery time.Duration
}

func newStartTool() *startTool {
	return &startTool{
		spec: spec{
			name: "start_gns3_node",
			description: "Start nodes and wait until GNS3 reports each one as started (polling its status, with a deadline), " +
				"reporting progress per node. node_ids accepts node IDs or names. Nodes already running are reported as such. " +
				"Consoles answer only once a node is started; routers may need a further minute to boot.",
			schema: `{"type":"object","properties":{"node_ids":{"type":"array","minItems":1,"maxItems":30,"uniqueItems":true,` +
				`"items":{"type":"string"},"description":"Node IDs or names."},` +
				`"timeout_seconds":{"type":"integer","minimum":5,"maximum":900,"description":"How long to wait for the nodes to report started; default depends on the node types (VPCS 30 s, QEMU 300 s)."}` +
				`},"required":["node_ids"],"additionalProperties":false}`,
			modes:      bothModes,
			mutating:   true,
			idempotent: true,
		},
		firstPoll:     250 * time.Millisecond,
		maxPoll:       2 * time.Second,
		progressEvery: 5 * time.Second,
	}
}

type pending struct {
	id, name, last string
}

func (st *startTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	refs, timeout, err := startArgs(env, raw)
	if err != nil {
		return failWith(err)
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	b := planStarts(t, refs, timeout, env.gns3Host())
	waiting := b.send(ctx, env)
	for _, res := range st.await(ctx, env, waiting, b.wait) {
		b.results[b.index[res.ID]] = res
	}
	r := Collect(b.results)
	r.Metadata["wait_limit_seconds"] = b.wait.Seconds()
	return r
}

// startArgs checks the arguments of a start call: the requested nodes and the wait the model
// asked for (0 when it did not say).
func startArgs(env Env, raw json.RawMessage) ([]string, time.Duration, error) {
	var args struct {
		projectArg
		NodeIDs        []string `json:"node_ids"`
		TimeoutSeconds *float64 `json:"timeout_seconds"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, 0, err
	}
	if err := args.check(env); err != nil {
		return nil, 0, err
	}
	refs, err := nodeRefs("node_ids", args.NodeIDs, maxNodesPerCall)
	if err != nil {
		return nil, 0, err
	}
	if args.TimeoutSeconds == nil {
		return refs, 0, nil
	}
	s := *args.TimeoutSeconds
	if s < 5 || s > maxStartWait.Seconds() || s != float64(int(s)) {
		return nil, 0, fmt.Errorf("timeout_seconds must be a whole number between 5 and %d, got %v", int(maxStartWait.Seconds()), s)
	}
	return refs, time.Duration(s) * time.Second, nil
}

// startBatch is one start call after the nodes were looked up: the items already decided
// (unknown, built-in, already started) and the nodes still to start, by their place in the call.
type startBatch struct {
	results []Item
	nodes   []*gns3.Node
	toStart []int
	index   map[string]int // node ID → place in the call
	wait    time.Duration
}

// planStarts looks the nodes up. Without a timeout from the model the call waits as long as its
// slowest node type needs.
func planStarts(t *topology, refs []string, timeout time.Duration, host string) *startBatch {
	b := &startBatch{results: make([]Item, len(refs)), nodes: make([]*gns3.Node, len(refs)), index: map[string]int{}, wait: timeout}
	for i, ref := range refs {
		n, err := t.findNode(ref)
		switch {
		case err != nil:
			b.results[i] = failed(ref, ref, err.Error())
		case builtinNodeType(n.NodeType):
			b.results[i] = ok(n.NodeID, n.Name, fmt.Sprintf("%s is a built-in %s and always runs", n.Name, n.NodeType))
		case n.Status == gns3.NodeStarted:
			b.results[i] = ok(n.NodeID, n.Name, fmt.Sprintf("%s was already started; console %s", n.Name, consoleText(n, host)))
		default:
			b.nodes[i] = n
			b.toStart = append(b.toStart, i)
			b.index[n.NodeID] = i
			if timeout == 0 {
				b.wait = max(b.wait, StartWait(n.NodeType))
			}
		}
	}
	return b
}

// send asks GNS3 to start the nodes, a few at a time: GNS3 answers each only once the emulator
// has been launched. It returns the nodes GNS3 accepted; a refusal becomes the node's item.
func (b *startBatch) send(ctx context.Context, env Env) []pending {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		sem     = make(chan struct{}, startParallelism)
		waiting []pending
	)
	for _, i := range b.toStart {
		n := b.nodes[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			env.progress(n.NodeID, n.Name, "starting", "")
			err := env.GNS3.StartNode(ctx, env.ProjectID, n.NodeID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := "start failed: " + describeGNS3Error(err)
				b.results[i] = failed(n.NodeID, n.Name, msg)
				env.progress(n.NodeID, n.Name, "failed", msg)
				return
			}
			waiting = append(waiting, pending{id: n.NodeID, name: n.Name, last: statusText(n)})
		}()
	}
	wg.Wait()
	return waiting
}

// await polls the node list until every waiting node reports started, the
// deadline passes or ctx ends; one list request covers all nodes.
func (st *startTool) await(ctx context.Context, env Env, waiting []pending, wait time.Duration) []Item {
	var out []Item
	if len(waiting) == 0 {
		return out
	}
	start := time.Now()
	deadline := start.Add(wait)
	interval := st.firstPoll
	lastReport := start
	left := map[string]*pending{}
	for i := range waiting {
		left[waiting[i].id] = &waiting[i]
	}
	for len(left) > 0 {
		nodes, err := env.GNS3.ListNodes(ctx, env.ProjectID)
		if err == nil {
			seen := map[string]bool{}
			for i := range nodes {
				n := &nodes[i]
				seen[n.NodeID] = true
				p, ok2 := left[n.NodeID]
				if !ok2 {
					continue
				}
				p.last = statusText(n)
				if n.Status == gns3.NodeStarted {
					took := time.Since(start).Round(100 * time.Millisecond)
					env.progress(n.NodeID, n.Name, "started", fmt.Sprintf("started after %s", took))
					out = append(out, ok(n.NodeID, n.Name, fmt.Sprintf("%s started; console %s", n.Name, consoleText(n, env.gns3Host()))))
					delete(left, n.NodeID)
				}
			}
			for id, p := range left {
				if !seen[id] {
					out = append(out, failed(id, p.name, "the node disappeared from the project while starting"))
					delete(left, id)
				}
			}
		}
		if len(left) == 0 {
			break
		}
		now := time.Now()
		if now.Sub(lastReport) >= st.progressEvery {
			lastReport = now
			for _, p := range left {
				env.progress(p.id, p.name, "waiting", fmt.Sprintf("status %s after %s", p.last, now.Sub(start).Round(time.Second)))
			}
		}
		sleep := min(interval, time.Until(deadline))
		if sleep <= 0 {
			for _, p := range left {
				msg := fmt.Sprintf("GNS3 accepted the start but %s did not report started within %s (last status: %s)", p.name, wait, p.last)
				if err != nil {
					msg += "; last status read failed: " + describeGNS3Error(err)
				}
				env.progress(p.id, p.name, "failed", msg)
				out = append(out, failed(p.id, p.name, msg))
			}
			break
		}
		timer := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			timer.Stop()
			for _, p := range left {
				out = append(out, failed(p.id, p.name, "cancelled while waiting for the node to start (last status: "+p.last+")"))
			}
			return out
		case <-timer.C:
		}
		interval = min(interval*2, st.maxPoll)
	}
	return out
}

// ---- stop / suspend / reload ----

type powerTool struct {
	spec
	verb, done, want string
	call             func(c *gns3.Client) func(context.Context, string, string) error
}

func newPowerTool(name, verb, done, want, description string, idempotent bool, call func(c *gns3.Client) func(context.Context, string, string) error) Tool {
	return &powerTool{
		spec: spec{
			name:        name,
			description: description + " node_ids accepts node IDs or names.",
			schema: `{"type":"object","properties":{"node_ids":{"type":"array","minItems":1,"maxItems":30,"uniqueItems":true,` +
				`"items":{"type":"string"},"description":"Node IDs or names."}},"required":["node_ids"],"additionalProperties":false}`,
			modes:      labOnly,
			mutating:   true,
			idempotent: idempotent,
		},
		verb: verb, done: done, want: want, call: call,
	}
}

func newStopTool() Tool {
	return newPowerTool(domain.StopNodeTool, "stop", "stopped", gns3.NodeStopped,
		"Stop (power off) nodes. Unsaved device configuration is lost.", true,
		func(c *gns3.Client) func(context.Context, string, string) error { return c.StopNode })
}

func newSuspendTool() Tool {
	return newPowerTool("suspend_gns3_node", "suspend", "suspended", gns3.NodeSuspended,
		"Suspend (pause) started nodes, keeping their state, e.g. to pause a lab. Not every node type supports it (VPCS does not).", true,
		func(c *gns3.Client) func(context.Context, string, string) error { return c.SuspendNode })
}

func newReloadTool() Tool {
	return newPowerTool(domain.ReloadNodeTool, "reload", "reloaded", gns3.NodeStarted,
		"Reload (power-cycle) nodes. Unsaved device configuration is lost.", false,
		func(c *gns3.Client) func(context.Context, string, string) error { return c.ReloadNode })
}

// builtinRefusal says why a built-in node cannot be stopped, suspended or reloaded ("" for any
// other node).
func (pt *powerTool) builtinRefusal(n *gns3.Node) string {
	if !builtinNodeType(n.NodeType) {
		return ""
	}
	return fmt.Sprintf("%s is a built-in %s, which always runs and cannot be %s", n.Name, n.NodeType, pt.done)
}

// Preview names the nodes the call would power-cycle or stop, or why some cannot be.
func (pt *powerTool) Preview(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	verb := strings.ToUpper(pt.verb[:1]) + pt.verb[1:]
	nodes, _, err := resolveNodeList(ctx, env, raw)
	if err != nil {
		return verb + " nodes", err
	}
	names := make([]string, 0, len(nodes))
	var builtin []string
	for _, n := range nodes {
		if why := pt.builtinRefusal(n); why != "" {
			builtin = append(builtin, why)
		}
		names = append(names, fmt.Sprintf("%s (%s)", n.Name, statusText(n)))
	}
	if len(builtin) > 0 {
		return verb + " nodes", errors.New(strings.Join(builtin, "; "))
	}
	return fmt.Sprintf("%s %s; unsaved device configuration is lost", verb, clipNames(names, 10)), nil
}

func (pt *powerTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	refs, t, err := openNodeList(ctx, env, raw)
	if err != nil {
		return failWith(err)
	}
	results := make([]Item, len(refs))
	called := map[int]*gns3.Node{}
	for i, ref := range refs {
		n, err := t.findNode(ref)
		if err != nil {
			results[i] = failed(ref, ref, err.Error())
			continue
		}
		if why := pt.builtinRefusal(n); why != "" {
			results[i] = failed(n.NodeID, n.Name, why)
			continue
		}
		switch {
		case pt.verb == "stop" && n.Status == gns3.NodeStopped:
			results[i] = ok(n.NodeID, n.Name, n.Name+" was already stopped")
			continue
		case pt.verb == "suspend" && n.Status == gns3.NodeSuspended:
			results[i] = ok(n.NodeID, n.Name, n.Name+" was already suspended")
			continue
		case pt.verb == "suspend" && n.Status != gns3.NodeStarted:
			results[i] = failed(n.NodeID, n.Name, fmt.Sprintf("%s is %s; only a started node can be suspended", n.Name, statusText(n)))
			continue
		}
		env.progress(n.NodeID, n.Name, pt.verb+"ing", "")
		if err := pt.call(env.GNS3)(ctx, env.ProjectID, n.NodeID); err != nil {
			msg := pt.verb + " failed: " + describeGNS3Error(err)
			env.progress(n.NodeID, n.Name, "failed", msg)
			results[i] = failed(n.NodeID, n.Name, msg)
			continue
		}
		called[i] = n
	}
	if len(called) > 0 {
		// Power operations answer 204 without the node: read the outcome.
		after, err := env.GNS3.ListNodes(ctx, env.ProjectID)
		status := map[string]string{}
		for _, n := range after {
			status[n.NodeID] = n.Status
		}
		for i, n := range called {
			got, known := status[n.NodeID]
			switch {
			case err != nil || !known:
				results[i] = ok(n.NodeID, n.Name, fmt.Sprintf("GNS3 accepted the %s request for %s (status could not be read back)", pt.verb, n.Name))
			case got == pt.want:
				env.progress(n.NodeID, n.Name, pt.done, "")
				results[i] = ok(n.NodeID, n.Name, fmt.Sprintf("%s %s (status %s)", n.Name, pt.done, got))
			default:
				msg := fmt.Sprintf("GNS3 accepted the %s request but %s reports status %s", pt.verb, n.Name, got)
				if pt.verb == "suspend" {
					msg += fmt.Sprintf(" (%s nodes do not support suspend)", n.NodeType)
				}
				env.progress(n.NodeID, n.Name, "failed", msg)
				results[i] = failed(n.NodeID, n.Name, msg)
			}
		}
	}
	return Collect(results)
}
