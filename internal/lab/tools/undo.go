package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// UndoConfigTool takes a configuration job back. Like the device tools it has no Run: its
// plan is computed from the job's records (PlanUndo) and it runs as a configuration job of its
// own, with the plan shown for approval, the reads before and after and the diff.
const UndoConfigTool = domain.UndoConfigTool

const undoSchema = `{"type":"object","properties":{` +
	`"job":{"type":"string","description":"The config_job_id a configuration result's metadata shows. Leave it out for the last job applied in this chat."},` +
	`"device_names":{"type":"array","maxItems":100,"items":{"type":"string"},"description":"Only these devices of the job (names or node_ids); all of them when left out."}},` +
	`"additionalProperties":false}`

type undoTool struct{ spec }

func newUndoTool() Tool {
	return &undoTool{spec{
		name: UndoConfigTool,
		description: "Undo a configuration job (execute_multiple_device_config_commands, execute_vpcs_commands or an earlier undo): " +
			"bring its devices back to the configuration read before it. The lines are computed per platform from the job's " +
			"reads before and after, shown to the user for approval like any configuration, then applied and read back; the " +
			"result says per device whether it is back to the configuration before the job. A device changed since the job " +
			"is shown as such in the plan.",
		schema:   undoSchema,
		modes:    labOnly,
		mutating: true,
	}}
}

// UndoArgs are an undo call's arguments.
type UndoArgs struct {
	projectArg
	Job         string   `json:"job"`
	DeviceNames []string `json:"device_names"`
}

// DecodeUndoArgs reads and checks an undo call's arguments.
func DecodeUndoArgs(env Env, raw json.RawMessage) (UndoArgs, error) {
	var a UndoArgs
	if err := decodeArgs(raw, &a); err != nil {
		return a, err
	}
	if err := a.check(env); err != nil {
		return a, err
	}
	a.Job = strings.TrimSpace(a.Job)
	if len(a.DeviceNames) > maxDevicesPerCall {
		return a, fmt.Errorf("at most %d devices per call (got %d)", maxDevicesPerCall, len(a.DeviceNames))
	}
	return a, nil
}

// UndoDevice is one device of the job being undone, as the job's records hold it.
type UndoDevice struct {
	// NodeID and Name are the node as the job knew it.
	NodeID, Name string
	// ReadCommand printed Before and After, the configuration read before and after the job.
	ReadCommand   string
	Before, After string
	// Problem says why the job's reads cannot be used ("" when both are there).
	Problem string
}

// UndoSource is the configuration job being undone.
type UndoSource struct {
	JobID   string
	Devices []UndoDevice
}

// PlanUndo plans an undo of src: per device (those named, or all), the node it is now (by
// name, since a restored snapshot gives new ids), the profile that read it, and the lines that
// bring its configuration back to before. A device the lines cannot be computed for fails in
// the plan; one the job did not change needs nothing. The lines pass the safety policy like
// any other. A non-nil Result is a whole-call failure.
func PlanUndo(ctx context.Context, env Env, src UndoSource, names []string, policy *devices.Policy) (DevicePlan, *Result) {
	plan := DevicePlan{Tool: UndoConfigTool, Undo: &domain.UndoOf{JobID: src.JobID, Nodes: map[string]string{}}}
	chosen, err := chooseUndoDevices(src, names)
	if err != nil {
		r := Failure("%v", err)
		return plan, &r
	}
	topo, policy, fail := planningContext(ctx, env, policy)
	if fail != nil {
		return plan, fail
	}
	listed := make([]deviceConfig, len(chosen))
	for i, d := range chosen {
		listed[i] = deviceConfig{DeviceName: d.Name}
	}
	templates := templateNames(ctx, env, topo, listed)
	for _, d := range chosen {
		n, err := topo.findNode(d.Name)
		if err != nil {
			if n, err = topo.findNode(d.NodeID); err != nil {
				plan.Failed = append(plan.Failed, failed(d.NodeID, d.Name, fmt.Sprintf("%s is not in the project any more, so job %s cannot be undone on it", d.Name, src.JobID)))
				continue
			}
		}
		job, left, item := undoJob(d, n, templates[n.TemplateID], env.GNS3Host, src.JobID, policy)
		if item != nil {
			plan.Failed = append(plan.Failed, *item)
			continue
		}
		plan.Jobs = append(plan.Jobs, job)
		plan.Undo.Nodes[n.NodeID] = d.NodeID
		if len(left) > 0 {
			if plan.Undo.Left == nil {
				plan.Undo.Left = map[string][]string{}
			}
			plan.Undo.Left[n.NodeID] = left
		}
	}
	return plan, nil
}

// undoJob is one device's part of an undo and the changes its lines leave, or the item that
// says why it has none.
func undoJob(d UndoDevice, n *gns3.Node, templateName, gns3Host, jobID string, policy *devices.Policy) (DeviceJob, []string, *Item) {
	fail := func(format string, args ...any) (DeviceJob, []string, *Item) {
		it := failed(n.NodeID, n.Name, fmt.Sprintf(format, args...))
		return DeviceJob{}, nil, &it
	}
	if d.Problem != "" {
		return fail("job %s cannot be undone on %s: %s", jobID, n.Name, d.Problem)
	}
	tool := ConfigCommandsTool
	if n.NodeType == "vpcs" {
		tool = VPCSCommandsTool
	}
	job, problem := deviceJob(n, templateName, gns3Host, tool)
	if problem != "" {
		return fail("%s", problem)
	}
	profile := devices.ReadBy(d.ReadCommand, d.After)
	if p, err := devices.ProfileByName(job.Platform); err == nil && p.ConfigCommand() == d.ReadCommand {
		profile = p
	}
	if profile == nil {
		return fail("no platform profile reads its configuration with %q, so the lines that undo job %s cannot be computed", d.ReadCommand, jobID)
	}
	u, err := profile.UndoLines(d.Before, d.After)
	if err != nil {
		return fail("%v", err)
	}
	if len(u.Lines) == 0 {
		msg := fmt.Sprintf("nothing to undo: job %s left its configuration as it found it", jobID)
		if len(u.Left) > 0 {
			return fail("job %s cannot be undone on %s: %s", jobID, n.Name, strings.Join(u.Left, "; "))
		}
		it := ok(n.NodeID, n.Name, msg)
		return DeviceJob{}, nil, &it
	}
	job.Platform = profile.Name
	for _, l := range u.Lines {
		if ok, reason := policy.Check(l); !ok {
			job.Blocked = append(job.Blocked, BlockedCommand{Command: l, Reason: reason})
			continue
		}
		if ok, reason := policy.CheckPlatform(job.Platform, l); !ok {
			job.Blocked = append(job.Blocked, BlockedCommand{Command: l, Reason: reason})
			continue
		}
		job.Commands = append(job.Commands, l)
	}
	return job, u.Left, nil
}

// chooseUndoDevices picks the job's devices the call names (all when it names none); a name
// the job has no device of is refused with the names it has.
func chooseUndoDevices(src UndoSource, names []string) ([]UndoDevice, error) {
	if len(src.Devices) == 0 {
		return nil, fmt.Errorf("job %s changed no device, so there is nothing to undo", src.JobID)
	}
	if len(names) == 0 {
		return src.Devices, nil
	}
	var out []UndoDevice
	var unknown []string
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		found := false
		for _, d := range src.Devices {
			if strings.EqualFold(d.Name, name) || d.NodeID == name {
				found = true
				if !seen[d.NodeID] {
					seen[d.NodeID] = true
					out = append(out, d)
				}
				break
			}
		}
		if !found {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		have := make([]string, len(src.Devices))
		for i, d := range src.Devices {
			have[i] = d.Name
		}
		return nil, fmt.Errorf("job %s has no device %s; its devices are: %s", src.JobID, strings.Join(unknown, ", "), strings.Join(have, ", "))
	}
	return out, nil
}
