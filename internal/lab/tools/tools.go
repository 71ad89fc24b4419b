// Package tools holds the tools the copilot's model can call: their JSON
// schemas, argument validation, execution against GNS3 with the calling
// user's token, the mode each tool belongs to, and GNS3's tool response format
// {success,total,successful,failed,data,error,metadata}.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/capture"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// FormatVersion is the version of the standard response format, reported in every result as
// metadata.version, the key and value GNS3's tool response format gives.
const FormatVersion = "v1.0"

// Item statuses.
const (
	StatusSuccess = "success"
	StatusFailed  = "failed"
	// StatusPartial marks a device on which every allowed command ran but some were blocked.
	StatusPartial = "partial_success"
)

// Item is the result for one node, link, template or device; a device plan's failed devices
// are items too.
type Item = domain.ResultItem

// Result is what every tool returns.
type Result struct {
	Success    bool           `json:"success"`
	Total      int            `json:"total"`
	Successful int            `json:"successful"`
	Failed     int            `json:"failed"`
	Data       []Item         `json:"data"`
	Error      string         `json:"error,omitempty"`
	Metadata   map[string]any `json:"metadata"`
}

// MarshalJSON keeps data and metadata as [] and {} rather than null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	if r.Data == nil {
		r.Data = []Item{}
	}
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	return marshalPlain(plain(r))
}

// marshalPlain encodes without HTML escaping: results are read by a model,
// and "PC1 e0 <-> PC2 e0" must not become "\u003c-\u003e".
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// JSON renders the result as the tool message content the model reads
// (json.Marshal of a Result re-escapes <, > and &; this does not).
func (r Result) JSON() string {
	b, err := marshalPlain(r)
	if err != nil {
		return fmt.Sprintf(`{"success":false,"total":0,"successful":0,"failed":0,"data":[],"error":%q,"metadata":{}}`, err.Error())
	}
	return string(b)
}

// Failure is a whole-call failure (bad arguments, project unreachable…).
func Failure(format string, args ...any) Result {
	return Result{Data: []Item{}, Error: fmt.Sprintf(format, args...), Metadata: map[string]any{}}
}

// Collect builds a result from per-item outcomes; success means none failed.
func Collect(items []Item) Result {
	r := Result{Data: items, Total: len(items), Metadata: map[string]any{}}
	if r.Data == nil {
		r.Data = []Item{}
	}
	partial := 0
	for _, it := range items {
		switch it.Status {
		case StatusSuccess:
			r.Successful++
		case StatusPartial:
			// Counted with the failed (the format has two buckets), but it did run.
			r.Failed++
			partial++
		default:
			r.Failed++
		}
	}
	r.Success = r.Failed == 0
	if r.Failed > 0 && r.Successful == 0 && partial == 0 && len(items) > 0 {
		r.Error = fmt.Sprintf("all %d item(s) failed", r.Failed)
	}
	return r
}

func ok(id, name, result string) Item {
	return Item{ID: id, Name: name, Status: StatusSuccess, Result: result}
}

func failed(id, name, err string) Item {
	return Item{ID: id, Name: name, Status: StatusFailed, Error: err}
}

// Mode selects the tool set and system prompt of a chat.
type Mode string

// Modes.
const (
	TeachingAssistant Mode = domain.ModeTeachingAssistant
	LabAutomation     Mode = domain.ModeLabAutomation
	// TroubleshootingInjection breaks the lab on purpose for a student to repair. Only the
	// inject route starts it; what it does is kept from the student (see IsPrivateMode).
	TroubleshootingInjection Mode = domain.ModeTroubleshootingInjection
)

// Modes lists every mode.
var Modes = []Mode{TeachingAssistant, LabAutomation, TroubleshootingInjection}

// IsPrivateMode reports whether a turn of this mode is hidden from the student: its tool
// arguments, results and text would tell which fault was injected.
func IsPrivateMode(mode string) bool { return Mode(mode) == TroubleshootingInjection }

// ParseMode accepts a mode name; "" means the default, teaching_assistant.
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", TeachingAssistant:
		return TeachingAssistant, nil
	case LabAutomation:
		return LabAutomation, nil
	case TroubleshootingInjection:
		return TroubleshootingInjection, nil
	}
	return "", fmt.Errorf("unknown copilot mode %q: use %q, %q or %q", s, TeachingAssistant, LabAutomation, TroubleshootingInjection)
}

// Progress is one per-node or per-device progress report while a tool runs
// (published as a tool_progress event).
type Progress struct {
	ItemID   string `json:"item_id"`
	ItemName string `json:"item_name"`
	Status   string `json:"status"`
	Message  string `json:"message,omitempty"`
}

// Env is what a tool run needs from its caller.
type Env struct {
	ProjectID string
	GNS3      *gns3.Client // bound to the calling user's token
	GNS3Host  string       // replaces console_host 0.0.0.0 / ::
	// Attempt is the activity attempt (1 = first). A create on a later
	// attempt first checks whether the earlier one already did the work.
	Attempt  int
	Progress func(Progress) // may be nil
	// Topology is the live topology; nil reads GNS3 for every tool call.
	Topology TopologyReader
	// RecordFault stores what an injection turn broke (record_injected_fault); nil elsewhere.
	RecordFault FaultRecorder
	// CaptureChecks are the skills' packet-analysis checks the capture analysis adds to its own.
	CaptureChecks []capture.Check
	// Console reaches nodes' consoles for a lab tool's own checks (the traffic check after a
	// link's conditions are cleared); nil where consoles cannot be reached.
	Console Console
	// Mode is the mode the call runs in (Registry.Execute sets it).
	Mode Mode
}

func (e Env) progress(id, name, status, msg string) {
	e.Report(Progress{ItemID: id, ItemName: name, Status: status, Message: msg})
}

// Report puts a step on the call's card, where it has one.
func (e Env) Report(p Progress) {
	if e.Progress != nil {
		e.Progress(p)
	}
}

func (e Env) retried() bool { return e.Attempt > 1 }

func (e Env) gns3Host() string {
	if e.GNS3Host != "" {
		return e.GNS3Host
	}
	if s := e.server(); s != nil {
		return s.Host()
	}
	return ""
}

// server is the GNS3 server the user's client talks to; nil when there is none.
func (e Env) server() *gns3.Server {
	if e.GNS3 == nil {
		return nil
	}
	return e.GNS3.Server()
}

// Tool is one function the model can call.
type Tool interface {
	Name() string
	Description() string
	Parameters() json.RawMessage // JSON schema of the arguments object
	Modes() []Mode
	Mutating() bool   // changes the topology: refresh the context after it
	Idempotent() bool // safe to retry blindly
}

// Runner is a tool that runs in one call; every tool but the device tools (see domain.IsDeviceTool).
type Runner interface {
	Tool
	Run(ctx context.Context, env Env, args json.RawMessage) Result
}

// Previewer is a destructive tool that resolves its call's targets before it runs, with the
// same code its run resolves them with: it says what the call would do to the lab as it is now
// (the approval's plan shows it), or returns why it cannot run as asked (an unknown snapshot,
// node or link, naming those there are), and then text naming what was asked. It reads and
// changes nothing. Registry.Check is how callers use it.
type Previewer interface {
	Preview(ctx context.Context, env Env, args json.RawMessage) (string, error)
}

// spec carries the static description shared by every tool here.
type spec struct {
	name        string
	description string
	schema      string
	modes       []Mode
	mutating    bool
	idempotent  bool
}

func (s spec) Name() string                { return s.name }
func (s spec) Description() string         { return s.description }
func (s spec) Parameters() json.RawMessage { return json.RawMessage(s.schema) }
func (s spec) Modes() []Mode               { return append([]Mode(nil), s.modes...) }
func (s spec) Mutating() bool              { return s.mutating }
func (s spec) Idempotent() bool            { return s.idempotent }

var (
	bothModes = []Mode{TeachingAssistant, LabAutomation}
	labOnly   = []Mode{LabAutomation}
	// Injection reads the lab and changes device configurations and link conditions; it never
	// adds, removes or restores nodes and links.
	readingModes  = []Mode{TeachingAssistant, LabAutomation, TroubleshootingInjection}
	changingModes = []Mode{LabAutomation, TroubleshootingInjection}
	injectionOnly = []Mode{TroubleshootingInjection}
)
