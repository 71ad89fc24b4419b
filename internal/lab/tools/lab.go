package tools

// LabTools returns every GNS3 topology and node tool, in the order they are
// offered to the model.
func LabTools() []Tool {
	return []Tool{
		newTopologyTool(),
		newTemplatesTool(),
		newCreateNodeTool(),
		newCreateLinkTool(),
		newStartTool(),
		newRenameTool(),
		newStopTool(),
		newSuspendTool(),
		newReloadTool(),
		newDeleteNodeTool(),
		newDeleteLinkTool(),
		newCaptureTool(),
		newSetConditionsTool(),
		newClearConditionsTool(),
		newCreateSnapshotTool(),
		newListSnapshotsTool(),
		newRestoreSnapshotTool(),
	}
}

// DeviceTools returns the tools that run commands on the devices' consoles, and the undo of a
// configuration job.
func DeviceTools() []Tool { return append(newDeviceTools(), newUndoTool()) }

// AllTools is every tool the copilot offers.
func AllTools() []Tool { return append(append(LabTools(), DeviceTools()...), ExerciseTools()...) }
