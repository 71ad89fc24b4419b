package tools

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// A destructive call that cannot run as asked is refused by its check with the result it ends
// with, naming what exists; one that can run gets the sentence its approval shows. Checking
// changes nothing, and a lab that cannot be read refuses nothing.
func TestCheckRefusesWhatCannotRunAndNamesWhatExists(t *testing.T) {
	l := newLab(t)
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "R1", Template: "Router", Status: "started"})
	pc1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started", X: 300})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "SW1", Template: fakegns3.EthernetSwitchTemplateID, Y: 300})
	link := l.fake.AddLink(l.pid, r1.ID, 0, 0, pc1.ID, 0, 0)
	// Taken while the lab was stopped, as GNS3 requires.
	for _, id := range []string{r1.ID, pc1.ID} {
		l.fake.SetStatus(id, "stopped")
	}
	s := l.fake.TakeSnapshot(l.pid, "baseline")
	for _, id := range []string{r1.ID, pc1.ID} {
		l.fake.SetStatus(id, "started")
	}
	l.fake.ResetCounts()
	check := func(tool string, args any) Check {
		t.Helper()
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return l.reg.Check(t.Context(), l.env, tool, string(b))
	}
	refused := func(tool string, args any, reason string) {
		t.Helper()
		c := check(tool, args)
		if c.Refusal == nil {
			t.Fatalf("%s %v is not refused: %+v", tool, args, c)
		}
		mustFailWhole(t, *c.Refusal, tool+" was not run, so nothing changed: "+reason)
		if c.Refusal.Metadata["tool_name"] != tool || c.Refusal.Metadata["version"] != FormatVersion {
			t.Fatalf("the refusal is not a standard result of %s: %s", tool, c.Refusal.JSON())
		}
		if !strings.Contains(c.Summary, "it cannot run as asked, "+reason) {
			t.Fatalf("summary of a refused %s: %s", tool, c.Summary)
		}
	}
	runs := func(tool string, args any, summary string) {
		t.Helper()
		c := check(tool, args)
		if c.Refusal != nil || !strings.Contains(c.Summary, summary) {
			t.Fatalf("%s %v: %+v, want a summary with %q", tool, args, c, summary)
		}
	}

	refused("restore_gns3_snapshot", map[string]string{"snapshot": "nope"},
		`no snapshot "nope" in this project; its snapshots are: "baseline" (snapshot_id `+s.ID)
	refused("restore_gns3_snapshot", map[string]string{}, "snapshot is required")
	runs("restore_gns3_snapshot", map[string]string{"snapshot": "baseline"}, `Restore snapshot "baseline", taken on `)

	refused("delete_gns3_node", map[string][]string{"node_ids": {"PC1", "R9", "R8"}},
		`no node "R9" in this project (nodes: PC1, R1, SW1); no node "R8" in this project (nodes: PC1, R1, SW1)`)
	runs("delete_gns3_node", map[string][]string{"node_ids": {pc1.ID}}, "Delete PC1 and its 1 link(s); this cannot be undone")

	refused("delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": "bogus"}}},
		"no link bogus in this project (links: R1 ")
	refused("delete_gns3_link", map[string]any{"links": []map[string]string{{"node_a": "PC1", "node_b": "SW1"}}},
		"no link matches PC1 <-> SW1 (links: R1 ")
	runs("delete_gns3_link", map[string]any{"links": []map[string]string{{"link_id": link.ID}}}, "Delete links: R1 ")

	refused("stop_gns3_node", map[string][]string{"node_ids": {"SW1"}}, "SW1 is a built-in ethernet_switch, which always runs and cannot be stopped")
	runs("stop_gns3_node", map[string][]string{"node_ids": {"R1", "PC1"}}, "Stop R1 (started), PC1 (started); unsaved device configuration is lost")
	refused("reload_gns3_node", map[string][]string{"node_ids": {"R2"}}, `no node "R2" in this project`)
	runs("reload_gns3_node", map[string][]string{"node_ids": {"R1"}}, "Reload R1 (started)")

	l.fake.SetProjectStatus(l.pid, "closed")
	refused("delete_gns3_node", map[string][]string{"node_ids": {"PC1"}}, `project "lab" is closed; ask the user to open it in GNS3 first`)
	l.fake.SetProjectStatus(l.pid, "opened")

	// GNS3 failing says nothing about the call: it goes on to its approval.
	l.fake.Inject(fakegns3.Failure{Op: fakegns3.OpListSnapshots, Status: http.StatusServiceUnavailable, Message: "busy"})
	c := check("restore_gns3_snapshot", map[string]string{"snapshot": "nope"})
	if c.Refusal != nil || !strings.Contains(c.Summary, `Restore snapshot "nope": the lab could not be read to check it (could not list the snapshots: `) {
		t.Fatalf("a check GNS3 could not answer: %+v", c)
	}
	l.fake.ClearFailures()

	if c := check("get_gns3_topology", map[string]string{}); c != (Check{}) {
		t.Fatalf("a tool without a preview is not checked: %+v", c)
	}
	for _, op := range []fakegns3.Op{fakegns3.OpRestoreSnapshot, fakegns3.OpDeleteNode, fakegns3.OpDeleteLink, fakegns3.OpStopNode, fakegns3.OpReloadNode} {
		if n := l.fake.Count(op); n != 0 {
			t.Fatalf("checking reached %s %d time(s)", op, n)
		}
	}
}
