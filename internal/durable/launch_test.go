package durable

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"
)

// recorder is a Work and a CredentialStore that write down every step, in order.
type recorder struct {
	steps    []string
	claims   []error // what each claim answers, in turn; nil past the end
	repairs  int     // how many repairs say they closed something
	putErr   error
	startErr error
}

func (r *recorder) ID() string   { return "w1" }
func (r *recorder) Noun() string { return "turn" }

func (r *recorder) Claim(context.Context) error {
	r.steps = append(r.steps, "claim")
	if len(r.claims) == 0 {
		return nil
	}
	err := r.claims[0]
	r.claims = r.claims[1:]
	return err
}

func (r *recorder) Repair(context.Context, error) bool {
	r.steps = append(r.steps, "repair")
	if r.repairs == 0 {
		return false
	}
	r.repairs--
	return true
}

func (r *recorder) Start(context.Context) error {
	r.steps = append(r.steps, "start")
	return r.startErr
}

func (r *recorder) Abandon(_ context.Context, why string) error {
	r.steps = append(r.steps, "abandon: "+why)
	return nil
}

func (r *recorder) Put(_ context.Context, key, secret string, _ time.Duration) error {
	r.steps = append(r.steps, "put "+key+" "+secret)
	return r.putErr
}

func (r *recorder) Delete(_ context.Context, key string) error {
	r.steps = append(r.steps, "delete "+key)
	return nil
}

func launcherFor(r *recorder) *Launcher {
	return &Launcher{Credentials: r, TTL: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestTheCredentialIsStoredBeforeTheStart(t *testing.T) {
	r := &recorder{}
	if err := launcherFor(r).Launch(context.Background(), r, "tok"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"claim", "put w1 tok", "start"}; !slices.Equal(r.steps, want) {
		t.Fatalf("steps %q, want %q", r.steps, want)
	}
}

func TestAFailedStartUndoesTheCredentialAndTheRow(t *testing.T) {
	r := &recorder{startErr: errors.New("unavailable")}
	err := launcherFor(r).Launch(context.Background(), r, "tok")
	var step *StepError
	if !errors.As(err, &step) || step.What != "The workflow engine did not accept the turn" {
		t.Fatalf("error %v", err)
	}
	want := []string{"claim", "put w1 tok", "start", "delete w1", "abandon: The workflow engine did not accept the turn"}
	if !slices.Equal(r.steps, want) {
		t.Fatalf("steps %q, want %q", r.steps, want)
	}
}

func TestAFailedCredentialNeverStarts(t *testing.T) {
	r := &recorder{putErr: errors.New("down")}
	err := launcherFor(r).Launch(context.Background(), r, "tok")
	var step *StepError
	if !errors.As(err, &step) || step.What != "Storing the turn's credentials failed" {
		t.Fatalf("error %v", err)
	}
	if slices.Contains(r.steps, "start") || r.steps[len(r.steps)-1] != "abandon: Storing the turn's credentials failed" {
		t.Fatalf("steps %q", r.steps)
	}
}

func TestAKindsOwnStepNamesItsFailure(t *testing.T) {
	r := &recorder{startErr: &StepError{What: "The event log is unavailable", Err: errors.New("full")}}
	err := launcherFor(r).Launch(context.Background(), r, "tok")
	var step *StepError
	if !errors.As(err, &step) || step.What != "The event log is unavailable" {
		t.Fatalf("error %v", err)
	}
}

func TestARepairedClaimIsTriedAgainAndAnUnrepairedOneReturnsAsItIs(t *testing.T) {
	full := errors.New("at the cap")
	r := &recorder{claims: []error{full}, repairs: 1}
	if err := launcherFor(r).Launch(context.Background(), r, "tok"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"claim", "repair", "claim", "put w1 tok", "start"}; !slices.Equal(r.steps, want) {
		t.Fatalf("steps %q, want %q", r.steps, want)
	}

	r = &recorder{claims: []error{full}}
	if err := launcherFor(r).Launch(context.Background(), r, "tok"); !errors.Is(err, full) {
		t.Fatalf("error %v, want the claim's own", err)
	}
	if want := []string{"claim", "repair"}; !slices.Equal(r.steps, want) {
		t.Fatalf("steps %q, want %q (nothing to undo)", r.steps, want)
	}
}

// notFound is a Workflows to which no workflow exists.
type notFound struct{}

func (notFound) TurnEnded(context.Context, string) (bool, bool, error) { return true, false, nil }

func TestAWorkflowNeverStartedIsGoneOnlyPastTheGrace(t *testing.T) {
	ctx := context.Background()
	l := &Launcher{Workflows: notFound{}, Grace: StaleGrace}
	if gone, _ := l.Gone(ctx, "w", time.Now()); gone {
		t.Fatal("a row created just now is being started, not gone")
	}
	if gone, _ := l.Gone(ctx, "w", time.Now().Add(-StaleGrace-time.Second)); !gone {
		t.Fatal("a row past the grace whose workflow never started is gone")
	}
	l.Grace = 0
	if gone, _ := l.Gone(ctx, "w", time.Now()); !gone {
		t.Fatal("without a grace a missing workflow is gone at once")
	}
}
