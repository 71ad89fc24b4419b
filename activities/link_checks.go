package activities

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// console gives a lab tool (or a check) of one call the consoles it pings across links with:
// the device's lock, the worker's device options and policy, and every command recorded for the
// audit like the device tools' commands. Each session gets a call id of its own beside the
// call's ("<call>/traffic-<attempt>-<n>"), so its records never mix with a device tool's.
func (a *Activities) console(ctx context.Context, ref workflows.ToolCallRef) tools.Console {
	var sessions atomic.Int64
	try := attempt(ctx)
	return func(ctx context.Context, job tools.DeviceJob, commands func(*devices.Profile) []string) (*devices.Profile, []devices.CommandResult, error) {
		r := ref
		r.CallID = fmt.Sprintf("%s/traffic-%d-%d", ref.CallID, try, sessions.Add(1))
		runner := a.deviceRunner(r)
		var profile *devices.Profile
		var results []devices.CommandResult
		err := runner.use(ctx, job, func(s *devices.Session) error {
			profile = s.Profile()
			if profile == nil {
				return nil
			}
			for i, c := range commands(profile) {
				if a.Devices.Policy != nil {
					if ok, reason := a.Devices.Policy.Check(c); !ok {
						results = append(results, devices.CommandResult{Command: c, Failed: true, Blocked: true, Error: reason})
						continue
					}
				}
				res, err, serr := runner.runRecorded(ctx, s, job, i, c, s.Run)
				a.logUnrecorded(ctx, job.Name, serr)
				if err != nil {
					return err
				}
				results = append(results, res)
			}
			return nil
		})
		return profile, results, err
	}
}

// linkRepaired tells whether an exercise's link fault is repaired: GNS3 shows no conditions on
// the link (found by its nodes' names: a restored snapshot renews ids) and, where a device can
// ping across it, the pings cross it at its normal latency. On GNS3 3.0.x a link whose
// conditions were cleared from GNS3's own dialog reads none while uBridge still applies them:
// only the pings tell.
func linkRepaired(ctx context.Context, env tools.Env, f models.InjectedFault) (bool, string, error) {
	nodes := f.LinkNodeList()
	if len(nodes) != 2 {
		return false, "", fmt.Errorf("the fault names no link")
	}
	c, err := tools.CheckLink(ctx, env, nodes[0], nodes[1], tools.ConditionDelay(f.Conditions))
	if err != nil {
		return false, "", err
	}
	if c.Conditions != "" {
		return false, c.Conditions, nil
	}
	if c.Measured && !c.TrafficOK {
		return false, c.Traffic, nil
	}
	return true, "", nil
}

// linkFaultsNote tells an injection turn's model that this GNS3 takes no link faults, on 3.0.x
// (or a version that cannot be read), where the tools refuse them, and why, in the tools' words.
func (a *Activities) linkFaultsNote(ctx context.Context) string {
	version := tools.GNS3Version(ctx, a.GNS3)
	if tools.LinkFaultsClearable(version) {
		return ""
	}
	return fmt.Sprintf("\nLink faults: %s; %s and link records are refused in this turn.\n", tools.LinkFaultRefusal(version), tools.SetLinkConditionsTool)
}
