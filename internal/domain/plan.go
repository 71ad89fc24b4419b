package domain

import "time"

// The device plan is the plan activity's result and the device activities' input, so it is
// stored in workflow histories: its JSON keys must not change, or a running turn breaks on the
// next deployment. The tools package plans with these types and the workflows carry them.

// DevicePlan is a validated device tool call: the devices that will be contacted, and the ones
// that failed before any connection (unknown name, stopped node, wrong console type).
type DevicePlan struct {
	Tool   string       `json:"tool"`
	Jobs   []DeviceJob  `json:"jobs"`
	Failed []ResultItem `json:"failed,omitempty"`
	// Undo is set on the plan of an undo: the job it takes back.
	Undo *UndoOf `json:"undo,omitempty"`
}

// UndoOf names the configuration job an undo takes back, and for each device of the undo (by
// its node id now) the node id the job knew it by: a restored snapshot gives nodes new ids.
type UndoOf struct {
	JobID string            `json:"job_id"`
	Nodes map[string]string `json:"nodes"`
	// Left are, by node id, the job's changes the undo's lines cannot take back, each saying why.
	Left map[string][]string `json:"left,omitempty"`
}

// DeviceJob is what one device is asked to do within a tool call.
type DeviceJob struct {
	NodeID   string           `json:"node_id"`
	Name     string           `json:"name"`
	Target   DeviceTarget     `json:"target"`
	Platform string           `json:"platform,omitempty"` // forced platform ("vpcs" for the VPCS tool)
	Commands []string         `json:"commands"`           // allowed commands, in order
	Blocked  []BlockedCommand `json:"blocked,omitempty"`
	Config   bool             `json:"config"` // run inside configuration mode
	// Timeout bounds the device's whole job, as the plan activity computed it from the
	// platform's per-command timeouts. Zero in plans recorded before it existed.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Wait are the call's wait_for checks for this device, run once its commands are done.
	Wait []WaitCheck `json:"wait_for,omitempty"`
}

// DeviceTarget is how the console driver finds and recognises a device (the devices package's
// Target is this type with the driver's methods). Untagged, so the JSON keys are the field names.
type DeviceTarget struct {
	NodeID       string
	Name         string
	NodeType     string
	TemplateName string
	// Image holds the node's image file names (hda_disk_image, image, path, …), separated by
	// spaces.
	Image       string
	Tags        []string
	ConsoleType string
	ConsoleHost string
	ConsolePort int
}

// BlockedCommand is a command the safety policy refused; it is never sent.
type BlockedCommand struct {
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// ResultItem is one item of a tool's standard result: one node, link or device and how it
// fared.
type ResultItem struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}
