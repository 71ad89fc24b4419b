// Package livetopo keeps the topology of every GNS3 project in use in memory, kept current by
// the project's notification stream, so the chat API's project check, the system prompt, the
// tools' name resolution and the page's topology picture need no GNS3 round trip per request.
//
// One design choice matters for several processes: each process (API or worker) keeps its own
// subscription per project instead of sharing one copy through Redis. GNS3 already fans its
// notifications out to every listener (its own GUI and web UI are listeners too), so a second
// listener costs GNS3 one more queue and us one idle HTTP connection. A copy shared through
// Redis would need a leader per project, a second freshness signal (is the leader alive and
// connected?) and a write per change, and would still cost a round trip to Redis per read.
// Per-process copies keep the freshness rule local and simple: a copy counts as current only
// while its own stream is connected and GNS3 was heard from within Options.MaxSilence (GNS3
// sends a ping every 5 s when nothing else happens). Anything else reads GNS3 directly.
//
// Access is still checked per user: Read asks GNS3 whether this user may read the project (an
// answer remembered for Options.AccessTTL, like the API's token check) before it answers from
// the shared copy. The subscription itself runs with the token of a user who passed that check,
// and ends when GNS3 refuses that token; the next reader starts a new one with their own.
//
// A GNS3 detail to know: a project with auto_close set is closed by GNS3 a few seconds after its
// last notification listener leaves. While the copilot listens, a project stays open as it does
// while the GNS3 GUI has it open; when the copilot stops listening (Options.IdleAfter after the
// last use) GNS3 may close it if nobody else listens.
package livetopo

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Options tunes a Hub; zero values take the defaults.
type Options struct {
	// MaxSilence is how long the stream may stay silent before the copy no longer counts as
	// current (default 8 s: GNS3 pings every 5 s). After twice as long the stream is reopened.
	MaxSilence time.Duration
	// IdleAfter stops a project's subscription this long after its last use (default 2 min).
	IdleAfter time.Duration
	// AccessTTL is how long a user's successful project check is trusted (default 30 s).
	AccessTTL time.Duration
	// History is how many changes are kept for Changes (default 1024).
	History int
	// RetryMax caps the wait between reconnection attempts (default 5 s).
	RetryMax time.Duration
	Logger   *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxSilence <= 0 {
		o.MaxSilence = 8 * time.Second
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = 2 * time.Minute
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = 30 * time.Second
	}
	if o.History <= 0 {
		o.History = 1024
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Snapshot is one consistent view of a project. Its slices are the caller's own copy.
type Snapshot struct {
	Project gns3.Project `json:"project"`
	Nodes   []gns3.Node  `json:"nodes"`
	Links   []gns3.Link  `json:"links"`
	// Version counts the changes the subscription applied; 0 for a direct read.
	Version uint64 `json:"version"`
	// Live tells a copy kept by the subscription from a direct read.
	Live bool `json:"live"`
}

// Change is one applied notification. Exactly one of Node, Link and Project is set.
type Change struct {
	Version uint64        `json:"version"`
	Action  string        `json:"action"`
	Node    *gns3.Node    `json:"node,omitempty"`
	Link    *gns3.Link    `json:"link,omitempty"`
	Project *gns3.Project `json:"project,omitempty"`
}

// Hub holds the live topologies of one process.
type Hub struct {
	server *gns3.Server
	opts   Options
	// access holds the tokenKey|projectID pairs whose check is still trusted; like the API's
	// cache of checked tokens it is bounded, the least recently used going first. It has its
	// own lock.
	access *expirable.LRU[string, struct{}]

	mu       sync.Mutex
	projects map[string]*project
	closed   bool
	wg       sync.WaitGroup

	// resyncs counts full re-reads, for the metrics.
	resyncs atomic.Uint64
}

// New returns a Hub reading from server.
func New(server *gns3.Server, opts Options) *Hub {
	opts.defaults()
	return &Hub{server: server, opts: opts, projects: map[string]*project{},
		access: expirable.NewLRU[string, struct{}](maxCachedAccess, nil, opts.AccessTTL)}
}

// Close stops every subscription and waits for them.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	for _, p := range h.projects {
		p.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// use returns the project's subscription (nil when there is none) and marks it used now, so it
// is not dropped as idle.
func (h *Hub) use(projectID string) *project {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.projects[projectID]
	if p != nil {
		p.lastUse = time.Now()
	}
	return p
}

// ErrStopped is returned by Read after Close.
var ErrStopped = errors.New("livetopo: the hub is closed")

// Topology returns the project's live copy and whether it is current. It never asks GNS3 and
// checks nobody's access: callers that serve a user go through Read. A nil snapshot means the
// project has no subscription (yet).
func (h *Hub) Topology(ctx context.Context, projectID string) (*Snapshot, bool) {
	p := h.use(projectID)
	if p == nil {
		return nil, false
	}
	return p.snapshot(h.opts.MaxSilence)
}

// Read returns the project as the user behind c may see it now: the live copy when it is
// current, else a direct read from GNS3. It checks the user's access first (GNS3 answers 403 or
// 404 as gns3 errors) and starts the project's subscription with c's credential when there is
// none.
func (h *Hub) Read(ctx context.Context, c *gns3.Client, projectID string) (*Snapshot, error) {
	proj, err := h.CheckAccess(ctx, c, projectID)
	if err != nil {
		return nil, err
	}
	if proj != nil && proj.Status != gns3.ProjectOpened {
		// Nothing changes in a closed project: no subscription for it.
		return ReadDirect(ctx, c, projectID, proj)
	}
	p, err := h.watch(projectID, c)
	if err != nil {
		return nil, err
	}
	if snap, fresh := p.snapshot(h.opts.MaxSilence); fresh {
		return snap, nil
	}
	snap, err := ReadDirect(ctx, c, projectID, proj)
	if err != nil {
		return nil, err
	}
	if snap.Project.Status == gns3.ProjectOpened && p.closedCopy() {
		// A closed copy is never current; GNS3 may not announce a reopening, so tell the
		// subscription to read again.
		p.requestResync()
	}
	return snap, nil
}

// CheckAccess asks GNS3 whether the user behind c may read the project, remembering a yes for
// AccessTTL. It returns the project when it asked (nil when the remembered answer was used).
func (h *Hub) CheckAccess(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error) {
	key := accessKey(c, projectID)
	if _, ok := h.access.Get(key); ok {
		return nil, nil
	}
	proj, err := c.GetProject(ctx, projectID)
	if err != nil {
		if errors.Is(err, gns3.ErrUnauthorized) || errors.Is(err, gns3.ErrForbidden) || errors.Is(err, gns3.ErrNotFound) {
			h.access.Remove(key)
		}
		return nil, err
	}
	h.access.Add(key, struct{}{})
	return proj, nil
}

// maxCachedAccess bounds the remembered access checks, as many as the API's checked tokens.
const maxCachedAccess = 10000

func accessKey(c *gns3.Client, projectID string) string {
	return c.TokenDigest() + "|" + projectID
}

// Refresh re-reads the project on its subscription and waits for it, so the copy includes
// changes the caller just made (their notifications may still be on the way). Without a
// subscription there is nothing to refresh.
func (h *Hub) Refresh(ctx context.Context, projectID string) error {
	h.mu.Lock()
	p := h.projects[projectID]
	h.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.resync(ctx)
}

// Hold keeps the project's subscription running until release is called (an open topology
// stream on the page): idleness is counted only after the last holder leaves.
func (h *Hub) Hold(projectID string) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.projects[projectID]
	if p == nil {
		return func() {}
	}
	p.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			p.holds--
			p.lastUse = time.Now()
			h.mu.Unlock()
		})
	}
}

// Changes returns the changes applied after version since, the current version, and a channel
// closed at the next change. ok is false when the changes since that version are no longer all
// known (a re-read happened, or more than History changes passed, or there is no subscription):
// then the caller takes a new snapshot with Read.
func (h *Hub) Changes(projectID string, since uint64) (changes []Change, version uint64, next <-chan struct{}, ok bool) {
	p := h.use(projectID)
	if p == nil {
		return nil, 0, nil, false
	}
	return p.changesSince(since)
}

// watch returns the project's subscription, starting it with c's credential when there is none.
func (h *Hub) watch(projectID string, c *gns3.Client) (*project, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrStopped
	}
	p := h.projects[projectID]
	if p == nil {
		p = newProject(h, projectID, c)
		h.projects[projectID] = p
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			p.run()
		}()
	}
	p.lastUse = time.Now()
	return p, nil
}

// ended removes a subscription that stopped, unless a newer one already replaced it.
func (h *Hub) ended(p *project) {
	h.mu.Lock()
	if h.projects[p.id] == p {
		delete(h.projects, p.id)
	}
	h.mu.Unlock()
}

// idle reports whether the project went unused long enough to stop; it removes it if so, under
// the same lock that marks a use, so a reader never gets a subscription that is being stopped
// without also seeing it end.
func (h *Hub) idle(p *project) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.holds > 0 || time.Since(p.lastUse) < h.opts.IdleAfter {
		return false
	}
	if h.projects[p.id] == p {
		delete(h.projects, p.id)
	}
	return true
}

// Subscribed reports whether the project has a running subscription (for tests and metrics).
func (h *Hub) Subscribed(projectID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.projects[projectID]
	return ok
}

// Stats is the hub's state at one moment, for the metrics.
type Stats struct {
	// Projects followed, and how many have their notification stream connected.
	Projects, Connected int
	// Resyncs counts full re-reads of a project since the hub started.
	Resyncs uint64
	// LongestSilence is the longest time since a followed project's stream was last heard
	// from (0 when none is followed).
	LongestSilence time.Duration
}

// Stats reports how many projects are followed and how well their streams are doing.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	ps := make([]*project, 0, len(h.projects))
	for _, p := range h.projects {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	st := Stats{Projects: len(ps), Resyncs: h.resyncs.Load()}
	now := time.Now()
	for _, p := range ps {
		p.mu.Lock()
		if p.connected {
			st.Connected++
		}
		if !p.heard.IsZero() {
			st.LongestSilence = max(st.LongestSilence, now.Sub(p.heard))
		}
		p.mu.Unlock()
	}
	return st
}

// Project returns the project for a check of the user behind c: from the live copy while it is
// current, else from GNS3. Like Read, it checks the user's access and starts the subscription.
func (h *Hub) Project(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error) {
	proj, err := h.CheckAccess(ctx, c, projectID)
	if err != nil {
		return nil, err
	}
	if proj != nil && proj.Status != gns3.ProjectOpened {
		return proj, nil
	}
	p, err := h.watch(projectID, c)
	if err != nil {
		return nil, err
	}
	if snap, fresh := p.snapshot(h.opts.MaxSilence); fresh {
		return &snap.Project, nil
	}
	if proj == nil {
		if proj, err = c.GetProject(ctx, projectID); err != nil {
			return nil, err
		}
	}
	if proj.Status == gns3.ProjectOpened && p.closedCopy() {
		p.requestResync()
	}
	return proj, nil
}
