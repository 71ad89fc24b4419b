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

// ExerciseRequest is a check, hint or give-up. CredentialKey names the asking user's GNS3
// credential, stored for a few minutes, which a check needs to reach the lab's consoles.
type ExerciseRequest struct {
	CredentialKey string
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
	st := ExerciseAnswer{Status: domain.ExerciseOpen}
	verifyCtx := workflow.WithActivityOptions(ctx, exerciseCheckOptions())
	dbCtx := workflow.WithActivityOptions(ctx, exerciseRecordOptions())
	progress := func() ExerciseProgressInput {
		return ExerciseProgressInput{ExerciseID: in.ExerciseID, SessionID: in.SessionID, Status: st.Status,
			Checks: st.Checks, HintsUsed: st.HintsUsed, Message: st.Message}
	}
	save := func(hctx workflow.Context) {
		if err := workflow.ExecuteActivity(summarized(dbCtx, fmt.Sprintf("progress: %s, %d check(s), %d hint(s)", st.Status, st.Checks, st.HintsUsed)),
			ExerciseProgressActivity, progress()).Get(hctx, nil); err != nil {
			workflow.GetLogger(hctx).Warn("saving the exercise's progress failed", "error", err)
		}
	}
	// Requests are answered one at a time, in order: two hints asked at once are the next two.
	one := workflow.NewMutex(ctx)
	open := func(ctx workflow.Context, req ExerciseRequest) error {
		if st.Status != domain.ExerciseOpen {
			return temporal.NewApplicationError(fmt.Sprintf("the exercise is over (%s)", st.Status), domain.ErrTypeExerciseOver)
		}
		return nil
	}

	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseCheckUpdate, func(hctx workflow.Context, req ExerciseRequest) (ExerciseAnswer, error) {
		if err := one.Lock(hctx); err != nil {
			return ExerciseAnswer{}, err
		}
		defer one.Unlock()
		if st.Status != domain.ExerciseOpen {
			return st, nil
		}
		st.Checks++
		var v ExerciseVerifyResult
		err := workflow.ExecuteActivity(summarized(verifyCtx, fmt.Sprintf("check %d: verification commands", st.Checks)), ExerciseVerifyActivity, ExerciseVerifyInput{ExerciseID: in.ExerciseID,
			SessionID: in.SessionID, ProjectID: in.ProjectID, UserID: in.UserID, CredentialKey: req.CredentialKey, Check: st.Checks}).Get(hctx, &v)
		if err != nil {
			st.Checks--
			return ExerciseAnswer{}, err
		}
		if st.Status != domain.ExerciseOpen {
			// Given up or expired while this check ran: the exercise's end stands.
			return st, nil
		}
		st.Fixed = v.Fixed
		switch {
		case v.Fixed:
			st.Status = domain.ExerciseFixed
			st.Message = fmt.Sprintf("Fixed! The lab passes its check (after %d check(s) and %d hint(s)).", st.Checks, st.HintsUsed)
		case len(v.Problems) > 0:
			st.Message = fmt.Sprintf("Not yet: %d of %d check(s) pass. %s", v.Passed, v.Total, strings.Join(v.Problems, "; ")+".")
		default:
			st.Message = fmt.Sprintf("Not yet: %d of %d check(s) pass. Keep looking, or ask for a hint.", v.Passed, v.Total)
		}
		save(hctx)
		return st, nil
	}, workflow.UpdateHandlerOptions{Validator: func(vctx workflow.Context, req ExerciseRequest) error {
		if err := open(vctx, req); err != nil {
			return err
		}
		if req.CredentialKey == "" {
			return errors.New("a check needs the asking user's credential")
		}
		return nil
	}}); err != nil {
		return st, err
	}

	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseHintUpdate, func(hctx workflow.Context, req ExerciseRequest) (ExerciseAnswer, error) {
		if err := one.Lock(hctx); err != nil {
			return ExerciseAnswer{}, err
		}
		defer one.Unlock()
		if st.Status != domain.ExerciseOpen {
			return st, nil
		}
		var h ExerciseHintResult
		if err := workflow.ExecuteActivity(summarized(dbCtx, fmt.Sprintf("hint %d", st.HintsUsed+1)), ExerciseHintActivity, ExerciseHintInput{ExerciseID: in.ExerciseID, Level: st.HintsUsed}).Get(hctx, &h); err != nil {
			return ExerciseAnswer{}, err
		}
		if st.Status != domain.ExerciseOpen {
			return st, nil
		}
		if h.Last {
			st.Message = "That is the strongest hint there is."
		} else {
			st.Message = "Ask again for a stronger hint."
		}
		st.HintsUsed++
		save(hctx)
		ans := st
		ans.Hint = h.Hint
		return ans, nil
	}, workflow.UpdateHandlerOptions{Validator: open}); err != nil {
		return st, err
	}

	if err := workflow.SetUpdateHandlerWithOptions(ctx, ExerciseGiveUpUpdate, func(hctx workflow.Context, req ExerciseRequest) (ExerciseAnswer, error) {
		st.Status = domain.ExerciseGivenUp
		st.Message = "You gave up on this exercise."
		return st, nil
	}, workflow.UpdateHandlerOptions{Validator: open}); err != nil {
		return st, err
	}

	ended, err := workflow.AwaitWithTimeout(ctx, ttl, func() bool { return st.Status != domain.ExerciseOpen })
	switch {
	case err != nil:
		// Cancelled (from the Temporal UI, say): the exercise is over for the student.
		st.Status, st.Message = domain.ExerciseGivenUp, "The exercise was stopped."
	case !ended:
		st.Status, st.Message = domain.ExerciseExpired, "The exercise expired."
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	// A check that was running still answers its student before the workflow closes.
	_ = workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) })
	fctx := workflow.WithActivityOptions(dctx, exerciseFinishOptions())
	if err := workflow.ExecuteActivity(summarized(fctx, "ended: "+st.Status), ExerciseFinishActivity, progress()).Get(dctx, nil); err != nil {
		return st, err
	}
	return st, nil
}
