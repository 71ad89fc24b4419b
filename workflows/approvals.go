package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// DefaultApprovalTimeout is how long an unanswered approval waits before it expires.
const DefaultApprovalTimeout = 30 * time.Minute

// Names of the approval update and its activities.
const (
	ApprovalUpdate          = "approval"
	RequestApprovalActivity = "RequestApproval"
	RecordDecisionActivity  = "RecordApprovalDecision"
	RenewCredentialActivity = "RenewTurnCredential"
)

// RenewCredentialInput extends the lifetime of a turn's stored GNS3 credential.
type RenewCredentialInput struct {
	Turn WorkRef
	TTL  time.Duration
}

// keepCredential renews the turn's credential every half of its lifetime until ctx ends, so a
// turn that waits for hours on an approval can still act for its user afterwards. Renewal
// failures are left to the activities that need the credential to report.
func keepCredential(ctx workflow.Context, ref WorkRef, ttl time.Duration) {
	keepCredentialFrom(ctx, ref, ttl, ttl/2)
}

// keepCredentialFrom is keepCredential with the first renewal due after first (at once when
// it is not positive): a turn that starts renewing late keeps the schedule it started with.
func keepCredentialFrom(ctx workflow.Context, ref WorkRef, ttl, first time.Duration) {
	if ttl <= 0 {
		return
	}
	rctx := workflow.WithActivityOptions(ctx, renewCredentialOptions())
	workflow.Go(ctx, func(gctx workflow.Context) {
		for wait := first; ; wait = ttl / 2 {
			if wait > 0 {
				if err := workflow.NewTimerWithOptions(gctx, wait, workflow.TimerOptions{Summary: "until the credential's renewal"}).Get(gctx, nil); err != nil {
					return
				}
			}
			if err := workflow.ExecuteActivity(summarized(rctx, "renew the turn's GNS3 credential"), RenewCredentialActivity, RenewCredentialInput{Turn: ref, TTL: ttl}).Get(gctx, nil); err != nil {
				if gctx.Err() != nil {
					return
				}
				workflow.GetLogger(gctx).Warn("renewing the turn's credential failed", "error", err)
			}
		}
	})
}

// Decisions a person can send; an approval ends as domain.ApprovalApproved, ApprovalRejected or
// ApprovalExpired.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// MaxApprovalComment bounds the comment that goes into the history and to the model.
const MaxApprovalComment = 2000

// ApprovalID is the id of the approval a tool call of a turn waits for: derived, not random, so
// a replay, a retried activity and the page all name the same approval.
func ApprovalID(turnID, callID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("gns3-copilot:approval:"+turnID+":"+callID)).String()
}

// ApprovalDecision is the argument of the approval update.
type ApprovalDecision struct {
	ApprovalID string
	Decision   string
	Comment    string
	// UserID and Username are the person deciding; the API fills them from the caller's token.
	UserID   string
	Username string
	// Standing ("approve all") approves this request and every later one of the same turn.
	Standing bool `json:",omitempty"`
	// Reply is the chat message the decision was read from, when the person answered in the
	// conversation: it is stored in the transcript after the question, so the history shows it.
	Reply string `json:",omitempty"`
}

// ApprovalOutcome is how an approval ended.
type ApprovalOutcome struct {
	ApprovalID string
	Status     string // domain.ApprovalApproved, domain.ApprovalRejected or domain.ApprovalExpired
	DecidedBy  string
	Comment    string
	// Standing is an "approve all" that also decides the turn's later approvals; StandingOf
	// names the approval whose "approve all" decided this one.
	Standing   bool   `json:",omitempty"`
	StandingOf string `json:",omitempty"`
}

// Approved reports whether the person said yes.
func (o ApprovalOutcome) Approved() bool { return o.Status == domain.ApprovalApproved }

// ApprovalRequest asks the activity to store a pending approval and announce it.
type ApprovalRequest struct {
	Turn       WorkRef
	Call       ToolCall
	ApprovalID string
	Kind       string
	// WorkflowID is the workflow that waits, where the API sends the decision.
	WorkflowID string
	ExpiresAt  time.Time
	// JobID names the configuration job whose plan (and read-before) the approval shows.
	JobID string
	// Plan is the configuration job's validated plan (nil for a destructive tool).
	Plan *domain.DevicePlan
	// MessageIndex is the transcript slot of the call's result; the question is stored beside
	// it for the history (0, in workflows started before it existed: not stored).
	MessageIndex int `json:",omitempty"`
	// StandingOf, when set, names the "approve all" that decides this approval: it is stored
	// for the audit and decided at once, and nobody is asked.
	StandingOf string `json:",omitempty"`
}

// DecisionRecord asks the activity to store a decision and announce it.
type DecisionRecord struct {
	Turn    WorkRef
	Call    ToolCall
	Outcome ApprovalOutcome
	// Reply and MessageIndex: the person's answer in the conversation, stored in the
	// transcript at the slot of the call's result (see ApprovalDecision.Reply).
	Reply        string `json:",omitempty"`
	MessageIndex int    `json:",omitempty"`
}

// approvalGate is a workflow's side of approvals: the update handler that receives decisions,
// and what each approval it asked for has become. The wait is a timer and a condition, so it
// holds no activity while the person thinks and survives any restart.
type approvalGate struct {
	turn    WorkRef
	waiting map[string]*approvalState
	// standing is the turn's "approve all", once given: later approvals are decided by it.
	standing *ApprovalOutcome
}

type approvalState struct {
	call    ToolCall
	slot    int
	decided bool
	outcome ApprovalOutcome
	// recordErr is set when the decision could not be stored; then nothing may go ahead on it.
	recordErr error
}

// stand makes a standing decision (an "approve all") decide this gate's later approvals.
func (g *approvalGate) stand(o ApprovalOutcome) {
	if o.Approved() && (o.Standing || o.StandingOf != "") && g.standing == nil {
		s := o
		if s.StandingOf != "" {
			s.ApprovalID = s.StandingOf
		}
		g.standing = &s
	}
}

func newApprovalGate(ctx workflow.Context, turn WorkRef) (*approvalGate, error) {
	g := &approvalGate{turn: turn, waiting: map[string]*approvalState{}}
	err := workflow.SetUpdateHandlerWithOptions(ctx, ApprovalUpdate, g.decide, workflow.UpdateHandlerOptions{Validator: g.validate})
	return g, err
}

// validate rejects a decision before it reaches the history: unknown or foreign approvals,
// words other than approve/reject, a comment too long, and any second decision.
func (g *approvalGate) validate(_ workflow.Context, d ApprovalDecision) error {
	st, ok := g.waiting[d.ApprovalID]
	switch {
	case !ok:
		return fmt.Errorf("approval %s is not waiting in this workflow", d.ApprovalID)
	case st.decided:
		return fmt.Errorf("approval %s was already decided: %s", d.ApprovalID, describeOutcome(st.outcome))
	case d.Decision != DecisionApprove && d.Decision != DecisionReject:
		return fmt.Errorf("decision must be %q or %q, got %q", DecisionApprove, DecisionReject, d.Decision)
	case d.UserID != g.turn.UserID:
		return errors.New("only the session's owner can decide its approvals")
	case utf8.RuneCountInString(d.Comment) > MaxApprovalComment:
		return fmt.Errorf("comment is longer than %d characters", MaxApprovalComment)
	}
	return nil
}

// decide takes the decision, stores it and answers only once it is stored, so the caller knows
// nothing can happen on the old assumption.
func (g *approvalGate) decide(ctx workflow.Context, d ApprovalDecision) (ApprovalOutcome, error) {
	st := g.waiting[d.ApprovalID]
	out := ApprovalOutcome{ApprovalID: d.ApprovalID, Status: domain.ApprovalRejected, DecidedBy: d.Username, Comment: strings.TrimSpace(d.Comment)}
	if d.Decision == DecisionApprove {
		out.Status = domain.ApprovalApproved
		out.Standing = d.Standing
	}
	// Set before the activity runs: a second update validated meanwhile sees it decided.
	st.decided, st.outcome = true, out
	g.stand(out)
	err := g.record(ctx, st.call, out, d.Reply, st.slot)
	st.recordErr = err
	return out, err
}

// record stores how an approval ended and announces it, with the person's reply when they
// answered in the conversation.
func (g *approvalGate) record(ctx workflow.Context, call ToolCall, out ApprovalOutcome, reply string, slot int) error {
	return workflow.ExecuteActivity(summarized(recordOptions(ctx), fmt.Sprintf("%s: %s", call.Name, describeOutcome(out))), RecordDecisionActivity,
		DecisionRecord{Turn: g.turn, Call: call, Outcome: out, Reply: reply, MessageIndex: slot}).Get(ctx, nil)
}

func describeOutcome(o ApprovalOutcome) string {
	switch {
	case o.Status == domain.ApprovalExpired:
		return "it expired"
	case o.DecidedBy != "":
		return o.Status + " by " + o.DecidedBy
	}
	return o.Status
}

func recordOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, approvalRecordOptions())
}

// ask stores a pending approval, announces it, and waits for the decision or the timeout. A
// cancelled turn ends the wait as rejected; the decision is stored either way.
func (g *approvalGate) ask(ctx workflow.Context, req ApprovalRequest, timeout time.Duration) (ApprovalOutcome, error) {
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	req.ApprovalID = ApprovalID(g.turn.TurnID, req.Call.ID)
	req.Turn = g.turn
	req.WorkflowID = workflow.GetInfo(ctx).WorkflowExecution.ID
	req.ExpiresAt = workflow.Now(ctx).Add(timeout).UTC()
	st := &approvalState{call: req.Call, slot: req.MessageIndex}
	g.waiting[req.ApprovalID] = st
	if g.standing != nil {
		// An "approve all" given earlier in the turn answers: the approval is stored for the
		// audit, decided by it, and nobody is asked.
		req.StandingOf = g.standing.ApprovalID
		out := ApprovalOutcome{ApprovalID: req.ApprovalID, Status: domain.ApprovalApproved, DecidedBy: g.standing.DecidedBy, StandingOf: g.standing.ApprovalID,
			Comment: "approved by the standing decision (approve all) given on approval " + g.standing.ApprovalID}
		st.decided, st.outcome = true, out
		if err := workflow.ExecuteActivity(summarized(recordOptions(ctx), fmt.Sprintf("approval by standing decision: %s", toolSummary(req.Call))), RequestApprovalActivity, req).Get(ctx, nil); err != nil {
			return ApprovalOutcome{}, err
		}
		if err := g.record(ctx, req.Call, out, "", 0); err != nil {
			return out, fmt.Errorf("the decision could not be stored, so nothing was done: %w", err)
		}
		return out, nil
	}
	if err := workflow.ExecuteActivity(summarized(recordOptions(ctx), fmt.Sprintf("ask approval: %s", toolSummary(req.Call))), RequestApprovalActivity, req).Get(ctx, nil); err != nil {
		return ApprovalOutcome{}, err
	}
	// The timer's summary shows in the UI what the workflow waits for.
	answered, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: timeout,
		TimerOptions: workflow.TimerOptions{Summary: clipSummary("approval of " + toolSummary(req.Call))}}, func() bool { return st.decided })
	if err != nil || !answered {
		if st.decided {
			return st.outcome, nil
		}
		out := ApprovalOutcome{ApprovalID: req.ApprovalID, Status: domain.ApprovalExpired}
		if err != nil {
			out = ApprovalOutcome{ApprovalID: req.ApprovalID, Status: domain.ApprovalRejected, Comment: CommentTurnAborted}
		}
		st.decided, st.outcome = true, out
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if rerr := g.record(dctx, req.Call, out, "", 0); rerr != nil {
			return out, rerr
		}
		return out, err
	}
	// The handler stores the decision; the workflow goes on once it has, and only if it has.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return st.outcome, err
	}
	if st.recordErr != nil {
		return st.outcome, fmt.Errorf("the decision could not be stored, so nothing was done: %w", st.recordErr)
	}
	return st.outcome, nil
}

// CommentTurnAborted is the comment of an approval that ended because its turn was aborted,
// which a configuration job's result tells apart from a person's refusal.
const CommentTurnAborted = "the turn was aborted"

// RejectionMessage is what the model reads when a person said no (or nobody answered).
func RejectionMessage(o ApprovalOutcome) string {
	var msg string
	switch o.Status {
	case domain.ApprovalExpired:
		msg = "Nothing was done: the approval expired without an answer from the user."
	case domain.ApprovalRejected:
		who := "the user"
		if o.DecidedBy != "" {
			who = o.DecidedBy
		}
		msg = "Nothing was done: " + who + " rejected it."
	default:
		return ""
	}
	if o.Comment != "" {
		msg += " Comment: " + o.Comment
	}
	return msg
}
