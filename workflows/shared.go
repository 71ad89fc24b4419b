package workflows

import (
	"fmt"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// TaskQueue is the queue workers poll and turns are started on.
const TaskQueue = "gns3-copilot"

// Workflow and activity names. Activities are registered under these names so the workflow
// does not depend on the activities package.
const (
	ChatTurnWorkflow   = "ChatTurn"
	LLMActivity        = "LLMCall"
	ToolActivity       = "RunTool"
	ToolFailedActivity = "RecordToolFailure"
	TitleActivity      = "GenerateTitle"
	FinalizeActivity   = "FinalizeTurn"
	// SnapshotInjectionActivity saves the lab before an injection turn changes it.
	SnapshotInjectionActivity = "SnapshotBeforeInjection"
	DefaultMaxSteps           = 12
	SearchAttrProjectID       = "ProjectId"
	SearchAttrSessionID       = "SessionId"
	SearchAttrUserID          = "UserId"
	SearchAttrToolName        = "ToolName"
)

// WorkflowID makes a turn readable in the Temporal UI and unique per turn.
func WorkflowID(sessionID, turnID string) string {
	return fmt.Sprintf("chat-%s-turn-%s", sessionID, turnID)
}

// TurnIDOf reads the turn id back out of a WorkflowID ("" for another workflow's id), so log
// lines of the turn's workflow and activities can carry it.
func TurnIDOf(workflowID string) string {
	if i := strings.LastIndex(workflowID, "-turn-"); i >= 0 && strings.HasPrefix(workflowID, "chat-") {
		return workflowID[i+len("-turn-"):]
	}
	return ""
}

// ChatTurnInput carries identifiers only: the transcript lives in the database and secrets live
// worker-side, so the workflow history stays small and free of tokens and keys.
type ChatTurnInput struct {
	SessionID string
	TurnID    string
	ProjectID string
	UserID    string
	Mode      string
	MaxSteps  int
	// DeviceConcurrency bounds the devices one tool call talks to at once (0: the default).
	DeviceConcurrency int
	// Approval is the operator's setting (domain.ApprovalChanges, ApprovalConfig or
	// ApprovalNever). Empty runs device tools directly, as in turns started before approvals
	// existed.
	Approval string
	// SkipApproval runs the turn without approvals whatever Approval says: an injection turn
	// breaks the lab on purpose, and nobody is asked to approve that (the forbidden-command list
	// still applies to every line).
	SkipApproval bool `json:",omitempty"`
	// ApprovalTimeout is how long an approval waits (0: DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// SearchAttributes says the cluster knows ProjectId, SessionId, UserId and ToolName (the
	// turn was started with them), so the turn may set them on its configuration jobs.
	SearchAttributes bool
	// Model names the model the turn was started with, for the activity summaries the Temporal
	// UI shows; the LLM activity chooses the model itself.
	Model string `json:",omitempty"`
	// CredentialTTL is the lifetime the API gave the turn's GNS3 credential; a turn that runs
	// with approvals renews it every half of it, so a long wait does not outlive it.
	CredentialTTL time.Duration
}

// ChatTurnResult is how the turn ended.
type ChatTurnResult struct {
	Status   string
	Error    string
	LLMCalls int64
	Steps    int
}

// WorkRef identifies the durable work an activity acts for: a chat turn, or a tool call that
// came over MCP.
type WorkRef struct {
	SessionID string
	TurnID    string
	ProjectID string
	UserID    string
	Mode      string
	// Origin names who asked, for the audit: "" for the chat page, "mcp:<client>" for an MCP
	// call (whose TurnID is then the call's id, and SessionID its MCP session).
	Origin string `json:",omitempty"`
}

// LLMInput asks for one model call. MessageIndex is where the assistant message is stored, so
// a retried attempt overwrites its own row.
type LLMInput struct {
	Turn         WorkRef
	Step         int
	MessageIndex int
	// NoTools is set on the last allowed step so the model must answer in words.
	NoTools bool
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// LLMResult is what the workflow needs to decide the next step; the text itself stays in the
// database.
type LLMResult struct {
	MessageID    string
	ToolCalls    []ToolCall
	FinishReason string
	InputTokens  int64
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens the model spent thinking, where reported.
	ReasoningTokens int64
	// CachedTokens is the part of InputTokens the provider's prompt cache served.
	CachedTokens int64
}

// ToolInput runs one tool call.
type ToolInput struct {
	Turn         WorkRef
	Call         ToolCall
	MessageIndex int
}

// ToolResult summarises a finished tool call.
type ToolResult struct {
	Success bool
}

// ToolFailureInput records a tool call whose activity failed for good, so the model still gets
// a result for it.
type ToolFailureInput struct {
	Turn         WorkRef
	Call         ToolCall
	MessageIndex int
	Error        string
}

// InjectionSnapshotInput asks for the snapshot an injection turn's exercise can be reset to.
type InjectionSnapshotInput struct {
	Turn WorkRef
}

// TitleInput asks for a session title after a completed turn.
type TitleInput struct {
	Turn WorkRef
}

// TitleResult is the generated title ("" when none was needed) and the call's usage.
type TitleResult struct {
	Title           string
	Called          bool
	InputTokens     int64
	OutputTokens    int64
	ReasoningTokens int64
	CachedTokens    int64
}

// FinalizeInput closes the turn.
type FinalizeInput struct {
	Turn         WorkRef
	Status       string
	Error        string
	LLMCalls     int64
	InputTokens  int64
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens the models spent thinking, where reported.
	ReasoningTokens int64
	// CachedTokens is the part of InputTokens the providers' prompt caches served.
	CachedTokens int64
	// Title is the title a separate title activity made (turns from before "lean-turn").
	Title string
	// GenerateTitle asks the finalizer to name the session first, as the title activity did;
	// the call's usage is added to the turn's.
	GenerateTitle bool
}

// FinalizeResult says whether the finalizer called the model for a title.
type FinalizeResult struct {
	TitleCalled bool
}

// Device tool activities: a plan, one run per device, and the aggregation into one result.
const (
	DevicePlanActivity   = "PlanDeviceTool"
	DeviceRunActivity    = "RunDevice"
	DeviceFinishActivity = "FinishDeviceTool"
	// DefaultDeviceConcurrency bounds how many devices one tool call talks to at once when its
	// input names no bound: a 200-router class in one round. What really bounds the consoles
	// open at once is the worker's process-wide limit (devices.ConsoleLimit).
	DefaultDeviceConcurrency = 256
	// legacyDeviceConcurrency is the bound calls recorded before "device-fanout" ran under.
	legacyDeviceConcurrency = 16
)

// DevicePlanResult is the validated call; Done means it already failed as a whole and its
// result is stored.
type DevicePlanResult struct {
	Plan domain.DevicePlan
	Done bool
	// Changes is set when some line would change a device's configuration (as opposed to show
	// and ping), which is what a configuration job asks approval for.
	Changes bool
}

// DeviceInput runs one device's job.
type DeviceInput struct {
	Turn ToolCallRef
	Job  domain.DeviceJob
}

// ToolCallRef names the tool call a device job belongs to.
type ToolCallRef struct {
	WorkRef
	CallID   string
	ToolName string
}

// DeviceFinishInput aggregates a device tool call.
type DeviceFinishInput struct {
	Turn         WorkRef
	Call         ToolCall
	MessageIndex int
	Plan         domain.DevicePlan
	// Errors are devices whose activity failed for good, by node id.
	Errors map[string]string
	// Waits are the devices' wait_for outcomes, by node id.
	Waits map[string][]domain.WaitOutcome `json:",omitempty"`
}
