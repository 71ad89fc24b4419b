package domain

// A save point is a GNS3 snapshot of a lab whose nodes run. GNS3 exports only a stopped
// project, so the nodes that ran are saved on their consoles, stopped, snapshotted and started
// again. Which nodes ran goes into the workflow's history before any of them stops, so a worker
// that dies between the stop and the start leaves a record that starts them again; these JSON
// keys are in those histories and must not change.

// SavePointNode is a node that ran when a save point was asked for: what stops it, starts it
// again (by name: a restore renews every id) and reaches its console.
type SavePointNode struct {
	NodeID   string `json:"node_id"`
	Name     string `json:"name"`
	NodeType string `json:"node_type"`
	// Status is what GNS3 said before the pause: started, or suspended (which GNS3 also refuses
	// to export).
	Status string       `json:"status"`
	Target DeviceTarget `json:"target"`
	// Platform is the console profile the node's fields tell, "" when only its prompt will.
	Platform string `json:"platform,omitempty"`
}
