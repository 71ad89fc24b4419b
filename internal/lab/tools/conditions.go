package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Names of the link condition tools.
const (
	SetLinkConditionsTool   = "set_gns3_link_conditions"
	ClearLinkConditionsTool = "clear_gns3_link_conditions"
)

const maxBPFLength = 2000

// linkSelector is how a link is named in a list of links: by link_id, by one of its ends, or by
// the two nodes it joins (see topology.resolveLink).
const linkSelector = `"link_id":{"type":"string","description":"Link ID."},` +
	`"node_a":{"type":"string","description":"A node of the link: node ID or name."},` +
	`"port_a":{"type":"string","description":"The link's port on node_a: name or short name."},` +
	`"node_b":{"type":"string","description":"The other node of the link: node ID or name."},` +
	`"port_b":{"type":"string","description":"The link's port on node_b."}`

// checkLinkRefs refuses a list of link references that cannot name one link each.
func checkLinkRefs(refs []linkRef) error {
	if len(refs) == 0 || len(refs) > maxLinksPerCall {
		return fmt.Errorf("links must list 1 to %d links", maxLinksPerCall)
	}
	for i, r := range refs {
		if r.LinkID == "" && (r.NodeA == "" || (r.PortA == "" && r.NodeB == "")) {
			return fmt.Errorf("links[%d] must give link_id, or node_a with port_a, or node_a with node_b", i)
		}
		if r.LinkID != "" && (r.NodeA != "" || r.NodeB != "") {
			return fmt.Errorf("links[%d] must give either link_id or nodes, not both", i)
		}
		if r.PortB != "" && r.NodeB == "" {
			return fmt.Errorf("links[%d].port_b needs node_b", i)
		}
	}
	return nil
}

// conditionField is one argument of set_gns3_link_conditions: which GNS3 filter it sets, and
// which of the filter's values.
type conditionField struct {
	arg    string
	filter string
	index  int
}

var numericConditions = []conditionField{
	{"delay_ms", gns3.FilterDelay, 0},
	{"jitter_ms", gns3.FilterDelay, 1},
	{"loss_percent", gns3.FilterPacketLoss, 0},
	{"corrupt_percent", gns3.FilterCorrupt, 0},
	{"drop_every_nth", gns3.FilterFrequencyDrop, 0},
}

// linkConditions is one entry of set_gns3_link_conditions.
type linkConditions struct {
	linkRef
	DelayMS        *float64 `json:"delay_ms"`
	JitterMS       *float64 `json:"jitter_ms"`
	LossPercent    *float64 `json:"loss_percent"`
	CorruptPercent *float64 `json:"corrupt_percent"`
	DropEveryNth   *float64 `json:"drop_every_nth"`
	BPF            *string  `json:"bpf"`
	Suspend        *bool    `json:"suspend"`
}

func (c linkConditions) numbers() map[string]*float64 {
	return map[string]*float64{"delay_ms": c.DelayMS, "jitter_ms": c.JitterMS, "loss_percent": c.LossPercent,
		"corrupt_percent": c.CorruptPercent, "drop_every_nth": c.DropEveryNth}
}

func (c linkConditions) empty() bool {
	for _, v := range c.numbers() {
		if v != nil {
			return false
		}
	}
	return c.BPF == nil && c.Suspend == nil
}

// ---- set_gns3_link_conditions ----

type setConditionsTool struct{ spec }

func newSetConditionsTool() Tool {
	return &setConditionsTool{spec{
		name: SetLinkConditionsTool,
		description: "Make links slow, lossy or broken with GNS3's link filters. They act in both directions: a 200 ms delay " +
			"adds about 400 ms to a ping's round trip, 50 % loss loses about 75 % of pings, and ARP is filtered too, so loss, " +
			"drops and BPF can stop addresses from resolving. A field left out keeps its value; 0 (or an empty bpf) removes that " +
			"condition. Name each link by link_id, or by node_a and node_b (with port_a/port_b when several links join them).",
		schema: `{"type":"object","properties":{"links":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{` +
			linkSelector + `,` +
			`"delay_ms":{"type":"integer","minimum":0,"description":"Delay in ms (0 removes it)."},` +
			`"jitter_ms":{"type":"integer","minimum":0,"description":"Jitter (+/-) in ms around the delay."},` +
			`"loss_percent":{"type":"integer","minimum":0,"maximum":100,"description":"Chance in % that a packet is lost."},` +
			`"corrupt_percent":{"type":"integer","minimum":0,"maximum":100,"description":"Chance in % that a packet is corrupted."},` +
			`"drop_every_nth":{"type":"integer","minimum":-1,"description":"Drop every Nth packet; -1 drops all, 0 removes it."},` +
			`"bpf":{"type":"string","description":"BPF expressions, one per line; matching packets are dropped; empty removes it."},` +
			`"suspend":{"type":"boolean","description":"true: nothing passes the link; false: traffic passes again."}` +
			`},"additionalProperties":false}}},"required":["links"],"additionalProperties":false}`,
		modes:      changingModes,
		mutating:   true,
		idempotent: true,
	}}
}

// plannedConditions is one link's validated change: the filters it will have and its suspension.
type plannedConditions struct {
	link    *gns3.Link
	name    string
	filters gns3.LinkFilters
	suspend *bool
	writer  *linkWriter
}

func (st *setConditionsTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args struct {
		projectArg
		Links []linkConditions `json:"links"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	version := GNS3Version(ctx, env.server())
	if env.Mode == TroubleshootingInjection && !LinkFaultsClearable(version) {
		return Failure("%s", LinkFaultRefusal(version))
	}
	refs := make([]linkRef, len(args.Links))
	for i, l := range args.Links {
		refs[i] = l.linkRef
		if l.empty() {
			return Failure("links[%d] sets no condition; give delay_ms, jitter_ms, loss_percent, corrupt_percent, drop_every_nth, bpf or suspend", i)
		}
	}
	if err := checkLinkRefs(refs); err != nil {
		return failWith(err)
	}
	t, err := openTopology(ctx, env)
	if err != nil {
		return failWith(err)
	}
	// Every link is checked before any is changed: one refusal changes nothing.
	plans := make([]plannedConditions, len(args.Links))
	items := make([]Item, len(args.Links))
	refused := false
	for i, c := range args.Links {
		p, err := planConditions(ctx, env, t, c)
		if err != nil {
			items[i], refused = failed(p.id(c.LinkID), p.label(c.linkRef), err.Error()), true
			continue
		}
		plans[i] = p
	}
	if refused {
		for i := range items {
			if items[i].Status == "" {
				items[i] = failed(plans[i].link.LinkID, plans[i].name, "not changed: another link of this call was refused, and a refused call changes nothing")
			}
		}
		return Collect(items)
	}
	changes := make([]*linkChange, len(plans))
	for i, p := range plans {
		changes[i] = p.change()
	}
	writeLinks(ctx, changes)
	note := ""
	if !LinkFaultsClearable(version) {
		note = "On this GNS3 (3.0.x), removing them in GNS3's own link dialog leaves them applied: remove them with " + ClearLinkConditionsTool + "."
	}
	for i, p := range plans {
		items[i] = reportConditions(env, p, changes[i], note)
	}
	return Collect(items)
}

// change is the planned change, to be made by writeLinks.
func (p plannedConditions) change() *linkChange {
	return &linkChange{w: p.writer, filters: p.filters, suspend: p.suspend}
}

func (p plannedConditions) id(fallback string) string {
	if p.link != nil {
		return p.link.LinkID
	}
	return fallback
}

func (p plannedConditions) label(r linkRef) string {
	if p.name != "" {
		return p.name
	}
	return r.label()
}

// readLinkToChange resolves a link and reads what a change of it starts from: GNS3's own copy of
// the link and the filters GNS3 offers on it. On an error, p names the link as far as it was
// found (see id and label).
func readLinkToChange(ctx context.Context, env Env, t *topology, ref linkRef) (p plannedConditions, offered []gns3.AvailableFilter, err error) {
	l, err := t.resolveLink(ref)
	if err != nil {
		return p, nil, err
	}
	p.link, p.name = l, t.linkLine(l)
	// The change starts from GNS3's own copy of the link: conditions left out stay as they are.
	current, err := env.GNS3.GetLink(ctx, env.ProjectID, l.LinkID)
	if err != nil {
		return p, nil, fmt.Errorf("could not read the link: %s", describeGNS3Error(err))
	}
	p.link = current
	offered, err = env.GNS3.AvailableFilters(ctx, env.ProjectID, l.LinkID)
	if err != nil {
		return p, nil, fmt.Errorf("could not read the conditions GNS3 offers on this link: %s", describeGNS3Error(err))
	}
	p.writer = newLinkWriter(env, t, current, offered)
	return p, offered, nil
}

// planConditions resolves one entry's link and checks its values against what GNS3 offers on it,
// starting from the link's current filters.
func planConditions(ctx context.Context, env Env, t *topology, c linkConditions) (plannedConditions, error) {
	p, offered, err := readLinkToChange(ctx, env, t, c.linkRef)
	if err != nil {
		return p, err
	}
	p.suspend = c.Suspend
	byType := map[string]gns3.AvailableFilter{}
	for _, f := range offered {
		byType[f.Type] = f
	}
	p.filters = cloneLinkFilters(p.link.Filters)
	numbers := c.numbers()
	for _, f := range numericConditions {
		v := numbers[f.arg]
		if v == nil {
			continue
		}
		n, err := conditionValue(f, *v, byType, t, p.link)
		if err != nil {
			return p, err
		}
		if err := setFilterValue(p.filters, f, n); err != nil {
			return p, err
		}
	}
	if c.BPF != nil {
		if err := setBPF(p.filters, *c.BPF, byType, t, p.link); err != nil {
			return p, err
		}
	}
	return p, nil
}

// conditionValue checks one number against the range of the filter parameter it sets.
func conditionValue(f conditionField, v float64, offered map[string]gns3.AvailableFilter, t *topology, l *gns3.Link) (int, error) {
	if v != math.Trunc(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s must be a whole number, got %v", f.arg, v)
	}
	n := int(v)
	af, ok := offered[f.filter]
	if !ok {
		if n == 0 {
			return 0, nil // removing what the link cannot have anyway
		}
		return 0, notOffered(f.arg, f.filter, offered, t, l)
	}
	if f.index >= len(af.Parameters) {
		return 0, fmt.Errorf("GNS3 offers %s on this link without the value %s sets", af.Name, f.arg)
	}
	par := af.Parameters[f.index]
	if (par.Minimum != nil && n < *par.Minimum) || (par.Maximum != nil && n > *par.Maximum) {
		return 0, fmt.Errorf("%s must be from %s to %s%s (GNS3's range for %s: %s), got %d", f.arg, bound(par.Minimum, "-∞"), bound(par.Maximum, "∞"),
			unitText(par.Unit), af.Name, par.Name, n)
	}
	return n, nil
}

func bound(v *int, none string) string {
	if v == nil {
		return none
	}
	return fmt.Sprint(*v)
}

func unitText(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

// notOffered explains that GNS3 offers no such filter on the link, naming what it offers.
func notOffered(arg, filter string, offered map[string]gns3.AvailableFilter, t *topology, l *gns3.Link) error {
	if len(offered) == 0 {
		var ends []string
		for _, e := range l.Nodes {
			if n := t.byID[e.NodeID]; n != nil {
				ends = append(ends, n.Name+" ("+n.NodeType+")")
			}
		}
		return fmt.Errorf("GNS3 offers no conditions on this link: neither of its nodes (%s) can run link filters", strings.Join(ends, ", "))
	}
	var names []string
	for _, f := range offered {
		names = append(names, f.Type)
	}
	sort.Strings(names)
	return fmt.Errorf("%s needs GNS3's %s filter, which this link does not offer (it offers: %s)", arg, filter, strings.Join(names, ", "))
}

// setFilterValue puts one value into a filter. GNS3 drops a filter whose first value is 0, so a
// later value (the jitter) needs a first one (the delay) to vary.
func setFilterValue(fs gns3.LinkFilters, f conditionField, n int) error {
	vals, exists := fs[f.filter]
	switch {
	case f.index == 0 && n == 0:
		delete(fs, f.filter)
		return nil
	case f.index > 0 && !exists && n == 0:
		return nil
	case f.index > 0 && !exists:
		return fmt.Errorf("%s varies a %s, and this link has none: set its first value too (delay_ms for jitter_ms)", f.arg, f.filter)
	}
	vals = append([]any(nil), vals...)
	for len(vals) <= f.index {
		vals = append(vals, 0)
	}
	vals[f.index] = n
	fs[f.filter] = vals
	return nil
}

func setBPF(fs gns3.LinkFilters, expr string, offered map[string]gns3.AvailableFilter, t *topology, l *gns3.Link) error {
	var lines []string
	for _, line := range strings.Split(strings.ReplaceAll(expr, "\r\n", "\n"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		delete(fs, gns3.FilterBPF)
		return nil
	}
	if _, ok := offered[gns3.FilterBPF]; !ok {
		return notOffered("bpf", gns3.FilterBPF, offered, t, l)
	}
	joined := strings.Join(lines, "\n")
	if len(joined) > maxBPFLength {
		return fmt.Errorf("bpf must be at most %d characters", maxBPFLength)
	}
	if strings.ContainsRune(joined, 0) {
		return errors.New("bpf must not contain NUL characters")
	}
	fs[gns3.FilterBPF] = []any{joined}
	return nil
}

func cloneLinkFilters(f gns3.LinkFilters) gns3.LinkFilters {
	out := gns3.LinkFilters{}
	for k, v := range f {
		out[k] = append([]any(nil), v...)
	}
	return out
}

// reportConditions says what one link's change did: the conditions GNS3 now has on it, or why
// it failed (a broken link with what repairs it).
func reportConditions(env Env, p plannedConditions, c *linkChange, note string) Item {
	id := p.link.LinkID
	if c.err != nil {
		var broken *brokenBridge
		if errors.As(c.err, &broken) {
			env.progress(id, p.name, "failed", "broken")
			return failed(id, p.name, c.err.Error())
		}
		return failed(id, p.name, "GNS3 refused the change: "+describeGNS3Error(c.err))
	}
	before, now := ConditionText(p.link), ConditionText(c.got)
	env.progress(id, p.name, "updated", now)
	if now == "" {
		now = "none"
	}
	if before == "" {
		before = "none"
	}
	res := fmt.Sprintf("%s: conditions now %s (before: %s)", p.name, now, before)
	if now != "none" && note != "" {
		res += ". " + note
	}
	return ok(id, p.name, res)
}

// ---- clear_gns3_link_conditions ----

type clearConditionsTool struct{ spec }

func newClearConditionsTool() Tool {
	return &clearConditionsTool{spec{
		name: ClearLinkConditionsTool,
		description: "Remove every condition from links and let a suspended link pass traffic again, then ping across each " +
			"link: it is cleared only when traffic crosses it at its normal latency, and a broken link is reported with what " +
			"repairs it. Name each link by link_id, or by node_a and node_b.",
		schema: `{"type":"object","properties":{"links":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{` +
			linkSelector + `},"additionalProperties":false}}},"required":["links"],"additionalProperties":false}`,
		modes:      changingModes,
		mutating:   true,
		idempotent: true,
	}}
}

func (ct *clearConditionsTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	refs, t, err := openLinkList(ctx, env, raw)
	if err != nil {
		return failWith(err)
	}
	unsuspend := false
	items := make([]Item, len(refs))
	var plans []plannedConditions
	var changes []*linkChange
	var at []int
	for i, ref := range refs {
		p, _, err := readLinkToChange(ctx, env, t, ref)
		if err != nil {
			items[i] = failed(p.id(ref.LinkID), p.label(ref), err.Error())
			continue
		}
		p.filters, p.suspend = gns3.LinkFilters{}, &unsuspend
		plans, at = append(plans, p), append(at, i)
		changes = append(changes, p.change())
	}
	writeLinks(ctx, changes)
	for k, p := range plans {
		items[at[k]] = verifyCleared(ctx, env, t, p, changes[k])
	}
	return Collect(items)
}

// verifyCleared reports one cleared link: broken when its bridge is dead, cleared only when
// traffic crosses it at its normal latency, and cleared with what could not be checked when no
// device can ping across it.
func verifyCleared(ctx context.Context, env Env, t *topology, p plannedConditions, c *linkChange) Item {
	it := reportConditions(env, p, c, "")
	if c.err != nil {
		return it
	}
	env.progress(p.link.LinkID, p.name, "checking", "pinging across the link")
	probe := &linkProbe{env: env, t: t, link: c.got, removed: delayOf(p.link)}
	check := probe.check(ctx)
	if check.noReply {
		// Nothing crossed: a bridge that died while the filters changed answers only the next
		// change, so one is made (to the same filters) to ask it.
		var broken *brokenBridge
		if err := p.writer.probeBridge(ctx, c.got); errors.As(err, &broken) {
			return failed(p.link.LinkID, p.name, err.Error())
		}
	}
	switch {
	case check.ok:
		it.Result += ". Traffic crosses it at its normal latency: " + check.text + "."
	case !check.measured:
		it.Result += ". Traffic was not checked: " + check.text + "."
	case check.noReply:
		it = failed(p.link.LinkID, p.name, fmt.Sprintf("GNS3 now shows no conditions on %s and its uBridge bridge answers, but no ping "+
			"crossed it: %s. Check that the devices pinged are up and addressed as read, and that nothing else on them drops pings", p.name, check.text))
	default:
		it = failed(p.link.LinkID, p.name, fmt.Sprintf("GNS3 now shows no conditions on %s, but uBridge still applies some: %s. "+
			"To repair it, save %s's configuration and reload it (its uBridge, which runs this link, starts again), then clear the "+
			"link again", p.name, check.text, p.writer.filterNode))
	}
	return it
}

// ConditionText describes a link's conditions for a person and a model ("delay 200 ms ±20 ms,
// 30 % packet loss; suspended"); "" when it has none.
func ConditionText(l *gns3.Link) string {
	var parts []string
	for _, kind := range []string{gns3.FilterDelay, gns3.FilterPacketLoss, gns3.FilterCorrupt, gns3.FilterFrequencyDrop, gns3.FilterBPF} {
		if vals, ok := l.Filters[kind]; ok && len(vals) > 0 {
			parts = append(parts, filterText(kind, vals))
		}
	}
	var others []string
	for kind, vals := range l.Filters {
		switch kind {
		case gns3.FilterDelay, gns3.FilterPacketLoss, gns3.FilterCorrupt, gns3.FilterFrequencyDrop, gns3.FilterBPF:
		default:
			others = append(others, fmt.Sprintf("%s %v", kind, vals))
		}
	}
	sort.Strings(others)
	text := strings.Join(append(parts, others...), ", ")
	if l.Suspend {
		if text != "" {
			text += "; "
		}
		text += "suspended (no packet passes)"
	}
	return text
}

func filterText(kind string, vals []any) string {
	first := numberOf(vals[0])
	switch kind {
	case gns3.FilterDelay:
		if len(vals) > 1 && numberOf(vals[1]) != 0 {
			return fmt.Sprintf("delay %d ms ±%d ms", first, numberOf(vals[1]))
		}
		return fmt.Sprintf("delay %d ms", first)
	case gns3.FilterPacketLoss:
		return fmt.Sprintf("%d %% packet loss", first)
	case gns3.FilterCorrupt:
		return fmt.Sprintf("%d %% of packets corrupted", first)
	case gns3.FilterFrequencyDrop:
		if first < 0 {
			return "every packet dropped"
		}
		return fmt.Sprintf("every %s packet dropped", ordinal(first))
	}
	expr, _ := vals[0].(string)
	return "packets matching " + strings.Join(quoteAll(strings.Split(expr, "\n")), ", ") + " dropped"
}

func quoteAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, fmt.Sprintf("%q", s))
		}
	}
	return out
}

// numberOf reads a filter value, which JSON gives as float64 and Go code as int.
func numberOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case json.Number:
		n, _ := x.Int64()
		return int(n)
	}
	return 0
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
