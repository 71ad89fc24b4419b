package workflows

import "time"

// Names of the device tools, which the turn runs as one activity per device rather than as one
// RunTool activity. They are the tools package's names; activities' tests hold them equal, so
// the workflow needs no import of the tool catalogue.
const (
	ShowCommandsTool   = "execute_multiple_device_commands"
	ConfigCommandsTool = "execute_multiple_device_config_commands"
	VPCSCommandsTool   = "execute_vpcs_commands"
)

// ModeLabAutomation is the copilot mode in which destructive lab tools may ask for approval (the
// other mode cannot run them at all).
const ModeLabAutomation = "lab_automation_assistant"

// IsDeviceTool reports whether a tool runs commands on device consoles.
func IsDeviceTool(name string) bool {
	return name == ShowCommandsTool || name == ConfigCommandsTool || name == VPCSCommandsTool
}

// configJobTool tells the device tools that may change configuration: they run as ConfigJob
// children (a VPCS call that only pings finds out in its plan and asks nothing).
func configJobTool(name string) bool {
	return name == ConfigCommandsTool || name == VPCSCommandsTool
}

// The plan types below travel through the history as the plan activity's result and the device
// activities' inputs. Their JSON is that of the tools package's plan, field for field, so
// histories recorded when the workflow used those types replay and resume unchanged; the
// activities convert between the two.

// DevicePlan is a validated device tool call: the devices that will be contacted, and the ones
// that failed before any connection (unknown name, stopped node, wrong console type).
type DevicePlan struct {
	Tool   string          `json:"tool"`
	Jobs   []DeviceJob     `json:"jobs"`
	Failed []DeviceFailure `json:"failed,omitempty"`
}

// DeviceJob is what one device is asked to do within a tool call.
type DeviceJob struct {
	NodeID   string           `json:"node_id"`
	Name     string           `json:"name"`
	Target   DeviceTarget     `json:"target"`
	Platform string           `json:"platform,omitempty"`
	Commands []string         `json:"commands"`
	Blocked  []BlockedCommand `json:"blocked,omitempty"`
	Config   bool             `json:"config"`
	// Timeout bounds the device's whole job, as the plan activity computed it from the
	// platform's per-command timeouts. Zero in plans recorded before it existed.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// DeviceTarget is how the console driver finds and recognises a device. Its fields and their
// order are the devices package's Target (untagged, so the JSON keys are the field names).
type DeviceTarget struct {
	NodeID       string
	Name         string
	NodeType     string
	TemplateName string
	Image        string
	Tags         []string
	ConsoleType  string
	ConsoleHost  string
	ConsolePort  int
}

// BlockedCommand is a command the safety policy refused; it is never sent.
type BlockedCommand struct {
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// DeviceFailure is a device that failed before any connection, as one item of the tool's result.
type DeviceFailure struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// deviceTimeout is how long one device's activity may run. Plans recorded before the plan
// activity computed it get the bound a platform without a profile gets: connecting plus 30
// seconds a command.
func deviceTimeout(job DeviceJob) time.Duration {
	if job.Timeout > 0 {
		return job.Timeout
	}
	return 30*time.Second + time.Duration(len(job.Commands))*30*time.Second
}
