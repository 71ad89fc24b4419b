package livetopo

import (
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

func router(id, name, status string, x int) gns3.Node {
	return gns3.Node{NodeID: id, Name: name, Status: status, X: x, Ports: []gns3.Port{
		{Name: "GigabitEthernet0/0", ShortName: "Gi0/0", AdapterNumber: 0},
		{Name: "GigabitEthernet0/1", ShortName: "Gi0/1", AdapterNumber: 1},
	}}
}

func TestDriftNamesOutsideChanges(t *testing.T) {
	before := &Snapshot{
		Nodes: []gns3.Node{router("1", "R1", "started", 0), router("2", "R2", "started", 100), router("3", "R3", "started", 200)},
		Links: []gns3.Link{{LinkID: "l1", Nodes: []gns3.LinkEnd{{NodeID: "1", AdapterNumber: 1}, {NodeID: "3", AdapterNumber: 0}}}},
	}
	now := &Snapshot{
		Nodes: []gns3.Node{router("1", "R1", "started", 0), router("2", "R2", "stopped", 100), router("3", "R3", "started", 200), router("4", "R4", "stopped", 300)},
	}
	got := Drift(Summarize(before), Summarize(now))
	want := []string{"R4 added", "R2 stopped", "link R1 Gi0/1 — R3 Gi0/0 removed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("drift %q, want %q", got, want)
	}
	note := OutsideChangeNote(got)
	if !strings.Contains(note, "R2 stopped, link R1 Gi0/1 — R3 Gi0/0 removed") || !strings.Contains(note, "outside this chat") {
		t.Errorf("note: %s", note)
	}
	if d := Drift(Summarize(now), Summarize(now)); len(d) != 0 {
		t.Errorf("no change must give no drift, got %q", d)
	}
}

func TestDriftIsShortOnABigChange(t *testing.T) {
	now := &Snapshot{}
	for i := 0; i < 40; i++ {
		now.Nodes = append(now.Nodes, router(string(rune('a'+i)), "N"+string(rune('a'+i)), "stopped", 0))
	}
	got := Drift(Summary{}, Summarize(now))
	if len(got) != maxDriftItems+1 || got[maxDriftItems] != "and 28 more changes" {
		t.Fatalf("drift of 40 new nodes: %d items, last %q", len(got), got[len(got)-1])
	}
}
