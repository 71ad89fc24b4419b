package tools

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
)

func vpcsNode(id, name, status string, console int) gns3.Node {
	return gns3.Node{NodeID: id, Name: name, NodeType: "vpcs", Status: status, Console: &console, ConsoleType: "telnet",
		ConsoleHost: "127.0.0.1", Ports: []gns3.Port{{Name: "Ethernet0", ShortName: "e0"}}}
}

func labOf(nodes []gns3.Node, links []gns3.Link) string {
	return SnapshotContext(&livetopo.Snapshot{Project: gns3.Project{ProjectID: "p1", Name: "lab1", Status: gns3.ProjectOpened},
		Nodes: nodes, Links: links}, "127.0.0.1")
}

// A note of what changed names each new node whole, with its id, a changed one without the id
// the model has (unless it was renamed), a deleted one by name and id, and links by their ends;
// an unchanged lab has no note.
func TestLabChangesSayWhatChangedWithItsIds(t *testing.T) {
	pc1, pc2 := vpcsNode("n1", "PC1", "started", 5000), vpcsNode("n2", "PC2", "started", 5001)
	before := labOf([]gns3.Node{pc1, pc2}, nil)
	require.Nil(t, LabChanges(before, before))

	pc3, pc4 := vpcsNode("n3", "PC3", "stopped", 5002), vpcsNode("n4", "PC4", "stopped", 5003)
	added := labOf([]gns3.Node{pc1, pc2, pc3, pc4}, nil)
	require.Equal(t, []string{
		"- PC3 added: vpcs, stopped, telnet 127.0.0.1:5002; free ports: Ethernet0; node_id n3",
		"- PC4 added: vpcs, stopped, telnet 127.0.0.1:5003; free ports: Ethernet0; node_id n4",
	}, LabChanges(before, added))

	link := gns3.Link{LinkID: "l1", Nodes: []gns3.LinkEnd{{NodeID: "n3"}, {NodeID: "n4"}}}
	pc3.Status, pc4.Status = "started", "started"
	linked := labOf([]gns3.Node{pc1, pc2, pc3, pc4}, []gns3.Link{link})
	require.Equal(t, []string{
		"- PC3 now: vpcs, started, telnet 127.0.0.1:5002; connected: Ethernet0→PC4 Ethernet0",
		"- PC4 now: vpcs, started, telnet 127.0.0.1:5003; connected: Ethernet0→PC3 Ethernet0",
		"- link PC3 Ethernet0 <-> PC4 Ethernet0 added",
	}, LabChanges(added, linked))

	link.Suspend = true
	suspended := labOf([]gns3.Node{pc1, pc2, pc3, pc4}, []gns3.Link{link})
	require.Equal(t, []string{"- link PC3 Ethernet0 <-> PC4 Ethernet0 now: [conditions: suspended (no packet passes)]"}, LabChanges(linked, suspended))
	require.Equal(t, []string{"- link PC3 Ethernet0 <-> PC4 Ethernet0 now without conditions"}, LabChanges(suspended, linked))

	renamed := pc2
	renamed.Name = "Server"
	gone := labOf([]gns3.Node{renamed, pc3, pc4}, nil)
	require.Equal(t, []string{
		"- PC1 deleted (node_id n1)",
		"- link PC3 Ethernet0 <-> PC4 Ethernet0 removed",
		"- PC3 now: vpcs, started, telnet 127.0.0.1:5002; free ports: Ethernet0",
		"- PC4 now: vpcs, started, telnet 127.0.0.1:5003; free ports: Ethernet0",
		"- Server now: vpcs, started, telnet 127.0.0.1:5001; free ports: Ethernet0; node_id n2",
	}, LabChanges(linked, gone))

	closed := SnapshotContext(&livetopo.Snapshot{Project: gns3.Project{ProjectID: "p1", Name: "lab1", Status: gns3.ProjectClosed}}, "127.0.0.1")
	changes := LabChanges(labOf(nil, nil), closed)
	require.Equal(t, []string{"- Project: lab1 (project_id p1, closed)",
		"- The project is closed: nodes and links cannot be changed or started until it is opened in GNS3."}, changes)
}
