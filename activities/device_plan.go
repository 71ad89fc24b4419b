package activities

import "github.com/gns3-copilot/gns3-copilot/internal/lab/tools"

// withTimeouts gives each job of a validated plan its time bound, which the workflow sets on the
// device's activity.
func withTimeouts(p tools.DevicePlan) tools.DevicePlan {
	jobs := make([]tools.DeviceJob, len(p.Jobs))
	for i, j := range p.Jobs {
		j.Timeout = tools.DeviceTimeout(j)
		jobs[i] = j
	}
	p.Jobs = jobs
	return p
}
