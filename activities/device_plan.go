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
	out := workflows.DevicePlan{Tool: p.Tool}
	if p.Jobs != nil {
		out.Jobs = make([]workflows.DeviceJob, len(p.Jobs))
		for i, j := range p.Jobs {
			out.Jobs[i] = workflowJob(j)
		}
	}
	if p.Failed != nil {
		out.Failed = make([]workflows.DeviceFailure, len(p.Failed))
		for i, f := range p.Failed {
			out.Failed[i] = workflows.DeviceFailure(f)
		}
	}
	return out
}

func workflowJob(j tools.DeviceJob) workflows.DeviceJob {
	out := workflows.DeviceJob{NodeID: j.NodeID, Name: j.Name, Target: workflows.DeviceTarget(j.Target),
		Platform: j.Platform, Commands: j.Commands, Config: j.Config, Timeout: tools.DeviceTimeout(j)}
	if j.Blocked != nil {
		out.Blocked = make([]workflows.BlockedCommand, len(j.Blocked))
		for i, b := range j.Blocked {
			out.Blocked[i] = workflows.BlockedCommand(b)
		}
	}
	return out
}

// toolsPlan is the workflow's plan back in the tools package's terms, to run and report on.
func toolsPlan(p workflows.DevicePlan) tools.DevicePlan {
	out := tools.DevicePlan{Tool: p.Tool}
	if p.Jobs != nil {
		out.Jobs = make([]tools.DeviceJob, len(p.Jobs))
		for i, j := range p.Jobs {
			out.Jobs[i] = toolsJob(j)
		}
	}
	if p.Failed != nil {
		out.Failed = make([]tools.Item, len(p.Failed))
		for i, f := range p.Failed {
			out.Failed[i] = tools.Item(f)
		}
	}
	return out
}

func toolsJob(j workflows.DeviceJob) tools.DeviceJob {
	out := tools.DeviceJob{NodeID: j.NodeID, Name: j.Name, Target: devices.Target(j.Target),
		Platform: j.Platform, Commands: j.Commands, Config: j.Config}
	if j.Blocked != nil {
		out.Blocked = make([]tools.BlockedCommand, len(j.Blocked))
		for i, b := range j.Blocked {
			out.Blocked[i] = tools.BlockedCommand(b)
		}
	}
	return out
}
