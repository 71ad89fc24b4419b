package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// An injection's plan carries its count and snapshot to the exercise its first fault opens; the
// exercise counts its faults once each (a retried record is kept once); a user's past faults on
// a project are found across exercises, leaving out the one being injected.
func TestInjectionPlanCountsAndPastFaults(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := ExerciseRepository{DB: db}
		require.NoError(t, repo.PlanInjection(ctx, &InjectionPlan{TurnID: "t1", SessionID: "s1", ProjectID: "p", UserID: "u", Requested: 3}))
		require.NoError(t, repo.PlanInjection(ctx, &InjectionPlan{TurnID: "t1", SessionID: "s1", ProjectID: "p", UserID: "u", Requested: 1}),
			"a plan already stored is kept")
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		require.NoError(t, repo.SetSnapshot(ctx, "t1", "snap-1", "exercise-s1-1-start", at))
		plan, err := repo.Plan(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, 3, plan.Requested)
		require.Equal(t, "snap-1", plan.SnapshotID)
		_, err = repo.Plan(ctx, "nope")
		require.ErrorIs(t, err, ErrNotFound)

		record := func(ex *Exercise, call, device string) {
			_, err := repo.RecordFault(ctx, ex, &InjectedFault{ToolCallID: call, NodeID: "n", Device: device, Lines: `["x"]`,
				Description: "d", VerifyCommand: "show ip", VerifyExpect: "x", Hints: "[]"})
			require.NoError(t, err)
		}
		ex1 := &Exercise{ID: ExerciseID("s1", 1), SessionID: "s1", TurnID: "t1", Seq: 1, ProjectID: "p", UserID: "u",
			ExpiresAt: at.Add(time.Hour), Requested: plan.Requested, SnapshotID: plan.SnapshotID}
		record(ex1, "c1", "PC1")
		record(ex1, "c1", "PC1")
		record(ex1, "c2", "PC2")
		got, err := repo.ByTurn(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, 2, got.Faults, "a retried record counts once")
		require.Equal(t, 3, got.Requested)
		require.Equal(t, true, got.View()["reset_available"])
		_, err = repo.RecordFaultWithin(ctx, ex1, &InjectedFault{ToolCallID: "c9", NodeID: "n", Device: "PC9", Lines: "[]",
			Description: "d", VerifyCommand: "show ip", VerifyExpect: "x", Hints: "[]"}, 2)
		require.ErrorIs(t, err, ErrFaultLimit, "no third fault where two were asked for")
		faults, err := repo.Faults(ctx, ex1.ID)
		require.NoError(t, err)
		require.Len(t, faults, 2, "the refused fault is not stored")
		require.NoError(t, repo.SetNote(ctx, got.ID, "Only 2 of the 3"))
		got, _ = repo.Get(ctx, got.ID)
		require.Equal(t, "Only 2 of the 3", got.View()["note"])

		ex2 := &Exercise{ID: ExerciseID("s2", 1), SessionID: "s2", TurnID: "t2", Seq: 1, ProjectID: "p", UserID: "u", ExpiresAt: at.Add(time.Hour)}
		record(ex2, "c3", "PC3")
		other := &Exercise{ID: ExerciseID("s3", 1), SessionID: "s3", TurnID: "t3", Seq: 1, ProjectID: "p", UserID: "bob", ExpiresAt: at.Add(time.Hour)}
		record(other, "c4", "PC4")
		past, err := repo.PastFaults(ctx, "p", "u", ex2.ID)
		require.NoError(t, err)
		require.Len(t, past, 2, "the user's faults of other exercises only")
		require.Equal(t, "PC1", past[0].Device)
		require.Equal(t, "s1", past[0].SessionID)
		require.Equal(t, "PC2", past[1].Device)
	})
}

// A reset's turn is a running turn of the session while it waits, then ends once with its
// answer after the request (and the question stored between them).
func TestExchangeTurnRunsUntilItsAnswer(t *testing.T) {
	forEachChatDB(t, func(t *testing.T, repo *ChatRepository) {
		ctx := context.Background()
		sess, first, _, err := repo.StartTurn(ctx, StartTurnParams{UserID: "u", ProjectID: "p", Message: "inject", Mode: "troubleshooting_injection",
			WorkflowID: func(s, t string) string { return "wf-" + t }})
		require.NoError(t, err)
		_, err = repo.StartExchange(ctx, ExchangeParams{SessionID: sess.ThreadID, UserID: "u", ProjectID: "p", ExerciseID: "ex", Request: "reset"})
		require.ErrorIs(t, err, ErrTurnRunning, "one running turn per session")
		_, err = repo.FinalizeTurn(ctx, FinalizeParams{TurnID: first.ID, Status: domain.TurnCompleted})
		require.NoError(t, err)

		turn, err := repo.StartExchange(ctx, ExchangeParams{SessionID: sess.ThreadID, UserID: "u", ProjectID: "p", ExerciseID: "ex", Request: "reset"})
		require.NoError(t, err)
		require.Equal(t, domain.TurnRunning, turn.Status)
		require.Equal(t, "ex", turn.WorkflowID)
		require.Equal(t, ExerciseRequestMode, turn.Mode)
		applied, err := repo.FinishExchange(ctx, turn.ID, "The lab was reset.", `{"exercise_request":"reset"}`)
		require.NoError(t, err)
		require.True(t, applied)
		applied, err = repo.FinishExchange(ctx, turn.ID, "again", "")
		require.NoError(t, err)
		require.False(t, applied, "a retry ends nothing twice")
		msgs, err := repo.History(ctx, sess.ThreadID, 100)
		require.NoError(t, err)
		last := msgs[len(msgs)-1]
		require.Equal(t, "assistant", last.Role)
		require.Equal(t, "The lab was reset.", last.Content)
		require.Equal(t, "reset", msgs[len(msgs)-2].Content)
		after, err := repo.Turn(ctx, turn.ID)
		require.NoError(t, err)
		require.Equal(t, domain.TurnCompleted, after.Status)
	})
}
