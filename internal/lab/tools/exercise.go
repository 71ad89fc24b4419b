package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// RecordFaultTool is how the model of an injection turn reports what it broke. Its arguments
// are the exercise's secret: they are stored privately and never shown to the student.
const RecordFaultTool = "record_injected_fault"

// Bounds of a fault record, so a confused model cannot store a transcript's worth of text.
const (
	maxFaultLines  = 50
	maxFaultHints  = 5
	maxFaultText   = 2000
	maxFaultExpect = 500
)

// InjectedFault is one fault an injection turn put into the lab, and how to tell it is fixed.
type InjectedFault struct {
	NodeID      string
	Device      string
	Lines       []string
	Description string
	// VerifyCommand is a read-only command whose output contains VerifyExpect once the fault
	// is repaired.
	VerifyCommand string
	VerifyExpect  string
	Hints         []string
	// Scenario is the skills' scenario the fault was made from, "" when the model chose freely;
	// its hints come first in the exercise.
	Scenario string
	// Link is set for a fault put on a link's conditions (set_gns3_link_conditions): it is
	// repaired when the link has no conditions left and traffic crosses it at its normal latency
	// (CheckLink). Device then names the link.
	Link *FaultLink
}

// FaultLink is the link a fault was put on: its two nodes by name (ids change when a snapshot is
// restored), its id when recorded, and its conditions in words.
type FaultLink struct {
	NodeA, NodeB string
	LinkID       string
	Conditions   string
	// Kinds are the condition types set (GNS3's filter types, and "suspend"), sorted.
	Kinds []string
}

// LinkName names a link by its nodes, as hints and records do.
func LinkName(a, b string) string { return a + "–" + b }

// FaultRecorder stores a fault for the turn the tool runs in; the caller (the worker's tool
// activity) binds it to the turn and the tool call, so a retried call stores it once.
type FaultRecorder func(ctx context.Context, f InjectedFault) error

const recordFaultSchema = `{"type":"object","properties":{` +
	`"device_name":{"type":"string","description":"A device fault: the node you changed, by name or node_id."},` +
	`"lines":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"string"},"description":"A device fault: the exact commands you sent to break it."},` +
	`"link":{"type":"object","description":"A link fault (instead of device_name and lines): the link whose conditions you set with set_gns3_link_conditions.",` +
	`"properties":{"node_a":{"type":"string"},"node_b":{"type":"string"},"link_id":{"type":"string"}},"additionalProperties":false},` +
	`"description":{"type":"string","description":"One or two sentences for the teacher: what is broken and what the student will notice."},` +
	`"verify_command":{"type":"string","description":"A device fault: a read-only command (show/display, or show ip on VPCS) run on the device to check the repair."},` +
	`"verify_expect":{"type":"string","description":"A device fault: text the command's output contains only once the fault is fixed, e.g. 10.0.0.1/24."},` +
	`"hints":{"type":"array","maxItems":5,"items":{"type":"string"},"description":"Hints from vague to nearly the answer (optional with a scenario, whose hints come first)."},` +
	`"scenario":{"type":"string","description":"The id of the fault scenario you injected, when you chose one from the list in your instructions."}},` +
	`"required":["description"],"additionalProperties":false}`

type recordFaultTool struct{ spec }

func newRecordFaultTool() Runner {
	return &recordFaultTool{spec{
		name: RecordFaultTool,
		description: "Record a fault you injected, for the exercise: the device, the lines you sent, a description for the teacher, " +
			"how to verify the repair (a read-only command and text its output contains once fixed) and escalating hints; " +
			"or, for conditions you put on a link, the link instead of the device, lines and verification (the check then " +
			"verifies the link has no conditions left and that pings cross it at its normal latency). Call it once per fault, " +
			"after the tools applied it. The student never sees this record.",
		schema: recordFaultSchema,
		modes:  injectionOnly,
	}}
}

// ExerciseTools returns the tools only an injection turn has.
func ExerciseTools() []Tool { return []Tool{newRecordFaultTool()} }

// ErrNoFaultRecorder means the tool ran where faults cannot be stored (outside the worker).
var ErrNoFaultRecorder = errors.New("faults cannot be recorded here")

func (rt *recordFaultTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var a struct {
		DeviceName    string   `json:"device_name"`
		Lines         []string `json:"lines"`
		Link          *linkRef `json:"link"`
		Description   string   `json:"description"`
		VerifyCommand string   `json:"verify_command"`
		VerifyExpect  string   `json:"verify_expect"`
		Hints         []string `json:"hints"`
		Scenario      string   `json:"scenario"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return failWith(err)
	}
	if env.RecordFault == nil {
		return Failure("%v", ErrNoFaultRecorder)
	}
	if a.Link != nil {
		return rt.recordLink(ctx, env, a.Link, a.DeviceName, a.Lines, a.VerifyCommand, a.VerifyExpect, a.Description, a.Hints, a.Scenario)
	}
	f, err := checkFault(a.DeviceName, a.Lines, a.Description, a.VerifyCommand, a.VerifyExpect, a.Hints, a.Scenario)
	if err != nil {
		return Failure("%v", err)
	}
	topo, err := loadTopology(ctx, env)
	if err != nil {
		return Failure("could not read the project: %v", explain(err))
	}
	n, err := topo.findNode(f.Device)
	if err != nil {
		return Failure("%v", err)
	}
	f.NodeID, f.Device = n.NodeID, n.Name
	if entersConfigMode(f.VerifyCommand) {
		return Failure("verify_command must be read-only (a show command); %q enters configuration mode", f.VerifyCommand)
	}
	if err := env.RecordFault(ctx, f); err != nil {
		return Failure("the fault could not be recorded: %v", err)
	}
	return Collect([]Item{ok(n.NodeID, n.Name, "fault recorded for the exercise")})
}

// recordLink records conditions put on a link: the link must have some, and the record names
// it by its nodes. A link fault has no device, lines or verification of its own.
func (rt *recordFaultTool) recordLink(ctx context.Context, env Env, ref *linkRef, device string, lines []string, cmd, expect, desc string, hints []string, scenario string) Result {
	if device != "" || len(lines) > 0 || cmd != "" || expect != "" {
		return Failure("a link fault gives link only: leave device_name, lines, verify_command and verify_expect out (the check verifies the link's conditions are cleared and pings cross it)")
	}
	if ref.LinkID == "" && (ref.NodeA == "" || ref.NodeB == "") {
		return Failure("link must give link_id, or node_a and node_b")
	}
	if v := GNS3Version(ctx, env.server()); !LinkFaultsClearable(v) {
		return Failure("%s", LinkFaultRefusal(v))
	}
	f, problems := faultTexts(desc, hints, scenario)
	if len(problems) > 0 {
		return Failure("%s", strings.Join(problems, "; "))
	}
	topo, err := loadTopology(ctx, env)
	if err != nil {
		return Failure("could not read the project: %v", explain(err))
	}
	l, err := topo.resolveLink(*ref)
	if err != nil {
		return Failure("%v", err)
	}
	if fresh, err := env.GNS3.GetLink(ctx, env.ProjectID, l.LinkID); err == nil {
		l = fresh // the live copy may not have heard of the conditions yet
	}
	cond := ConditionText(l)
	if cond == "" {
		return Failure("link %s has no conditions: set them with set_gns3_link_conditions first, then record the fault", topo.linkLine(l))
	}
	a, b := topo.nodeName(l.Nodes[0].NodeID), topo.nodeName(l.Nodes[1].NodeID)
	f.Device = LinkName(a, b)
	f.Link = &FaultLink{NodeA: a, NodeB: b, LinkID: l.LinkID, Conditions: cond, Kinds: conditionKinds(l)}
	if err := env.RecordFault(ctx, f); err != nil {
		return Failure("the fault could not be recorded: %v", err)
	}
	return Collect([]Item{ok(l.LinkID, f.Device, "link fault recorded for the exercise")})
}

func conditionKinds(l *gns3.Link) []string {
	var kinds []string
	for k, v := range l.Filters {
		if len(v) > 0 {
			kinds = append(kinds, k)
		}
	}
	if l.Suspend {
		kinds = append(kinds, "suspend")
	}
	sort.Strings(kinds)
	return kinds
}

// LinkCheck is what an exercise's check of a link fault sees: the conditions GNS3 shows on the
// link and, when a device could ping across it, whether the traffic crosses at its normal
// latency (Traffic says what was pinged and seen, or why nothing was measured).
type LinkCheck struct {
	Conditions string
	Measured   bool
	TrafficOK  bool
	Traffic    string
}

// CheckLink reads the link between two nodes, found by their names (a restored snapshot gives
// links new ids), and, when GNS3 shows no conditions on it, pings across it (see linkprobe.go);
// faultDelay is the delay the fault put on it, which a round trip left at twice it betrays. It
// changes nothing in the lab.
func CheckLink(ctx context.Context, env Env, nodeA, nodeB string, faultDelay time.Duration) (LinkCheck, error) {
	topo, err := readTopology(ctx, env.GNS3, env.ProjectID)
	if err != nil {
		return LinkCheck{}, fmt.Errorf("could not read the project: %w", explain(err))
	}
	l, err := topo.resolveLink(linkRef{NodeA: nodeA, NodeB: nodeB})
	if err != nil {
		return LinkCheck{}, err
	}
	if cond := ConditionText(l); cond != "" {
		return LinkCheck{Conditions: cond}, nil
	}
	tc := (&linkProbe{env: env, t: topo, link: l, removed: faultDelay}).check(ctx)
	return LinkCheck{Measured: tc.measured, TrafficOK: tc.ok, Traffic: tc.text}, nil
}

func checkFault(device string, lines []string, desc, cmd, expect string, hints []string, scenario string) (InjectedFault, error) {
	f, problems := faultTexts(desc, hints, scenario)
	f.Device, f.VerifyCommand, f.VerifyExpect = strings.TrimSpace(device), strings.TrimSpace(cmd), strings.TrimSpace(expect)
	if f.Device == "" {
		problems = append([]string{"device_name is empty (or give link, for a link fault)"}, problems...)
	}
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			f.Lines = append(f.Lines, l)
		}
	}
	if len(f.Lines) == 0 || len(f.Lines) > maxFaultLines {
		problems = append(problems, fmt.Sprintf("lines must hold 1 to %d commands", maxFaultLines))
	}
	if f.VerifyCommand == "" || strings.ContainsAny(f.VerifyCommand, "\r\n") || len(f.VerifyCommand) > maxCommandLength {
		problems = append(problems, "verify_command must be one command on one line")
	}
	if f.VerifyExpect == "" || len(f.VerifyExpect) > maxFaultExpect {
		problems = append(problems, fmt.Sprintf("verify_expect must be 1 to %d characters", maxFaultExpect))
	}
	if len(problems) > 0 {
		return f, errors.New(strings.Join(problems, "; "))
	}
	return f, nil
}

// faultTexts checks what every fault record has, device or link: the teacher's description
// and the hints, which a fault made from a skills scenario may leave to the scenario's.
func faultTexts(desc string, hints []string, scenario string) (InjectedFault, []string) {
	f := InjectedFault{Description: strings.TrimSpace(desc), Scenario: strings.TrimSpace(scenario)}
	var problems []string
	if f.Description == "" || len(f.Description) > maxFaultText {
		problems = append(problems, fmt.Sprintf("description must be 1 to %d characters", maxFaultText))
	}
	for _, h := range hints {
		if h = strings.TrimSpace(h); h != "" && len(h) <= maxFaultText {
			f.Hints = append(f.Hints, h)
		}
	}
	if (len(f.Hints) == 0 && f.Scenario == "") || len(f.Hints) > maxFaultHints {
		problems = append(problems, fmt.Sprintf("hints must hold 1 to %d hints of at most %d characters (none are needed with a scenario)", maxFaultHints, maxFaultText))
	}
	return f, problems
}

var delayText = regexp.MustCompile(`\bdelay (\d+) ms`)

// ConditionDelay reads the delay back from conditions as ConditionText words them; 0 when they
// have none.
func ConditionDelay(text string) time.Duration {
	m := delayText.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	ms, _ := strconv.Atoi(m[1])
	return time.Duration(ms) * time.Millisecond
}
