// The launcher starts durable work for a user: a chat turn, an MCP call, any kind that plugs in
// as a Work. Every kind goes through the same steps in the same order: its row under the user's
// cap (repairing rows whose workflows are gone when they stand in the way), the user's
// credential stored worker-side, the start of its workflow, and on any failure after the row
// the undo of both, so that nothing half-started stays behind.

package durable

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Settings are how a piece of durable work runs, the same for every front door.
type Settings struct {
	// Approval is which tool calls wait for the owner (domain.ApprovalChanges, …; "" runs
	// device tools directly); ApprovalTimeout is how long they wait.
	Approval        string
	ApprovalTimeout time.Duration
	// DeviceConcurrency bounds the devices one tool call talks to at once; 0 uses the default.
	DeviceConcurrency int
	// CredentialTTL is how long the work may act for its user; default 2 h.
	CredentialTTL time.Duration
}

// WithDefaults fills in what s leaves unset.
func (s Settings) WithDefaults() Settings {
	if s.CredentialTTL <= 0 {
		s.CredentialTTL = 2 * time.Hour
	}
	return s
}

// CredentialStore keeps a user's GNS3 token worker-side for as long as their work may run.
type CredentialStore interface {
	Put(ctx context.Context, key, secret string, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// Workflows tells whether a workflow has ended, and whether it ever started (Temporal).
type Workflows interface {
	TurnEnded(ctx context.Context, workflowID string) (ended, started bool, err error)
}

// Work is one piece of durable work being launched.
type Work interface {
	// ID keys the work's credential.
	ID() string
	// Noun names the kind in messages people read: "turn", "call".
	Noun() string
	// Claim records the work's row as running, under its user's cap.
	Claim(ctx context.Context) error
	// Repair closes rows recorded as running whose workflows are gone when they are what made
	// the claim fail with err; it reports whether it closed any, and so whether to claim again.
	Repair(ctx context.Context, err error) bool
	// Start starts the work's workflow once its credential is stored. A step of its own that
	// fails before the workflow is asked to start returns a *StepError naming it.
	Start(ctx context.Context) error
	// Abandon removes or closes the claimed row of work that could not start; why is the failed
	// step, for people.
	Abandon(ctx context.Context, why string) error
}

// StepError is a launch that failed after its row was claimed, already undone: What says which
// step failed, for people.
type StepError struct {
	What string
	Err  error
}

func (e *StepError) Error() string { return e.What + ": " + e.Err.Error() }

func (e *StepError) Unwrap() error { return e.Err }

// maxRepairs bounds the claims retried after a repair: one for each way a row can be in the way
// (the session's running turn, the user's cap).
const maxRepairs = 2

// Launcher launches durable work.
type Launcher struct {
	Credentials CredentialStore
	Workflows   Workflows
	// TTL is how long a stored credential lives.
	TTL time.Duration
	// Grace is how old a running row must be before a workflow that never started counts as
	// gone (Gone); StaleGrace for work whose row is created a moment before its workflow starts
	// and may be found by another request in between.
	Grace time.Duration
	Log   *slog.Logger
}

// Launch claims w's row, stores token as its credential and starts it. An error of the claim is
// returned as it is (nothing to undo); any later failure undoes the credential and the row and
// comes as a *StepError. A nil error means the workflow's start is committed.
func (l *Launcher) Launch(ctx context.Context, w Work, token string) error {
	err := w.Claim(ctx)
	for i := 0; err != nil && i < maxRepairs && w.Repair(ctx, err); i++ {
		err = w.Claim(ctx)
	}
	if err != nil {
		return err
	}
	if err := l.Credentials.Put(ctx, w.ID(), token, l.TTL); err != nil {
		return l.undo(ctx, w, &StepError{What: "Storing the " + w.Noun() + "'s credentials failed", Err: err})
	}
	if err := w.Start(ctx); err != nil {
		var step *StepError
		if !errors.As(err, &step) {
			step = &StepError{What: "The workflow engine did not accept the " + w.Noun(), Err: err}
		}
		return l.undo(ctx, w, step)
	}
	return nil
}

func (l *Launcher) undo(ctx context.Context, w Work, step *StepError) error {
	_ = l.Credentials.Delete(ctx, w.ID())
	if err := w.Abandon(ctx, step.What); err != nil {
		l.Log.Error("undoing a "+w.Noun()+" that could not start", w.Noun(), w.ID(), "error", err)
	}
	l.Log.Error(step.What, w.Noun(), w.ID(), "error", step.Err)
	return step
}

// StaleGrace is the Grace of work whose row other requests may see before its workflow starts
// (a chat turn's session shows it): work being started must not be mistaken for work whose
// starter died.
const StaleGrace = 30 * time.Second

// Gone reports whether the workflow of a row recorded as running since createdAt has ended, or
// never started and no longer will (the row is older than the Grace).
func (l *Launcher) Gone(ctx context.Context, workflowID string, createdAt time.Time) (bool, error) {
	ended, started, err := l.Workflows.TurnEnded(ctx, workflowID)
	if err != nil || !ended || (!started && time.Since(createdAt) < l.Grace) {
		return false, err
	}
	return true, nil
}
