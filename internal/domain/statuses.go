package domain

// How a chat turn stands: the words the turn's row stores and its workflow returns.
const (
	TurnRunning   = "running"
	TurnCompleted = "completed"
	TurnFailed    = "failed"
	TurnCancelled = "cancelled"
	// TurnWaitingApproval is the status of the done event that ends a stream while the turn
	// waits for a decision (for clients without approval cards); the turn itself still runs.
	TurnWaitingApproval = "waiting_approval"
)

// How an MCP call stands, as its record and its workflow's result keep it.
const (
	MCPCallRunning   = "running"
	MCPCallCompleted = "completed"
	MCPCallFailed    = "failed"
)

// Approval settings: which tool calls wait for the session owner's decision.
const (
	// ApprovalChanges asks before configuration and before destructive lab tools.
	ApprovalChanges = "changes"
	// ApprovalConfig asks before configuration only.
	ApprovalConfig = "config"
	// ApprovalNever asks nothing; configuration still runs as a job, with its diff.
	ApprovalNever = "never"
)

// ValidApprovalSetting reports whether s is one of the operator's approval settings.
func ValidApprovalSetting(s string) bool {
	return s == ApprovalChanges || s == ApprovalConfig || s == ApprovalNever
}

// How an approval stands: pending until decided, then how it ended.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

// Kinds of approval.
const (
	ApprovalKindConfig      = "config"      // configuration lines sent to device consoles
	ApprovalKindDestructive = "destructive" // deleting, stopping or reloading lab nodes or links
)

// How a configuration job stands. The first three are its steps; JobDone ends a job that had
// nothing to approve (a failed plan, or lines that only look); the rest are how a job that
// changed, or would have changed, configuration ended.
const (
	JobPlanning  = "planning"
	JobWaiting   = "waiting_approval"
	JobApplying  = "applying"
	JobDone      = "done"
	JobCompleted = "completed" // every device took every line
	JobPartial   = "partial"   // some lines did not take, or some devices failed
	JobFailed    = "failed"    // nothing took
	JobRejected  = "rejected"
	JobExpired   = "expired"
	JobCancelled = "cancelled"
)

// How an exercise stands, as the page and the API name it.
const (
	ExerciseOpen    = "open"
	ExerciseFixed   = "fixed"
	ExerciseGivenUp = "given_up"
	// ExerciseReset ended with the lab restored to the snapshot taken before the injection.
	ExerciseReset   = "reset"
	ExerciseExpired = "expired"
)
