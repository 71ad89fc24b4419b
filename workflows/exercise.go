package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// The Exercise workflow, its updates and activities. An exercise starts when an injection turn
// records the fault it injected, and then waits (for days if need be) for the student to ask
// for a check or a hint, or to give up.
const (
	ExerciseWorkflow         = "Exercise"
	ExerciseCheckUpdate      = "check"
	ExerciseHintUpdate       = "hint"
	ExerciseGiveUpUpdate     = "give_up"
	ExerciseVerifyActivity   = "VerifyExercise"
	ExerciseHintActivity     = "ExerciseHint"
	ExerciseProgressActivity = "SaveExerciseProgress"
	ExerciseFinishActivity   = "FinishExercise"
	// DefaultExerciseTTL is how long an exercise waits for its student before it expires.
	DefaultExerciseTTL = 7 * 24 * time.Hour
)

// ExerciseInput names the exercise; the fault itself stays in the database, so this workflow's
// history never says what was broken.
type ExerciseInput struct {
	ExerciseID string
	SessionID  string
	ProjectID  string
	UserID     string
	// TTL is how long the exercise stays open (0: DefaultExerciseTTL).
	TTL time.Duration
}

// ExerciseRequest is a check, hint, give-up or reset. CredentialKey names the asking user's GNS3
// credential, stored for a few minutes, which a check needs to reach the lab's consoles.
type ExerciseRequest struct {
	CredentialKey string
	// A reset's: the turn the API opened for it (whose credential it acts with), the snapshot
	// to restore, and the operator's approval setting and timeout.
	TurnID          string        `json:",omitempty"`
	Snapshot        string        `json:",omitempty"`
	Approval        string        `json:",omitempty"`
	ApprovalTimeout time.Duration `json:",omitempty"`
}

// ExerciseAnswer is what the student is told.
type ExerciseAnswer struct {
	Status    string
	Fixed     bool
	Checks    int
	HintsUsed int
	Message   string
	// Hint is the hint given by a hint request.
	Hint string
}

// ExerciseVerifyInput re-runs an exercise's verification commands.
type ExerciseVerifyInput struct {
	ExerciseID    string
	SessionID     string
	ProjectID     string
	UserID        string
	CredentialKey string
	// Check numbers the check (1, 2, …), so each one's device records are its own.
	Check int
}

// ExerciseVerifyResult says how many of the exercise's faults now read as fixed.
type ExerciseVerifyResult struct {
	Fixed  bool
	Passed int
	Total  int
	// Problems are what kept a verification from running (a stopped device), for the student.
	Problems []string
}

// ExerciseHintInput asks for the hint of a level (0 = the first, vaguest).
type ExerciseHintInput struct {
	ExerciseID string
	Level      int
}

// ExerciseHintResult is the hint of the level asked for; Last is set when no stronger one exists.
type ExerciseHintResult struct {
	Hint string
	Last bool
}

// ExerciseProgressInput stores the exercise's state for the page, which reads it without asking
// Temporal.
type ExerciseProgressInput struct {
	ExerciseID string
	SessionID  string
	Status     string
	Checks     int
	HintsUsed  int
	Message    string
}

// Exercise waits for the student. A check re-runs the verification commands and answers fixed
// or not yet; a hint gives the next, stronger hint; give_up ends it. It ends when fixed, given
// up, or after its TTL; a restart of anything in between only replays it.
func Exercise(ctx workflow.Context, in ExerciseInput) (ExerciseAnswer, error) {
	ttl := in.TTL
	if ttl <= 0 {
		ttl = DefaultExerciseTTL
	}
	e := &exercise{in: in, st: ExerciseAnswer{Status: domain.ExerciseOpen}, ctx: ctx,
		verifyCtx: workflow.WithActivityOptions(ctx, exerciseCheckOptions()),
		dbCtx:     workflow.WithActivityOptions(ctx, exerciseRecordOptions()),
		one:       workflow.NewMutex(ctx)}
	if err := e.register(ctx); err != nil {
		return e.st, err
	}

	ended, err := workflow.AwaitWithTimeout(ctx, ttl, func() bool { return e.st.Status != domain.ExerciseOpen })
	switch {
	case err != nil:
		// Cancelled (from the Temporal UI, say): the exercise is over for the student.
		e.st.Status, e.st.Message = domain.ExerciseGivenUp, "The exercise was stopped."
	case !ended:
		e.st.Status, e.st.Message = domain.ExerciseExpired, "The exercise expired."
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	// A check that was running still answers its student, and a reset its turn, before the
	// workflow closes.
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) && e.resets == 0 })
	fctx := workflow.WithActivityOptions(dctx, exerciseFinishOptions())
	if err := workflow.ExecuteActivity(summarized(fctx, "ended: "+e.st.Status), ExerciseFinishActivity, e.progress()).Get(dctx, nil); err != nil {
		return e.st, err
	}
	return e.st, nil
}

// exercise is the Exercise workflow's state; its methods are the update handlers.
type exercise struct {
	in ExerciseInput
	st ExerciseAnswer
	// verifyCtx and dbCtx carry the options of a check and of a database record.
	verifyCtx, dbCtx workflow.Context
	// one answers requests one at a time, in order: two hints asked at once are the next two.
	one workflow.Mutex
	// ctx is the workflow's own, for the work a reset goes on with after its update answered;
	// gate takes the reset's decision; resetting is set while a reset is asked or applied, and
	// resets counts the resets whose answer is not stored yet.
	ctx       workflow.Context
	gate      *approvalGate
	resetting bool
	resets    int
}

func (e *exercise) register(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseCheckUpdate, e.check,
		workflow.UpdateHandlerOptions{Validator: e.validateCheck}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseHintUpdate, e.hint,
		workflow.UpdateHandlerOptions{Validator: e.validateOpen}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseGiveUpUpdate, e.giveUp,
		workflow.UpdateHandlerOptions{Validator: e.validateOpen}); err != nil {
		return err
	}
	gate, err := newApprovalGate(ctx, WorkRef{SessionID: e.in.SessionID, ProjectID: e.in.ProjectID, UserID: e.in.UserID})
	if err != nil {
		return err
	}
	e.gate = gate
	return workflow.SetUpdateHandlerWithOptions(ctx, ExerciseResetUpdate, e.reset,
		workflow.UpdateHandlerOptions{Validator: e.validateReset})
}

// validateOpen refuses any request once the exercise is over.
func (e *exercise) validateOpen(_ workflow.Context, _ ExerciseRequest) error {
	if e.st.Status != domain.ExerciseOpen {
		return temporal.NewApplicationError(fmt.Sprintf("the exercise is over (%s)", e.st.Status), domain.ErrTypeExerciseOver)
	}
	return nil
}

func (e *exercise) validateCheck(ctx workflow.Context, req ExerciseRequest) error {
	if err := e.validateOpen(ctx, req); err != nil {
		return err
	}
	if req.CredentialKey == "" {
		return errors.New("a check needs the asking user's credential")
	}
	return nil
}

// check re-runs the verification commands and tells the student where the lab stands.
func (e *exercise) check(ctx workflow.Context, req ExerciseRequest) (ExerciseAnswer, error) {
	if err := e.one.Lock(ctx); err != nil {
		return ExerciseAnswer{}, err
	}
	defer e.one.Unlock()
	if e.st.Status != domain.ExerciseOpen {
		return e.st, nil
	}
	e.st.Checks++
	var v ExerciseVerifyResult
	err := workflow.ExecuteActivity(summarized(e.verifyCtx, fmt.Sprintf("check %d: verification commands", e.st.Checks)), ExerciseVerifyActivity, ExerciseVerifyInput{ExerciseID: e.in.ExerciseID,
		SessionID: e.in.SessionID, ProjectID: e.in.ProjectID, UserID: e.in.UserID, CredentialKey: req.CredentialKey, Check: e.st.Checks}).Get(ctx, &v)
	if err != nil {
		e.st.Checks--
		return ExerciseAnswer{}, err
	}
	if e.st.Status != domain.ExerciseOpen {
		// Given up or expired while this check ran: the exercise's end stands.
		return e.st, nil
	}
	e.st.Fixed = v.Fixed
	switch {
	case v.Fixed:
		e.st.Status = domain.ExerciseFixed
		e.st.Message = fmt.Sprintf("Fixed! The lab passes its check (after %d check(s) and %d hint(s)).", e.st.Checks, e.st.HintsUsed)
	case len(v.Problems) > 0:
		e.st.Message = fmt.Sprintf("Not yet: %d of %d check(s) pass. %s", v.Passed, v.Total, strings.Join(v.Problems, "; ")+".")
	default:
		e.st.Message = fmt.Sprintf("Not yet: %d of %d check(s) pass. Keep looking, or ask for a hint.", v.Passed, v.Total)
	}
	e.save(ctx)
	return e.st, nil
}

// hint gives the next, stronger hint.
func (e *exercise) hint(ctx workflow.Context, _ ExerciseRequest) (ExerciseAnswer, error) {
	if err := e.one.Lock(ctx); err != nil {
		return ExerciseAnswer{}, err
	}
	defer e.one.Unlock()
	if e.st.Status != domain.ExerciseOpen {
		return e.st, nil
	}
	var h ExerciseHintResult
	if err := workflow.ExecuteActivity(summarized(e.dbCtx, fmt.Sprintf("hint %d", e.st.HintsUsed+1)), ExerciseHintActivity, ExerciseHintInput{ExerciseID: e.in.ExerciseID, Level: e.st.HintsUsed}).Get(ctx, &h); err != nil {
		return ExerciseAnswer{}, err
	}
	if e.st.Status != domain.ExerciseOpen {
		return e.st, nil
	}
	if h.Last {
		e.st.Message = "That is the strongest hint there is."
	} else {
		e.st.Message = "Ask again for a stronger hint."
	}
	e.st.HintsUsed++
	e.save(ctx)
	ans := e.st
	ans.Hint = h.Hint
	return ans, nil
}

func (e *exercise) giveUp(_ workflow.Context, _ ExerciseRequest) (ExerciseAnswer, error) {
	e.st.Status = domain.ExerciseGivenUp
	e.st.Message = "You gave up on this exercise."
	return e.st, nil
}

func (e *exercise) progress() ExerciseProgressInput {
	return ExerciseProgressInput{ExerciseID: e.in.ExerciseID, SessionID: e.in.SessionID, Status: e.st.Status,
		Checks: e.st.Checks, HintsUsed: e.st.HintsUsed, Message: e.st.Message}
}

// save stores the exercise's progress for the page; a failure is only logged, the exercise
// goes on.
func (e *exercise) save(ctx workflow.Context) {
	if err := workflow.ExecuteActivity(summarized(e.dbCtx, fmt.Sprintf("progress: %s, %d check(s), %d hint(s)", e.st.Status, e.st.Checks, e.st.HintsUsed)),
		ExerciseProgressActivity, e.progress()).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("saving the exercise's progress failed", "error", err)
	}
}
