package tools

// LabTools returns every GNS3 topology and node tool, in the order they are
// offered to the model. Device tools come from the devices package.
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
	}
}
