package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// How a link's conditions are changed so that the change really reaches uBridge, on every GNS3
// version the copilot supports, without killing the link.
//
// GNS3 3.0.x (every tag from v3.0.0 to v3.0.6) has its compute replace a link's filters only
// with a non-empty set: api/routes/compute/vpcs_nodes.py (and the other node types) reads
// "if nio_data.filters: nio.filters = nio_data.filters", so a PUT of {"filters": {}} is recorded
// and read back as {} while uBridge is handed the old filters again. A suspended link resumed
// with no filters likewise keeps the "drop everything" GNS3 suspends with. 3.1.0a1 fixed it
// (gns3-server commit 5e3ca29c, "Fix updating packet filters", which clears nio.filters first).
// A filter that matches nothing, set alone, replaces whatever uBridge had on every version;
// {} after it leaves only that harmless filter on 3.0.x and nothing on 3.1.
//
// uBridge 0.9.19 frees a bridge's filters ("bridge reset_packet_filters") while a packet may be
// sleeping in the delay filter's handler, and that packet's thread then follows the freed
// filter's next pointer. When the next command parsed has seven words ("bridge
// add_packet_filter NAME filter0 delay 200 0", a delay with its jitter, which is what a 3.0.x
// compute re-adds on {}), its 56-byte argument array lands on the freed filter with a word where
// "next" was, and uBridge dies (general protection fault in bridge_nios; 9 of 9 tries on the real
// GNS3 v3.0.6 with pings crossing the delay). A change to the no-match filter alone is a six-word
// command whose zeroed array leaves "next" empty: 0 crashes in 40 tries, delays with loss and
// corruption included. So every change goes through it first, and what was delayed is given
// the old delay to leave before the new filters go on.

// noMatchBPF matches no frame a lab sends: EtherType 0x88B5 is IEEE 802's "local experimental"
// type.
const noMatchBPF = "ether proto 0x88b5"

// noMatchFilters is the filter set the change passes through.
func noMatchFilters() gns3.LinkFilters { return gns3.LinkFilters{gns3.FilterBPF: {noMatchBPF}} }

// delayMargin is what the wait for delayed packets adds to the longest delay they may have had.
const delayMargin = 100 * time.Millisecond

// brokenBridge is a link whose uBridge bridge is gone: GNS3 answers 409 "bridge … doesn't
// exist" to every change while it goes on showing the link.
type brokenBridge struct {
	node    string // the node whose uBridge ran the link
	message string // GNS3's answer
}

func (b *brokenBridge) Error() string {
	return fmt.Sprintf("the link is broken: its bridge in %s's uBridge is gone (uBridge crashes when a link's filters change "+
		"while delayed packets are in flight), so no packet crosses it although GNS3 still shows it. GNS3 answered: %s. "+
		"To repair it, save %s's configuration (write memory on a router, save on a VPCS: a restart loses what is not saved), "+
		"reload %s (stop and start it) so that its uBridge starts again with the link, then clear the link's conditions "+
		"again: on GNS3 3.0.x the reload puts the old conditions back", b.node, b.message, b.node, b.node)
}

// asBrokenBridge recognises GNS3's answer for a dead bridge.
func asBrokenBridge(err error, node string) error {
	var api *gns3.APIError
	if errors.As(err, &api) && api.Status == http.StatusConflict && strings.Contains(api.Message, "bridge") &&
		strings.Contains(api.Message, "doesn't exist") {
		return &brokenBridge{node: node, message: firstLine(api.Message)}
	}
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// linkWriter changes one link's conditions (see above). filterNode names the node whose
// uBridge applies them, for the report of a broken link.
type linkWriter struct {
	env        Env
	link       *gns3.Link // as GNS3 had it before the change
	filterNode string
	// canFilter is false on a link GNS3 runs no filter on (two switches): only its suspension
	// changes, as it is.
	canFilter bool
}

// linkChange is one link's change on its way: the filters and, when set, the suspension it
// gives the link; then the link as GNS3 reads it, or why it failed (a dead bridge is a
// *brokenBridge).
type linkChange struct {
	w       *linkWriter
	filters gns3.LinkFilters
	suspend *bool
	got     *gns3.Link
	err     error
	done    bool
}

// writeLinks makes every change: each link through the no-match filter, one wait for what the
// old delays still hold, then each link to its new filters.
func writeLinks(ctx context.Context, changes []*linkChange) {
	var wait time.Duration
	for _, c := range changes {
		c.first(ctx)
		if c.err == nil && !c.done {
			wait = max(wait, inFlight(c.w.link))
		}
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			for _, c := range changes {
				if c.err == nil && !c.done {
					c.err = ctx.Err()
				}
			}
			return
		case <-t.C:
		}
	}
	for _, c := range changes {
		if c.err == nil && !c.done {
			c.last(ctx)
		}
	}
}

func (c *linkChange) first(ctx context.Context) {
	w := c.w
	if !w.canFilter {
		c.got, c.err = w.put(ctx, gns3.LinkUpdate{Filters: &c.filters, Suspend: c.suspend})
		c.done = true
		return
	}
	through := noMatchFilters()
	upd := gns3.LinkUpdate{Filters: &through}
	if w.link.Suspend && c.suspend != nil && !*c.suspend {
		// Resumed together with the no-match filter: resumed alone, a 3.0.x link would keep
		// dropping everything.
		upd.Suspend = c.suspend
	}
	c.got, c.err = w.put(ctx, upd)
}

func (c *linkChange) last(ctx context.Context) {
	upd := gns3.LinkUpdate{Filters: &c.filters}
	if c.suspend != nil && *c.suspend != c.got.Suspend {
		upd.Suspend = c.suspend
	}
	c.got, c.err = c.w.put(ctx, upd)
	c.done = true
}

func (w *linkWriter) put(ctx context.Context, upd gns3.LinkUpdate) (*gns3.Link, error) {
	got, err := w.env.GNS3.UpdateLink(ctx, w.env.ProjectID, w.link.LinkID, upd)
	if err != nil {
		return nil, asBrokenBridge(err, w.filterNode)
	}
	return got, nil
}

// probeBridge tells whether a link's bridge is alive without changing what the link does: the
// link (as GNS3 reads it now) passes through the no-match filter, a command uBridge must
// answer, and back to the filters GNS3 shows. Only a *brokenBridge or another GNS3 failure is
// an error.
func (w *linkWriter) probeBridge(ctx context.Context, now *gns3.Link) error {
	if !w.canFilter {
		return nil
	}
	again := *w
	again.link = now
	c := &linkChange{w: &again, filters: cloneLinkFilters(now.Filters)}
	writeLinks(ctx, []*linkChange{c})
	return c.err
}

// inFlight is how long a packet the link's current delay holds may still take: its delay and
// jitter, and a margin; 0 when nothing is delayed (a suspended link passes nothing).
func inFlight(l *gns3.Link) time.Duration {
	d := delayOf(l)
	if d == 0 {
		return 0
	}
	if vals := l.Filters[gns3.FilterDelay]; len(vals) > 1 {
		d += time.Duration(max(numberOf(vals[1]), 0)) * time.Millisecond
	}
	return d + delayMargin
}

// filterNodeTypes are the node types GNS3 runs a link's filters on (Link._get_filter_node).
var filterNodeTypes = map[string]bool{"vpcs": true, "vmware": true, "dynamips": true, "qemu": true, "iou": true,
	"cloud": true, "nat": true, "virtualbox": true, "docker": true}

// filterNodeOf names the node whose uBridge runs the link's filters: its first end that can.
func filterNodeOf(t *topology, l *gns3.Link) string {
	for _, e := range l.Nodes {
		if n := t.byID[e.NodeID]; n != nil && filterNodeTypes[n.NodeType] {
			return n.Name
		}
	}
	if len(l.Nodes) > 0 {
		return t.nodeName(l.Nodes[0].NodeID)
	}
	return "its node"
}

// newLinkWriter prepares the change of one link of a topology; offered is what GNS3 offers on it.
func newLinkWriter(env Env, t *topology, current *gns3.Link, offered []gns3.AvailableFilter) *linkWriter {
	w := &linkWriter{env: env, link: current, filterNode: filterNodeOf(t, current)}
	for _, f := range offered {
		if f.Type == gns3.FilterBPF {
			w.canFilter = true
		}
	}
	return w
}

// LinkFaultsClearable reports whether a GNS3 version's {} really removes a link's filters: from
// 3.1.0a1 on. GNS3's own link dialog sends {}, so only then can a student take a fault off a
// link there; on 3.0.x a troubleshooting exercise puts no fault on a link. An unknown version is
// taken for one that cannot.
func LinkFaultsClearable(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 3 || (major == 3 && minor >= 1)
}

// LinkFaultRefusal is why an injection turn on GNS3 3.0.x puts no fault on a link.
func LinkFaultRefusal(version string) string {
	if version == "" {
		version = "of unknown version"
	}
	return fmt.Sprintf("no link faults on this GNS3 (%s): on GNS3 3.0.x a student cannot take conditions off a link from GNS3's own "+
		"link dialog (it sends an empty filter set, which 3.0.x records but does not apply, and changing a delay while pings cross "+
		"the link can kill the link's uBridge), so the exercise could not be solved. Inject a fault on a device instead", version)
}

// GNS3Version is the version of a GNS3 server (nil: none); "" when it cannot be read.
func GNS3Version(ctx context.Context, s *gns3.Server) string {
	if s == nil {
		return ""
	}
	v, err := s.Version(ctx)
	if err != nil {
		return ""
	}
	return v.Version
}
