package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// twoPCs is PC1 — PC2 and SW1 — HUB1 (a link GNS3 offers no filters on).
func twoPCs(t *testing.T) (*lab, fakegns3.Link, fakegns3.Link) {
	t.Helper()
	l := newLab(t)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1"})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", X: 300})
	sw := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "SW1", Template: fakegns3.EthernetSwitchTemplateID, Y: 300})
	hub := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "HUB1", Template: fakegns3.EthernetHubTemplateID, X: 300, Y: 300})
	return l, l.fake.AddLink(l.pid, a.ID, 0, 0, b.ID, 0, 0), l.fake.AddLink(l.pid, sw.ID, 0, 0, hub.ID, 0, 0)
}

func filtersOf(t *testing.T, l *lab, id string) string {
	t.Helper()
	got, ok := l.fake.Link(id)
	if !ok {
		t.Fatalf("no link %s", id)
	}
	return fmt.Sprintf("%v suspended=%v", got.Filters, got.Suspended)
}

func TestSetAndClearLinkConditions(t *testing.T) {
	l, pcs, _ := twoPCs(t)
	r := l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{
		{"node_a": "PC1", "node_b": "PC2", "delay_ms": 200, "jitter_ms": 20, "loss_percent": 20}}})
	mustSucceed(t, r)
	if got := filtersOf(t, l, pcs.ID); got != "map[delay:[200 20] packet_loss:[20]] suspended=false" {
		t.Fatalf("on GNS3: %s", got)
	}
	it := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0")
	if it.ID != pcs.ID || !strings.Contains(it.Result, "conditions now delay 200 ms ±20 ms, 20 % packet loss (before: none)") {
		t.Fatalf("item: %+v", it)
	}

	// A field left out keeps its value; 0 removes one; the link can be suspended; the topology
	// read shows it, in every mode that reads.
	r = l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{
		{"link_id": pcs.ID, "loss_percent": 0, "corrupt_percent": 5, "drop_every_nth": 3, "bpf": " icmp \n udp port 53 ", "suspend": true}}})
	mustSucceed(t, r)
	if got := filtersOf(t, l, pcs.ID); got != "map[bpf:[icmp\nudp port 53] corrupt:[5] delay:[200 20] frequency_drop:[3]] suspended=true" {
		t.Fatalf("on GNS3: %s", got)
	}
	topo := l.runMode(t, TeachingAssistant, "get_gns3_topology", map[string]any{})
	want := `delay 200 ms ±20 ms, 5 % of packets corrupted, every 3rd packet dropped, packets matching "icmp", "udp port 53" dropped; suspended (no packet passes)`
	if res := item(t, topo, "PC1 Ethernet0 <-> PC2 Ethernet0").Result; res != "ethernet link; conditions: "+want {
		t.Fatalf("topology: %q", res)
	}
	ctx, err := ProjectContext(t.Context(), l.env.GNS3, l.pid)
	if err != nil || !strings.Contains(ctx, "- PC1 Ethernet0 <-> PC2 Ethernet0 [conditions: "+want+"]") {
		t.Fatalf("prompt context: %v\n%s", err, ctx)
	}

	r = l.runMode(t, TroubleshootingInjection, ClearLinkConditionsTool, map[string]any{"links": []map[string]any{{"node_a": "PC2", "node_b": "PC1"}}})
	mustSucceed(t, r)
	if got := filtersOf(t, l, pcs.ID); got != "map[] suspended=false" {
		t.Fatalf("after clear: %s", got)
	}
	if res := r.Data[0].Result; !strings.Contains(res, "conditions now none (before: delay 200 ms") {
		t.Fatalf("clear item: %q", res)
	}
}

// Out of range, unknown links and links without filters are refused with what is allowed, and a
// call with one refused link changes no link.
func TestLinkConditionsRefusals(t *testing.T) {
	l, pcs, trunk := twoPCs(t)
	before := l.fake.Count(fakegns3.OpUpdateLink)
	for _, tc := range []struct {
		entry map[string]any
		want  string
	}{
		{map[string]any{"link_id": pcs.ID, "delay_ms": 40000}, "delay_ms must be from 0 to 32767 ms (GNS3's range for Delay: Latency), got 40000"},
		{map[string]any{"link_id": pcs.ID, "loss_percent": 101}, "loss_percent must be from 0 to 100 % (GNS3's range for Packet loss: Chance), got 101"},
		{map[string]any{"link_id": pcs.ID, "drop_every_nth": -2}, "drop_every_nth must be from -1 to 32767 th packet"},
		{map[string]any{"link_id": pcs.ID, "delay_ms": 2.5}, "delay_ms must be a whole number"},
		{map[string]any{"link_id": pcs.ID, "jitter_ms": 10}, "jitter_ms varies a delay, and this link has none"},
		{map[string]any{"node_a": "SW1", "node_b": "HUB1", "delay_ms": 100}, "GNS3 offers no conditions on this link: neither of its nodes (SW1 (ethernet_switch), HUB1 (ethernet_hub)) can run link filters"},
		{map[string]any{"node_a": "PC1", "node_b": "PC9", "delay_ms": 100}, `no node "PC9" in this project (nodes: HUB1, PC1, PC2, SW1)`},
		{map[string]any{"link_id": "00000000-0000-0000-0000-000000000000", "delay_ms": 100}, "no link 00000000-0000-0000-0000-000000000000 in this project (links: PC1 Ethernet0 <-> PC2 Ethernet0 (link_id " + pcs.ID},
	} {
		r := l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": trunk.ID, "suspend": true}, tc.entry}})
		if r.Success || r.Failed != 2 || !strings.Contains(r.Data[1].Error, tc.want) {
			t.Errorf("%v: want %q, got %s", tc.entry, tc.want, r.JSON())
			continue
		}
		if !strings.Contains(r.Data[0].Error, "a refused call changes nothing") {
			t.Errorf("the valid entry of a refused call: %+v", r.Data[0])
		}
	}
	mustFailWhole(t, l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": pcs.ID}}}), "links[0] sets no condition")
	mustFailWhole(t, l.run(t, ClearLinkConditionsTool, map[string]any{"links": []map[string]any{}}), "links must list 1 to 50 links")
	if n := l.fake.Count(fakegns3.OpUpdateLink); n != before {
		t.Fatalf("refused calls changed %d link(s)", n-before)
	}
	if got := filtersOf(t, l, pcs.ID) + " " + filtersOf(t, l, trunk.ID); got != "map[] suspended=false map[] suspended=false" {
		t.Fatalf("state after refusals: %s", got)
	}
	// Suspending needs no filter: a switch-to-hub link can be cut.
	mustSucceed(t, l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": trunk.ID, "suspend": true}}}))
	if got := filtersOf(t, l, trunk.ID); got != "map[] suspended=true" {
		t.Fatalf("suspended trunk: %s", got)
	}
	// Not offered where a mode does not change the lab.
	r := l.runMode(t, TeachingAssistant, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": pcs.ID, "delay_ms": 5}}})
	mustFailWhole(t, r, "not available in teaching_assistant mode")
}

func TestConditionText(t *testing.T) {
	for _, tc := range []struct {
		link gns3.Link
		want string
	}{
		{gns3.Link{}, ""},
		{gns3.Link{Suspend: true}, "suspended (no packet passes)"},
		{gns3.Link{Filters: gns3.LinkFilters{"delay": {200.0, 0.0}}}, "delay 200 ms"},
		{gns3.Link{Filters: gns3.LinkFilters{"frequency_drop": {-1.0}}}, "every packet dropped"},
		{gns3.Link{Filters: gns3.LinkFilters{"frequency_drop": {2}, "future_filter": {7}}}, "every 2nd packet dropped, future_filter [7]"},
	} {
		if got := ConditionText(&tc.link); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.link, got, tc.want)
		}
	}
}
