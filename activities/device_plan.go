package activities

import (
	"github.com/gns3-copilot/gns3-copilot/devices"
	"github.com/gns3-copilot/gns3-copilot/tools"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The workflow keeps its own copy of the device plan so that it imports nothing of ours; these
// convert at the activity boundary. The struct conversions of targets and items compile only
// while both sides have the same fields, which keeps the copies from drifting apart.

// workflowPlan is a validated plan as the workflow carries it, with each job's time bound.
func workflowPlan(p tools.DevicePlan) workflows.DevicePlan {
	return workflows.DevicePlan{Tool: p.Tool, Jobs: convertAll(p.Jobs, workflowJob),
		Failed: convertAll(p.Failed, func(f tools.Item) workflows.DeviceFailure { return workflows.DeviceFailure(f) })}
}

func workflowJob(j tools.DeviceJob) workflows.DeviceJob {
	return workflows.DeviceJob{NodeID: j.NodeID, Name: j.Name, Target: workflows.DeviceTarget(j.Target),
		Platform: j.Platform, Commands: j.Commands, Config: j.Config, Timeout: tools.DeviceTimeout(j),
		Blocked: convertAll(j.Blocked, func(b tools.BlockedCommand) workflows.BlockedCommand { return workflows.BlockedCommand(b) })}
}

// toolsPlan is the workflow's plan back in the tools package's terms, to run and report on.
func toolsPlan(p workflows.DevicePlan) tools.DevicePlan {
	return tools.DevicePlan{Tool: p.Tool, Jobs: convertAll(p.Jobs, toolsJob),
		Failed: convertAll(p.Failed, func(f workflows.DeviceFailure) tools.Item { return tools.Item(f) })}
}

func toolsJob(j workflows.DeviceJob) tools.DeviceJob {
	return tools.DeviceJob{NodeID: j.NodeID, Name: j.Name, Target: devices.Target(j.Target),
		Platform: j.Platform, Commands: j.Commands, Config: j.Config,
		Blocked: convertAll(j.Blocked, func(b workflows.BlockedCommand) tools.BlockedCommand { return tools.BlockedCommand(b) })}
}

// convertAll keeps nil as nil, so a plan converted there and back compares equal to the original.
func convertAll[A, B any](in []A, conv func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, v := range in {
		out[i] = conv(v)
	}
	return out
}
