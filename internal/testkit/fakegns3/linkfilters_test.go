package fakegns3

import (
	"fmt"
	"strings"
	"testing"
)

// What uBridge applies after each PUT, as the real servers do it: on 3.0.x {} reads {} but the
// old filters stay applied (and a resumed link keeps dropping everything), a non-empty set
// replaces them; on 3.1 {} clears.
func TestEmptyFiltersClearOnlyFrom31(t *testing.T) {
	for _, tc := range []struct {
		version       string
		afterClear    string
		afterResume   string
		afterNoMatchs string
	}{
		{"3.0.6", "map[delay:[200 0]]", "map[frequency_drop:[-1]]", "map[bpf:[ether proto 0x88b5]]"},
		{"3.1.0a2", "map[]", "map[]", "map[]"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s := New(t, WithVersion(tc.version))
			pid := s.AddProject("lab")
			pc1 := s.AddNode(pid, NodeSpec{Name: "PC1"})
			pc2 := s.AddNode(pid, NodeSpec{Name: "PC2"})
			l := s.AddLink(pid, pc1.ID, 0, 0, pc2.ID, 0, 0)
			s.SetStatus(pc1.ID, "started")
			put := func(body map[string]any) {
				t.Helper()
				if r := do(t, s, AdminToken, "PUT", "/v3/projects/"+pid+"/links/"+l.ID, body); r.status != 200 {
					t.Fatalf("PUT %v: %d %s", body, r.status, r.raw)
				}
			}
			applied := func() string {
				t.Helper()
				f, dead := s.Bridge(l.ID)
				if dead {
					t.Fatal("the bridge died")
				}
				return fmt.Sprint(f)
			}

			put(map[string]any{"filters": map[string]any{"delay": []int{200, 0}}})
			if got := applied(); got != "map[delay:[200 0]]" {
				t.Fatalf("after setting a delay uBridge applies %s", got)
			}
			put(map[string]any{"filters": map[string]any{}})
			if got, _ := s.Link(l.ID); len(got.Filters) != 0 {
				t.Fatalf("GNS3 shows %v after {}", got.Filters)
			}
			if got := applied(); got != tc.afterClear {
				t.Fatalf("after {} uBridge applies %s, want %s", got, tc.afterClear)
			}

			// A filter that matches nothing, then {}, clears on every version.
			put(map[string]any{"filters": map[string]any{"bpf": []string{"ether proto 0x88b5"}}})
			if got := applied(); got != "map[bpf:[ether proto 0x88b5]]" {
				t.Fatalf("after the no-match filter uBridge applies %s", got)
			}
			put(map[string]any{"filters": map[string]any{}})
			if got := applied(); got != tc.afterNoMatchs {
				t.Fatalf("after the no-match filter and {} uBridge applies %s, want %s", got, tc.afterNoMatchs)
			}

			// Suspended, then resumed without filters.
			put(map[string]any{"suspend": true})
			if got := applied(); got != "map[frequency_drop:[-1]]" {
				t.Fatalf("a suspended link: uBridge applies %s", got)
			}
			put(map[string]any{"suspend": false})
			if got := applied(); got != tc.afterResume {
				t.Fatalf("resumed: uBridge applies %s, want %s", got, tc.afterResume)
			}
		})
	}
}

// A dead bridge: GNS3 records every later change and answers 409; reloading the filter node
// brings the bridge back with the filters its compute kept.
func TestDeadBridgeAnswers409UntilItsNodeRestarts(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	pc1 := s.AddNode(pid, NodeSpec{Name: "PC1"})
	pc2 := s.AddNode(pid, NodeSpec{Name: "PC2"})
	l := s.AddLink(pid, pc1.ID, 0, 0, pc2.ID, 0, 0)
	s.SetStatus(pc1.ID, "started")
	s.SetStatus(pc2.ID, "started")
	base := "/v3/projects/" + pid
	do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"filters": map[string]any{"delay": []int{200, 0}}})
	s.KillLinkBridge(l.ID)

	r := do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"filters": map[string]any{"bpf": []string{"ether proto 0x88b5"}}})
	want := "bridge 'VPCS-" + pc1.ID + "' doesn't exist"
	if r.status != 409 || !strings.Contains(string(r.raw), want) {
		t.Fatalf("a change on a dead bridge: %d %s", r.status, r.raw)
	}
	if got, _ := s.Link(l.ID); fmt.Sprint(got.Filters) != "map[bpf:[ether proto 0x88b5]]" {
		t.Fatalf("GNS3 records the refused change, as the real one does: %v", got.Filters)
	}
	if _, dead := s.Bridge(l.ID); !dead {
		t.Fatal("the bridge came back by itself")
	}
	if r := do(t, s, AdminToken, "POST", base+"/nodes/"+pc2.ID+"/reload", nil); r.status != 204 {
		t.Fatalf("reload: %d", r.status)
	}
	if _, dead := s.Bridge(l.ID); !dead {
		t.Fatal("reloading the node that does not filter the link repaired it")
	}
	if r := do(t, s, AdminToken, "POST", base+"/nodes/"+pc1.ID+"/reload", nil); r.status != 204 {
		t.Fatalf("reload: %d", r.status)
	}
	f, dead := s.Bridge(l.ID)
	if dead || fmt.Sprint(f) != "map[bpf:[ether proto 0x88b5]]" {
		t.Fatalf("after reloading PC1: dead=%v applied %v", dead, f)
	}
	if r := do(t, s, AdminToken, "PUT", base+"/links/"+l.ID, map[string]any{"filters": map[string]any{}}); r.status != 200 {
		t.Fatalf("a change once repaired: %d %s", r.status, r.raw)
	}
}
