package livetopo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// project is one project's subscription and the copy it keeps.
type project struct {
	id      string
	hub     *Hub
	client  *gns3.Client // the credential the subscription runs with
	ctx     context.Context
	cancel  context.CancelFunc
	resyncs chan chan error

	// lastUse and holds are guarded by hub.mu (see Hub.idle).
	lastUse time.Time
	holds   int

	mu        sync.Mutex
	seeded    bool
	connected bool
	ended     bool
	heard     time.Time
	proj      gns3.Project
	nodes     []gns3.Node
	links     []gns3.Link
	version   uint64
	resetAt   uint64 // version of the last full read: changes before it are gone
	history   []Change
	changed   chan struct{}
}

func newProject(h *Hub, id string, c *gns3.Client) *project {
	ctx, cancel := context.WithCancel(context.Background())
	return &project{id: id, hub: h, client: c, ctx: ctx, cancel: cancel, resyncs: make(chan chan error),
		lastUse: time.Now(), changed: make(chan struct{})}
}

// snapshot copies the current state; fresh means it may be presented as current.
func (p *project) snapshot(maxSilence time.Duration) (*Snapshot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seeded {
		return nil, false
	}
	s := &Snapshot{Project: p.proj, Nodes: cloneNodes(p.nodes), Links: cloneLinks(p.links), Version: p.version, Live: true}
	fresh := p.connected && !p.ended && time.Since(p.heard) <= maxSilence && p.proj.Status == gns3.ProjectOpened
	return s, fresh
}

func (p *project) changesSince(since uint64) ([]Change, uint64, <-chan struct{}, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended || !p.seeded || since < p.resetAt || since > p.version {
		return nil, p.version, p.changed, false
	}
	n := int(p.version - since)
	if n > len(p.history) {
		return nil, p.version, p.changed, false
	}
	out := append([]Change(nil), p.history[len(p.history)-n:]...)
	return out, p.version, p.changed, true
}

// closedCopy reports a seeded copy of a project that is not opened.
func (p *project) closedCopy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seeded && p.proj.Status != gns3.ProjectOpened
}

// requestResync asks for a re-read without waiting for it.
func (p *project) requestResync() {
	select {
	case p.resyncs <- nil:
	default:
	}
}

// resync asks the subscription for a re-read and waits for its outcome. A subscription between
// connections has nothing to refresh: its reconnection reads everything anyway.
func (p *project) resync(ctx context.Context) error {
	p.mu.Lock()
	connected := p.connected
	p.mu.Unlock()
	if !connected {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*p.client.Server().Timeout())
	defer cancel()
	done := make(chan error, 1)
	select {
	case p.resyncs <- done:
	case <-p.ctx.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-p.ctx.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errClosed is a project.closed notification: not a fault, but a gap all the same.
var errClosed = errors.New("the project was closed")

// errRestored is a snapshot.restored notification: GNS3 announced the restored nodes and links
// under their new IDs but never the removal of the old ones, so only a full read is right.
var errRestored = errors.New("a snapshot was restored")

// errIdle ends a subscription nobody used for a while.
var errIdle = errors.New("unused")

// refused reports a credential GNS3 no longer accepts for this project: the subscription ends
// rather than keep knocking with it.
func refused(err error) bool {
	return errors.Is(err, gns3.ErrUnauthorized) || errors.Is(err, gns3.ErrForbidden) || errors.Is(err, gns3.ErrNotFound)
}

// run keeps the subscription going: open the stream, read everything, apply notifications, and
// after any break reconnect and read everything again.
func (p *project) run() {
	log := p.hub.opts.Logger.With("project", p.id)
	defer p.finish()
	wait := 100 * time.Millisecond
	for {
		began := time.Now()
		err := p.session()
		p.setConnected(false)
		switch {
		case p.ctx.Err() != nil:
			return
		case errors.Is(err, errIdle):
			log.Debug("live topology stopped: unused")
			return
		case refused(err):
			log.Info("live topology stopped: GNS3 refused the subscription's credential", "error", err)
			return
		}
		log.Debug("live topology reconnecting", "error", err)
		if time.Since(began) > 10*time.Second {
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if p.hub.idle(p) {
			return
		}
		wait = min(wait*2, p.hub.opts.RetryMax)
	}
}

func (p *project) finish() {
	p.cancel()
	p.hub.ended(p)
	p.mu.Lock()
	p.ended, p.connected = true, false
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	// Anyone still waiting for a re-read learns it will not come.
	for {
		select {
		case done := <-p.resyncs:
			if done != nil {
				done <- errors.New("the live topology stopped")
			}
		default:
			return
		}
	}
}

type line struct {
	data []byte
	err  error
}

// session is one connection: the stream is opened before the full read, so every change made
// after the read started is also in the stream and is applied on top of it.
func (p *project) session() error {
	body, err := p.client.ProjectNotifications(p.ctx, p.id)
	if err != nil {
		return err
	}
	defer body.Close()
	lines := make(chan line, 256)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(body, lines, stop)

	if err := p.reread(); err != nil {
		return err
	}
	silence := p.hub.opts.MaxSilence
	tick := time.NewTicker(min(silence/2, p.hub.opts.IdleAfter/4))
	defer tick.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return p.ctx.Err()
		case done := <-p.resyncs:
			err := p.reread()
			if done != nil {
				done <- err
			}
			if err != nil {
				return err
			}
		case <-tick.C:
			if p.hub.idle(p) {
				return errIdle
			}
			if p.silentFor() > 2*silence {
				return fmt.Errorf("GNS3 sent nothing for %s", 2*silence)
			}
		case l := <-lines:
			if l.err != nil {
				return l.err
			}
			p.heardNow()
			if err := p.apply(l.data); err != nil {
				level := slog.LevelWarn
				if errors.Is(err, errClosed) || errors.Is(err, errRestored) {
					level = slog.LevelDebug
				}
				p.hub.opts.Logger.Log(p.ctx, level, "live topology: reading the project again after a notification", "project", p.id, "why", err)
				if err := p.reread(); err != nil {
					return err
				}
			}
		}
	}
}

// readLines feeds the stream's lines to the session until the stream ends or the session stops.
func readLines(r io.Reader, out chan<- line, stop <-chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	send := func(l line) bool {
		select {
		case out <- l:
			return true
		case <-stop:
			return false
		}
	}
	for sc.Scan() {
		if b := sc.Bytes(); len(b) > 0 && !send(line{data: append([]byte(nil), b...)}) {
			return
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	send(line{err: err})
}

// reread replaces the copy with a full read; readers of Changes must start again from a
// snapshot.
func (p *project) reread() error {
	ctx, cancel := context.WithTimeout(p.ctx, 2*p.client.Server().Timeout())
	defer cancel()
	snap, err := ReadDirect(ctx, p.client, p.id, nil)
	if err != nil {
		return err
	}
	p.hub.resyncs.Add(1)
	p.mu.Lock()
	p.proj, p.nodes, p.links = snap.Project, snap.Nodes, snap.Links
	p.version++
	p.resetAt = p.version
	p.history = p.history[:0]
	p.seeded = true
	// Every read runs on an open stream, so the copy is current from here; said under the same
	// lock as the wake-up, or a stream woken by it would find the copy not current yet and read
	// GNS3 directly.
	p.connected = true
	p.heard = time.Now()
	p.notifyLocked()
	p.mu.Unlock()
	return nil
}

func (p *project) setConnected(v bool) {
	p.mu.Lock()
	p.connected = v
	p.mu.Unlock()
}

func (p *project) heardNow() {
	p.mu.Lock()
	p.heard = time.Now()
	p.mu.Unlock()
}

func (p *project) silentFor() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(p.heard)
}

func (p *project) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// apply reads one notification line. An error means the copy may have missed something.
func (p *project) apply(data []byte) error {
	var n gns3.Notification
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if n.Action == "" {
		return errors.New("a notification without an action")
	}
	c := Change{Action: n.Action}
	switch n.Action {
	case gns3.ActionNodeCreated, gns3.ActionNodeUpdated, gns3.ActionNodeDeleted:
		var node gns3.Node
		if err := json.Unmarshal(n.Event, &node); err != nil || node.NodeID == "" {
			return fmt.Errorf("%s: unreadable node: %v", n.Action, err)
		}
		c.Node = &node
	case gns3.ActionLinkCreated, gns3.ActionLinkUpdated, gns3.ActionLinkDeleted:
		var link gns3.Link
		if err := json.Unmarshal(n.Event, &link); err != nil || link.LinkID == "" {
			return fmt.Errorf("%s: unreadable link: %v", n.Action, err)
		}
		c.Link = &link
	case gns3.ActionProjectClosed:
		// Everything may change while a project is closed and reopened: read it all again.
		return errClosed
	case gns3.ActionSnapshotRestored:
		return errRestored
	case gns3.ActionProjectUpdated:
		var proj gns3.Project
		if err := json.Unmarshal(n.Event, &proj); err != nil || proj.ProjectID == "" {
			return fmt.Errorf("%s: unreadable project: %v", n.Action, err)
		}
		if proj.ProjectID != p.id {
			return nil
		}
		c.Project = &proj
	default:
		// ping, compute, drawing, snapshot and log notifications say nothing about nodes or links.
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.applyLocked(c) {
		return nil
	}
	p.version++
	c.Version = p.version
	p.history = append(p.history, c)
	if over := len(p.history) - p.hub.opts.History; over > 0 {
		p.history = append(p.history[:0], p.history[over:]...)
	}
	p.notifyLocked()
	return nil
}

// applyLocked changes the copy; false when the change changes nothing (a node of another
// project, the delete of something unknown).
func (p *project) applyLocked(c Change) bool {
	switch {
	case c.Node != nil:
		if c.Node.ProjectID != "" && c.Node.ProjectID != p.id {
			return false
		}
		i := indexNode(p.nodes, c.Node.NodeID)
		switch {
		case c.Action == gns3.ActionNodeDeleted:
			if i < 0 {
				return false
			}
			p.nodes = append(p.nodes[:i:i], p.nodes[i+1:]...)
			// GNS3 announces the links of a deleted node itself; dropping them here too keeps the
			// copy whole if it does not.
			kept := p.links[:0:0]
			for _, l := range p.links {
				if !touches(l, c.Node.NodeID) {
					kept = append(kept, l)
				}
			}
			p.links = kept
		case i < 0:
			p.nodes = append(p.nodes[:len(p.nodes):len(p.nodes)], *c.Node)
		default:
			nodes := cloneNodes(p.nodes)
			nodes[i] = *c.Node
			p.nodes = nodes
		}
	case c.Link != nil:
		if c.Link.ProjectID != "" && c.Link.ProjectID != p.id {
			return false
		}
		i := indexLink(p.links, c.Link.LinkID)
		switch {
		case c.Action == gns3.ActionLinkDeleted:
			if i < 0 {
				return false
			}
			p.links = append(p.links[:i:i], p.links[i+1:]...)
		case i < 0:
			p.links = append(p.links[:len(p.links):len(p.links)], *c.Link)
		default:
			links := cloneLinks(p.links)
			links[i] = *c.Link
			p.links = links
		}
	case c.Project != nil:
		p.proj = *c.Project
	}
	return true
}

func touches(l gns3.Link, nodeID string) bool {
	for _, e := range l.Nodes {
		if e.NodeID == nodeID {
			return true
		}
	}
	return false
}

func indexNode(ns []gns3.Node, id string) int {
	for i := range ns {
		if ns[i].NodeID == id {
			return i
		}
	}
	return -1
}

func indexLink(ls []gns3.Link, id string) int {
	for i := range ls {
		if ls[i].LinkID == id {
			return i
		}
	}
	return -1
}

// cloneNodes copies the slice; the nodes' own slices and maps are never changed in place (a
// change replaces a whole node), so a shallow copy is a safe snapshot.
func cloneNodes(ns []gns3.Node) []gns3.Node { return append([]gns3.Node{}, ns...) }

func cloneLinks(ls []gns3.Link) []gns3.Link { return append([]gns3.Link{}, ls...) }

// ReadDirect reads the project, its nodes and its links from GNS3 in parallel. A project already
// read by the caller (proj) is not read again.
func ReadDirect(ctx context.Context, c *gns3.Client, projectID string, proj *gns3.Project) (*Snapshot, error) {
	var (
		wg    sync.WaitGroup
		errs  [3]error
		nodes []gns3.Node
		links []gns3.Link
	)
	if proj == nil {
		wg.Add(1)
		go func() { defer wg.Done(); proj, errs[0] = c.GetProject(ctx, projectID) }()
	}
	wg.Add(2)
	go func() { defer wg.Done(); nodes, errs[1] = c.ListNodes(ctx, projectID) }()
	go func() { defer wg.Done(); links, errs[2] = c.ListLinks(ctx, projectID) }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &Snapshot{Project: *proj, Nodes: nodes, Links: links}, nil
}
