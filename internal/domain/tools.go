package domain

// Names of the tools whose kind decides how a tool call runs.
const (
	// The device tools run commands on device consoles, one activity per device.
	ShowCommandsTool   = "execute_multiple_device_commands"
	ConfigCommandsTool = "execute_multiple_device_config_commands"
	VPCSCommandsTool   = "execute_vpcs_commands"
	// UndoConfigTool takes a configuration job back: a configuration job of its own, whose
	// lines are computed from the job's reads before and after.
	UndoConfigTool = "undo_device_config"

	// The destructive lab tools lose state or take the lab apart.
	DeleteNodeTool = "delete_gns3_node"
	DeleteLinkTool = "delete_gns3_link"
	StopNodeTool   = "stop_gns3_node"
	ReloadNodeTool = "reload_gns3_node"
	// RestoreSnapshotTool puts the project back as a snapshot had it: what changed since is lost.
	RestoreSnapshotTool = "restore_gns3_snapshot"
	// CreateSnapshotTool takes a snapshot; on a running lab it is a save point, which pauses the
	// nodes and so asks first under ApprovalChanges (see SavePointNode).
	CreateSnapshotTool = "create_gns3_snapshot"
)

// IsDeviceTool reports whether a tool runs commands on device consoles.
func IsDeviceTool(name string) bool {
	return name == ShowCommandsTool || name == ConfigCommandsTool || name == VPCSCommandsTool
}

// IsConfigJobTool reports whether a device tool may change configuration, so that it runs as a
// configuration job (a VPCS call that only pings finds out in its plan and asks nothing).
func IsConfigJobTool(name string) bool {
	return name == ConfigCommandsTool || name == VPCSCommandsTool || name == UndoConfigTool
}

// IsDestructiveTool reports whether a tool is a destructive lab tool, which waits for a decision
// under ApprovalChanges.
func IsDestructiveTool(name string) bool {
	switch name {
	case DeleteNodeTool, DeleteLinkTool, StopNodeTool, ReloadNodeTool, RestoreSnapshotTool:
		return true
	}
	return false
}
