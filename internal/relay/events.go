package relay

import "encoding/json"

// Event types. The first seven are the SSE types of GNS3's AI chat API design, the contract
// with GNS3's web UI (see package api), and must not be renamed; the rest are additions that
// API allows, which GNS3's own panel ignores.
const (
	TypeContent   = "content"
	TypeToolCall  = "tool_call"
	TypeToolStart = "tool_start"
	TypeToolEnd   = "tool_end"
	TypeError     = "error"
	TypeDone      = "done"
	TypeHeartbeat = "heartbeat"

	// TypeTurnStarted is the first event of every turn: it tells a client its session and turn.
	TypeTurnStarted = "turn_started"
	// TypeRetry tells the client to drop the partial assistant text of the current LLM call,
	// because the call is being retried and will stream again from the beginning.
	TypeRetry = "retry"
	// TypeToolProgress carries per-node or per-device progress while a tool runs.
	TypeToolProgress = "tool_progress"
	// TypeReasoning carries a piece of what a thinking model writes before its answer, in
	// "reasoning", with the "message_id" of the answer it leads to. It is never content: a
	// client that knows only the chat API's types (GNS3's panel) shows the answer alone and sees
	// heartbeats while the model thinks. Consecutive pieces may arrive merged into one event. A
	// private (injection) turn sends none, and a retry drops the current call's like its text.
	TypeReasoning = "reasoning"
)

// Approval events (configuration jobs and destructive lab tools wait for the session owner).
// Both are stored in the turn's log like every other event, so a page that reloads while a turn
// waits replays the pending approval, and its decision.
//
// approval_required also carries the question as Markdown in "content", and approval_resolved
// the outcome in a sentence in "content" and the call in "tool_call": a client that shows no
// approval cards (GNS3's AI panel) gets them as content instead, and its stream ends with done
// and "approval_pending" while the turn waits (api/approval_reply.go).
const (
	// TypeApprovalRequired carries "approval": {approval_id, tool_call_id, tool_name, kind, plan,
	// expires_at, status: "pending"}.
	TypeApprovalRequired = "approval_required"
	// TypeApprovalResolved carries "approval": {approval_id, tool_call_id, status: approved |
	// rejected | expired, decided_by, comment, decided_at}.
	TypeApprovalResolved = "approval_resolved"
)

// Exercise events (fault-injection exercises). An injection turn's log carries
// exercise_started once its fault is recorded; a student's "check" or "hint" typed in the chat
// is answered with content (the answer, for clients that show only the chat API's events), then
// exercise_checked, then done. Their "exercise" is {exercise_id, session_id, status: open
// | fixed | given_up | expired, checks, hints_used, last_check, created_at, expires_at,
// ended_at}; exercise_checked adds "status" (the request: check | hint | give_up), "content"
// (the answer for people) and, for a hint, "hint". Neither ever carries the injected fault. An
// injection turn's own tool_call arguments, tool_end outputs and tool_progress events are
// withheld, and its text is replaced by a fixed sentence (package activities).
const (
	TypeExerciseStarted = "exercise_started"
	TypeExerciseChecked = "exercise_checked"
)

// IsTerminal reports whether an event of this type ends a turn. Every turn ends with one `done`:
// a failed turn sends `error` first and a cancelled one carries "cancelled": true, so clients that
// only know the chat API's types always stop.
func IsTerminal(typ string) bool { return typ == TypeDone }

// ToolCallFunction mirrors the chat API's tool_call.function object.
type ToolCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Complete  bool   `json:"complete,omitempty"`
}

// ToolCall mirrors the chat API's tool_call object.
type ToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function ToolCallFunction `json:"function"`
	Index    int              `json:"index"`
}

// Payload is the JSON body of every event. Fields follow the chat API's shapes; empty ones are omitted.
type Payload struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	Content   string `json:"content,omitempty"`
	// Reasoning is the text of a reasoning event, never of content.
	Reasoning  string    `json:"reasoning,omitempty"`
	MessageID  string    `json:"message_id,omitempty"`
	ToolCall   *ToolCall `json:"tool_call,omitempty"`
	ToolName   string    `json:"tool_name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	ToolOutput string    `json:"tool_output,omitempty"`
	Error      string    `json:"error,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Cancelled  bool      `json:"cancelled,omitempty"`
	Status     string    `json:"status,omitempty"`
	Title      string    `json:"title,omitempty"`
	// Message is the user's message, on turn_started, so a client joining later can show it.
	Message  string `json:"message,omitempty"`
	Progress any    `json:"progress,omitempty"`
	Usage    any    `json:"usage,omitempty"`
	// Approval is the approval of approval_required and approval_resolved.
	Approval any `json:"approval,omitempty"`
	// Exercise is the exercise of exercise_started and exercise_checked: what the student may
	// know of it, never its fault.
	Exercise any `json:"exercise,omitempty"`
	// Hint is the hint an exercise_checked event answers a hint request with.
	Hint string `json:"hint,omitempty"`
	// ApprovalPending is set on a done that ends a stream while the turn waits for a decision
	// ({approval_id, tool_name, tool_call_id, expires_at}): the session's next message answers it.
	ApprovalPending any `json:"approval_pending,omitempty"`
}

// Abort parity with GNS3's own copilot (v3.1.0a2), whose web UI may wait for these: when the
// user aborts a turn, every tool call the client saw start without an end gets a tool_end whose
// output says it was aborted, then one abort event, then the terminal done ("cancelled": true).
const (
	// TypeAbort says the turn was stopped at the user's request; done follows.
	TypeAbort = "abort"
)

// TypeCancelRequested is written to a turn's control stream when the user aborts it. Temporal
// delivers a cancellation to a running activity only with its next heartbeat answer; the
// control stream lets the activity stop at once.
const TypeCancelRequested = "cancel_requested"

// ControlStream names the stream that carries a turn's control events, apart from the events
// clients see.
func ControlStream(turnID string) string { return turnID + ":control" }

// Skills reload (issue #11). A superadmin's reload of the skills directory is announced on
// SkillsStream so worker processes, which run the turns, reload the same directory; clients
// never see these events.
const (
	TypeSkillsReload = "skills_reload"
	SkillsStream     = "copilot:skills"
)

// Topology stream events (GET …/chat/topology/stream, package livetopo). They travel on their
// own SSE stream, never in a turn's log: the first frame is always a topology_snapshot (the
// project, every node and link, and the version of the live copy), then one topology_change per
// applied GNS3 notification (action node.created|updated|deleted, link.created|updated|deleted
// or project.updated, with the node, link or project as it is now), and a new
// topology_snapshot whenever the changes in between cannot be known. heartbeat and error are
// the chat stream's own types.
const (
	TypeTopologySnapshot = "topology_snapshot"
	TypeTopologyChange   = "topology_change"
)

// MCP calls (package mcp) have no new event types: an MCP call's log is the stream named by its
// call id and carries the types above that a turn's tool call does — tool_start,
// tool_progress, approval_required, approval_resolved, tool_end — and ends with done
// (status completed or failed). No browser reads it; the API turns tool_progress and the
// approval events into the MCP client's notifications/progress.

// ApprovalIDOf reads the approval id of an approval_required or approval_resolved event's data
// ("" for any other event).
func ApprovalIDOf(data json.RawMessage) string {
	var p struct {
		Approval struct {
			ApprovalID string `json:"approval_id"`
		} `json:"approval"`
	}
	_ = json.Unmarshal(data, &p)
	return p.Approval.ApprovalID
}
