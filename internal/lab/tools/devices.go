package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Names of the device tools: they talk to the nodes' consoles rather than to GNS3's API. They
// have no Run: a call is planned with PlanDevices and run by the device activities, one per
// device, so a crash repeats no device's work (domain.IsDeviceTool tells them).
const (
	ShowCommandsTool   = domain.ShowCommandsTool
	ConfigCommandsTool = domain.ConfigCommandsTool
	VPCSCommandsTool   = domain.VPCSCommandsTool
)

const (
	maxDevicesPerCall  = 100
	maxCommandsPerCall = 100
	maxCommandLength   = 1000
)

// The plan's types are the vocabulary's: the device activities' workflow carries them through
// its history as they are.
type (
	// BlockedCommand is a command the safety policy refused; it is never sent.
	BlockedCommand = domain.BlockedCommand
	// DeviceJob is what one device is asked to do within a tool call.
	DeviceJob = domain.DeviceJob
	// DevicePlan is a validated device tool call: the devices that will be contacted, and the
	// ones that failed before any connection (unknown name, stopped node, wrong console type).
	DevicePlan = domain.DevicePlan
)

// DeviceOutcome is what happened on one device.
type DeviceOutcome struct {
	NodeID  string                  `json:"node_id"`
	Name    string                  `json:"name"`
	Results []devices.CommandResult `json:"results"`
	Blocked []BlockedCommand        `json:"blocked,omitempty"`
	// Err is a failure of the device as a whole: busy, unreachable, unknown platform.
	Err string `json:"error,omitempty"`
}

const deviceSchema = `{"type":"object","properties":{` +
	`"device_configs":{"type":"array","minItems":1,"maxItems":100,"description":"One entry per device.","items":{"type":"object","properties":{` +
	`"device_name":{"type":"string","description":"The node's name as in the topology, or its node_id."},` +
	`"commands":{"type":"array","minItems":1,"maxItems":100,"items":{"type":"string"},"description":"%s"},` +
	`"wait_for":` + deviceWaitForSchema + `},` +
	`"required":["device_name","commands"],"additionalProperties":false}},` +
	`"wait_for":` + waitForSchema + `},` +
	`"required":["device_configs"],"additionalProperties":false}`

type deviceTool struct {
	spec
	config bool
	vpcs   bool
	// params is the schema offered to the model, built on first use: every model call of every
	// turn offers it.
	params func() json.RawMessage
}

func newDeviceTools() []Tool {
	ts := []*deviceTool{
		{spec: spec{
			name: ShowCommandsTool,
			description: "Run read-only show/display commands on one or more devices (routers, switches, PCs, Linux nodes) through their " +
				"telnet consoles, all devices at once. Each device returns the output of every command. Nodes must be started. " +
				"Forbidden: traceroute/tracert/tracepath, ping -f, debug, test, and anything that reloads, erases or reformats a device. " +
				boundedPing,
			schema:     fmt.Sprintf(deviceSchema, "Show/display commands, e.g. \\\"show ip interface brief\\\"."),
			modes:      readingModes,
			idempotent: true,
		}},
		{config: true, spec: spec{
			name: ConfigCommandsTool,
			description: "Apply configuration commands to one or more devices. The tool enters configuration mode itself " +
				"(do not send 'configure terminal' or 'end') and leaves it afterwards; a multi-line string is split into lines. " +
				"It stops at the first line a device rejects and reports it. Not for VPCS: use execute_vpcs_commands. " +
				"FRRouting (vtysh) takes CIDR addresses (\"interface eth0\", \"ip address 10.1.0.1/24\"); VyOS takes \"set …\" lines " +
				"and is committed for you; RouterOS takes \"/ip address add address=10.1.0.1/24 interface=ether1\". " +
				"Save only when the user asks: \"write memory\" on IOS-like and FRR, \"save\" on VyOS.",
			schema:   fmt.Sprintf(deviceSchema, "Configuration lines, e.g. \\\"interface GigabitEthernet0/0\\\", \\\"ip address 10.0.0.1 255.255.255.0\\\"."),
			modes:    changingModes,
			mutating: true,
		}},
		{vpcs: true, spec: spec{
			name: VPCSCommandsTool,
			description: "Run VPCS commands on VPCS PCs, e.g. \"ip 10.0.0.1/24 10.0.0.254\" (takes about 3 s), \"show ip\", " +
				"\"ping 10.0.0.2 -c 3\" (about 1 s per packet), \"save\". Never \"quit\" (it kills the node).",
			schema:   fmt.Sprintf(deviceSchema, "VPCS commands."),
			modes:    changingModes,
			mutating: true,
		}},
	}
	out := make([]Tool, len(ts))
	for i, t := range ts {
		t.params = sync.OnceValue(t.buildParameters)
		out[i] = t
	}
	return out
}

// boundedPing tells the model how to ask each platform for a ping that ends by itself, and
// what happens to one that does not.
const boundedPing = "Ask for bounded pings: IOS/Arista/Ruijie \"ping 10.1.0.2 repeat 3\", Linux/OpenWrt \"ping -c 3 10.1.0.2\", " +
	"Junos/VyOS \"ping 10.1.0.2 count 3\", RouterOS \"/ping 10.1.0.2 count=3\", Huawei \"ping -c 3 10.1.0.2\". " +
	"FRRouting's vtysh \"ping 10.1.0.2\" takes no count. A command that never ends by itself (such a ping, \"| refresh\", tail -f) " +
	"is stopped with Ctrl-C after 5 s and returns its output and statistics, marked as stopped."

type deviceArgs struct {
	projectArg
	DeviceConfigs []deviceConfig `json:"device_configs"`
	WaitFor       []waitForArg   `json:"wait_for"` // for every device
}

type deviceConfig struct {
	DeviceName     string       `json:"device_name"`
	Commands       []string     `json:"commands"`
	ConfigCommands []string     `json:"config_commands"` // the reference's name for the config tool
	WaitFor        []waitForArg `json:"wait_for"`
}

// configModeWords are refused by the show tool: they would leave a console in configuration mode.
var configModeWords = []string{"configure", "conf", "system-view", "sys", "edit", "config"}

// PlanDevices validates a device tool call and resolves its devices against the current
// topology. A non-nil Result is a whole-call failure to report as the tool's result.
func PlanDevices(ctx context.Context, env Env, name string, args json.RawMessage, policy *devices.Policy) (DevicePlan, *Result) {
	plan := DevicePlan{Tool: name}
	a, err := deviceCallArgs(env, args)
	if err != nil {
		r := failWith(err)
		return plan, &r
	}
	topo, policy, fail := planningContext(ctx, env, policy)
	if fail != nil {
		return plan, fail
	}
	waits, err := checkWaits(a, policy)
	if err != nil {
		r := failWith(err)
		return plan, &r
	}
	p := devicePlanner{tool: name, topo: topo, policy: policy, gns3Host: env.GNS3Host,
		templates: templateNames(ctx, env, topo, a.DeviceConfigs), seen: map[string]bool{}}
	for i, dc := range a.DeviceConfigs {
		job, refused := p.plan(i, dc)
		if refused != nil {
			plan.Failed = append(plan.Failed, *refused)
			continue
		}
		job.Wait = waits.forDevice(i)
		plan.Jobs = append(plan.Jobs, job)
	}
	return plan, nil
}

// planningContext is what planning devices needs beside the call: the project's topology, to
// resolve names, and the command policy (the default one when none is given).
func planningContext(ctx context.Context, env Env, policy *devices.Policy) (*topology, *devices.Policy, *Result) {
	topo, err := loadTopology(ctx, env)
	if err != nil {
		r := Failure("could not read the project: %v", explain(err))
		return nil, nil, &r
	}
	if policy == nil {
		policy = devices.DefaultPolicy()
	}
	return topo, policy, nil
}

// deviceCallArgs decodes a device tool call and checks its size.
func deviceCallArgs(env Env, args json.RawMessage) (deviceArgs, error) {
	var a deviceArgs
	if err := decodeDeviceArgs(args, &a); err != nil {
		return a, err
	}
	if err := a.check(env); err != nil {
		return a, err
	}
	if len(a.DeviceConfigs) == 0 {
		return a, errors.New("device_configs must list at least one device")
	}
	if len(a.DeviceConfigs) > maxDevicesPerCall {
		return a, fmt.Errorf("at most %d devices per call (got %d)", maxDevicesPerCall, len(a.DeviceConfigs))
	}
	return a, nil
}

// devicePlanner turns the entries of one device tool call into jobs.
type devicePlanner struct {
	tool      string
	topo      *topology
	policy    *devices.Policy
	gns3Host  string
	templates map[string]string // template ID → name
	seen      map[string]bool   // node IDs already planned
}

// plan makes the job of the i-th entry, or the item that says why that device is refused.
func (p *devicePlanner) plan(i int, dc deviceConfig) (DeviceJob, *Item) {
	reject := func(id, name, format string, args ...any) (DeviceJob, *Item) {
		if name == "" {
			name = fmt.Sprintf("device_configs[%d]", i)
		}
		if id == "" {
			id = name
		}
		it := failed(id, name, fmt.Sprintf(format, args...))
		return DeviceJob{}, &it
	}
	if strings.TrimSpace(dc.DeviceName) == "" {
		return reject("", "", "device_name is empty")
	}
	n, err := p.topo.findNode(dc.DeviceName)
	if err != nil {
		return reject("", dc.DeviceName, "%v", err)
	}
	if p.seen[n.NodeID] {
		return reject(n.NodeID, n.Name, "the device is listed twice; put all its commands in one entry")
	}
	p.seen[n.NodeID] = true
	cmds := dc.Commands
	if len(cmds) == 0 {
		cmds = dc.ConfigCommands
	}
	lines, err := commandLines(cmds, p.tool == ConfigCommandsTool)
	if err != nil {
		return reject(n.NodeID, n.Name, "%v", err)
	}
	job, problem := deviceJob(n, p.templates[n.TemplateID], p.gns3Host, p.tool)
	if problem != "" {
		return reject(n.NodeID, n.Name, "%s", problem)
	}
	for _, c := range lines {
		if reason, blocked := p.screen(job.Platform, c); blocked {
			job.Blocked = append(job.Blocked, BlockedCommand{Command: c, Reason: reason})
			continue
		}
		job.Commands = append(job.Commands, c)
	}
	return job, nil
}

// screen tells why a command must not be sent: the safety policy, the platform's own policy,
// or a show call that would enter configuration mode.
func (p *devicePlanner) screen(platform, c string) (reason string, blocked bool) {
	if ok, reason := p.policy.Check(c); !ok {
		return reason, true
	}
	if platform != "" {
		if ok, reason := p.policy.CheckPlatform(platform, c); !ok {
			return reason, true
		}
	}
	if p.tool == ShowCommandsTool && entersConfigMode(c) {
		return "configuration commands go through execute_multiple_device_config_commands (lab automation mode)", true
	}
	return "", false
}

func commandLines(cmds []string, split bool) ([]string, error) {
	var out []string
	for _, c := range cmds {
		parts := []string{c}
		if split {
			parts = strings.Split(strings.ReplaceAll(c, "\r\n", "\n"), "\n")
		}
		for _, p := range parts {
			p = strings.TrimRight(p, " \t\r")
			if strings.TrimSpace(p) == "" {
				continue
			}
			if strings.ContainsAny(p, "\n\r") {
				return nil, fmt.Errorf("a command contains a line break; send one command per list entry")
			}
			if len(p) > maxCommandLength {
				return nil, fmt.Errorf("a command is longer than %d characters", maxCommandLength)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no commands given")
	}
	if len(out) > maxCommandsPerCall {
		return nil, fmt.Errorf("at most %d commands per device (got %d)", maxCommandsPerCall, len(out))
	}
	return out, nil
}

func entersConfigMode(cmd string) bool {
	f := strings.Fields(strings.ToLower(cmd))
	if len(f) == 0 {
		return false
	}
	for _, w := range configModeWords {
		if f[0] == w {
			return true
		}
	}
	return false
}

// imageProperties are the node properties that name image files: QEMU's disks and CD-ROM,
// Docker's and Dynamips' image, IOU's path.
var imageProperties = []string{"hda_disk_image", "hdb_disk_image", "hdc_disk_image", "hdd_disk_image", "cdrom_image", "image", "path"}

// templateNames maps the template IDs of the listed nodes to template names, so detection can
// use them (GNS3 v3.0 nodes carry no tags). It reads the template list only when a listed node
// that will be connected to (it is started) has a template, no platform tag and a type that does
// not decide its platform alone: a call on VPCS, or on stopped nodes it refuses, makes no GNS3
// request with the live topology. When the list cannot be read, detection goes on with the
// other clues.
func templateNames(ctx context.Context, env Env, topo *topology, listed []deviceConfig) map[string]string {
	need := false
	for _, dc := range listed {
		n, err := topo.findNode(dc.DeviceName)
		if err == nil && n.Status == gns3.NodeStarted && n.TemplateID != "" && !hasPlatformTag(n.Tags) && !devices.NodeTypeDecides(n.NodeType) {
			need = true
			break
		}
	}
	if !need || env.GNS3 == nil {
		return nil
	}
	ts, err := env.GNS3.ListTemplates(ctx)
	if err != nil {
		return nil
	}
	names := make(map[string]string, len(ts))
	for _, t := range ts {
		names[t.TemplateID] = t.Name
	}
	return names
}

func hasPlatformTag(tags []string) bool {
	for _, tag := range tags {
		k, _, ok := strings.Cut(tag, ":")
		if k = strings.ToLower(strings.TrimSpace(k)); ok && (k == "device_type" || k == "platform") {
			return true
		}
	}
	return false
}

// deviceJob checks that a node can be reached through its console and describes it for the
// console driver: everything GNS3 says of the node that tells its platform.
func deviceJob(n *gns3.Node, templateName, gns3Host, tool string) (DeviceJob, string) {
	t := nodeTarget(n, templateName)
	job := DeviceJob{NodeID: n.NodeID, Name: n.Name, Target: domain.DeviceTarget(t), Config: tool == ConfigCommandsTool}
	if tool == VPCSCommandsTool {
		if n.NodeType != "vpcs" {
			return job, fmt.Sprintf("%s is a %s node, not a VPCS PC; use %s", n.Name, n.NodeType, ShowCommandsTool)
		}
		job.Platform = "vpcs"
	}
	if tool == ConfigCommandsTool && n.NodeType == "vpcs" {
		return job, fmt.Sprintf("%s is a VPCS PC, which has no configuration mode; use %s", n.Name, VPCSCommandsTool)
	}
	if n.Status != gns3.NodeStarted {
		return job, fmt.Sprintf("%s is %s; start it first (start_gns3_node)", n.Name, n.Status)
	}
	if _, err := t.ConsoleAddr(gns3Host); err != nil {
		return job, err.Error()
	}
	if job.Platform == "" {
		if p, err := devices.DetectPlatform(t); err == nil {
			job.Platform = p.Name
		}
		// Otherwise the driver tells the platform from the prompt when it connects.
	}
	return job, ""
}

// DeviceResult turns what happened on every device into the standard result: one item per
// device, in the order the model listed them.
func DeviceResult(plan DevicePlan, outcomes []DeviceOutcome) Result {
	byID := map[string]DeviceOutcome{}
	for _, o := range outcomes {
		byID[o.NodeID] = o
	}
	items := append([]Item(nil), plan.Failed...)
	for _, job := range plan.Jobs {
		o, ok := byID[job.NodeID]
		if !ok {
			o = DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Blocked: job.Blocked, Err: "the device was not reached"}
		}
		items = append(items, deviceItem(job, o))
	}
	return Collect(items)
}

func deviceItem(job DeviceJob, o DeviceOutcome) Item {
	var out strings.Builder
	var problems []string
	for _, r := range o.Results {
		fmt.Fprintf(&out, "%s> %s\n", job.Name, r.Command)
		if r.Output != "" {
			out.WriteString(strings.TrimRight(r.Output, "\n"))
			out.WriteString("\n")
		}
		if r.Failed {
			msg := r.Error
			if msg == "" {
				msg = "the device reported an error"
			}
			problems = append(problems, fmt.Sprintf("%q: %s", r.Command, msg))
		}
	}
	blocked := o.Blocked
	if len(blocked) == 0 {
		blocked = job.Blocked
	}
	for _, b := range blocked {
		problems = append(problems, fmt.Sprintf("%q was blocked and not sent: %s", b.Command, b.Reason))
	}
	if o.Err != "" {
		problems = append(problems, o.Err)
	}
	it := Item{ID: job.NodeID, Name: job.Name, Status: StatusSuccess, Result: strings.TrimRight(out.String(), "\n")}
	switch {
	case len(problems) == 0:
	case len(o.Results) > 0 && o.Err == "" && len(blocked) > 0 && len(blocked) == len(problems):
		// Everything that was allowed ran; only the blocked commands are missing.
		it.Status = StatusPartial
		it.Error = strings.Join(problems, "; ")
	default:
		it.Status = StatusFailed
		it.Error = strings.Join(problems, "; ")
	}
	if it.Result == "" && it.Status == StatusSuccess {
		it.Result = "(no output)"
	}
	return it
}

// DeviceTimeout bounds one device's whole job: the sum of its commands' own timeouts plus
// connecting, so a long ping is allowed and a hung console is not.
func DeviceTimeout(job DeviceJob) time.Duration {
	d := 30 * time.Second
	p, err := devices.ProfileByName(job.Platform)
	for _, c := range job.Commands {
		if err == nil && p != nil {
			d += p.TimeoutFor(c)
		} else {
			d += 30 * time.Second
		}
	}
	return d
}
