package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
}

// FaultRecorder stores a fault for the turn the tool runs in; the caller (the worker's tool
// activity) binds it to the turn and the tool call, so a retried call stores it once.
type FaultRecorder func(ctx context.Context, f InjectedFault) error

const recordFaultSchema = `{"type":"object","properties":{` +
	`"device_name":{"type":"string","description":"The node you changed, by name or node_id."},` +
	`"lines":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"string"},"description":"The exact commands you sent to break it."},` +
	`"description":{"type":"string","description":"One or two sentences for the teacher: what is broken and what the student will notice."},` +
	`"verify_command":{"type":"string","description":"A read-only command (show/display, or show ip on VPCS) run on the device to check the repair."},` +
	`"verify_expect":{"type":"string","description":"Text the command's output contains only once the fault is fixed, e.g. 10.0.0.1/24."},` +
	`"hints":{"type":"array","maxItems":5,"items":{"type":"string"},"description":"Hints from vague to nearly the answer (optional with a scenario, whose hints come first)."},` +
	`"scenario":{"type":"string","description":"The id of the fault scenario you injected, when you chose one from the list in your instructions."}},` +
	`"required":["device_name","lines","description","verify_command","verify_expect"],"additionalProperties":false}`

type recordFaultTool struct{ spec }

func newRecordFaultTool() Runner {
	return &recordFaultTool{spec{
		name: RecordFaultTool,
		description: "Record a fault you injected, for the exercise: the device, the lines you sent, a description for the teacher, " +
			"how to verify the repair (a read-only command and text its output contains once fixed) and escalating hints. " +
			"Call it once per fault, after the device tools applied it. The student never sees this record.",
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
		Description   string   `json:"description"`
		VerifyCommand string   `json:"verify_command"`
		VerifyExpect  string   `json:"verify_expect"`
		Hints         []string `json:"hints"`
		Scenario      string   `json:"scenario"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return failWith(err)
	}
	f, err := checkFault(a.DeviceName, a.Lines, a.Description, a.VerifyCommand, a.VerifyExpect, a.Hints, strings.TrimSpace(a.Scenario))
	if err != nil {
		return Failure("%v", err)
	}
	if env.RecordFault == nil {
		return Failure("%v", ErrNoFaultRecorder)
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

func checkFault(device string, lines []string, desc, cmd, expect string, hints []string, scenario string) (InjectedFault, error) {
	f := InjectedFault{Device: strings.TrimSpace(device), Description: strings.TrimSpace(desc),
		VerifyCommand: strings.TrimSpace(cmd), VerifyExpect: strings.TrimSpace(expect), Scenario: scenario}
	var problems []string
	if f.Device == "" {
		problems = append(problems, "device_name is empty")
	}
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			f.Lines = append(f.Lines, l)
		}
	}
	if len(f.Lines) == 0 || len(f.Lines) > maxFaultLines {
		problems = append(problems, fmt.Sprintf("lines must hold 1 to %d commands", maxFaultLines))
	}
	if f.Description == "" || len(f.Description) > maxFaultText {
		problems = append(problems, fmt.Sprintf("description must be 1 to %d characters", maxFaultText))
	}
	if f.VerifyCommand == "" || strings.ContainsAny(f.VerifyCommand, "\r\n") || len(f.VerifyCommand) > maxCommandLength {
		problems = append(problems, "verify_command must be one command on one line")
	}
	if f.VerifyExpect == "" || len(f.VerifyExpect) > maxFaultExpect {
		problems = append(problems, fmt.Sprintf("verify_expect must be 1 to %d characters", maxFaultExpect))
	}
	for _, h := range hints {
		if h = strings.TrimSpace(h); h != "" && len(h) <= maxFaultText {
			f.Hints = append(f.Hints, h)
		}
	}
	if (len(f.Hints) == 0 && f.Scenario == "") || len(f.Hints) > maxFaultHints {
		problems = append(problems, fmt.Sprintf("hints must hold 1 to %d hints of at most %d characters (none are needed with a scenario)", maxFaultHints, maxFaultText))
	}
	if len(problems) > 0 {
		return f, errors.New(strings.Join(problems, "; "))
	}
	return f, nil
}
