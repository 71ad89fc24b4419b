package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// The approval rows behave the same on SQLite and PostgreSQL: a retried create returns the
// first row, the first decision stands, and an expired approval cannot be approved afterwards.
func TestApprovalRowsKeepTheFirstDecision(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		repo := ApprovalRepository{DB: db}
		ctx := context.Background()
		exp := time.Now().Add(30 * time.Minute).UTC().Truncate(time.Second)
		a, err := repo.Create(ctx, &Approval{ID: "a1", SessionID: "s", TurnID: "t", ToolCallID: "c", ProjectID: "p", UserID: "u",
			ToolName: "execute_vpcs_commands", Kind: domain.ApprovalKindConfig, WorkflowID: "w", Plan: `{"devices":[]}`, Status: domain.ApprovalPending, ExpiresAt: exp})
		require.NoError(t, err)
		require.Equal(t, domain.ApprovalPending, a.Status)
		again, err := repo.Create(ctx, &Approval{ID: "a1-retry", SessionID: "s", TurnID: "t", ToolCallID: "c", ProjectID: "p", UserID: "u",
			ToolName: "x", Kind: domain.ApprovalKindConfig, WorkflowID: "w", Plan: `{}`, Status: domain.ApprovalPending, ExpiresAt: exp.Add(time.Hour)})
		require.NoError(t, err)
		require.Equal(t, "a1", again.ID, "a retried request finds the row it wrote")
		require.True(t, again.ExpiresAt.Equal(exp))
		counts, err := repo.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, []ApprovalCount{{Kind: domain.ApprovalKindConfig, Status: domain.ApprovalPending, N: 1}}, counts, "the retry made no second row")

		d, err := repo.Decide(ctx, "a1", Decision{Status: domain.ApprovalRejected, By: "alice", Comment: "no", At: time.Now()})
		require.NoError(t, err)
		require.Equal(t, domain.ApprovalRejected, d.Status)
		counts, err = repo.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, []ApprovalCount{{Kind: domain.ApprovalKindConfig, Status: domain.ApprovalRejected, N: 1}}, counts)
		_, err = repo.Decide(ctx, "a1", Decision{Status: domain.ApprovalRejected, By: "alice", Comment: "no", At: time.Now()})
		require.NoError(t, err, "recording the same decision again is a no-op")
		d, err = repo.Decide(ctx, "a1", Decision{Status: domain.ApprovalApproved, By: "alice", Comment: "yes", At: time.Now()})
		require.ErrorIs(t, err, ErrAlreadyDecided)
		require.Equal(t, domain.ApprovalRejected, d.Status, "the first decision stands")
		require.Equal(t, "no", d.Comment)

		list, err := repo.ForSession(ctx, "s")
		require.NoError(t, err)
		require.Len(t, list, 1)
		_, err = repo.Get(ctx, "missing")
		require.ErrorIs(t, err, ErrNotFound)

		jobs := ConfigJobRepository{DB: db}
		require.NoError(t, jobs.Save(ctx, &ConfigJob{ID: "config-job-t-c", SessionID: "s", TurnID: "t", ToolCallID: "c", ProjectID: "p", UserID: "u", ToolName: "x", Status: domain.JobWaiting}))
		require.NoError(t, jobs.Save(ctx, &ConfigJob{ID: "config-job-t-c", SessionID: "s", TurnID: "t", ToolCallID: "c", ProjectID: "p", UserID: "u", ToolName: "x", Status: domain.JobCompleted, Devices: 2}))
		own, err := jobs.List(ctx, "p", "u", 10)
		require.NoError(t, err)
		require.Len(t, own, 1)
		require.Equal(t, domain.JobCompleted, own[0].Status)
		other, err := jobs.List(ctx, "p", "someone-else", 10)
		require.NoError(t, err)
		require.Empty(t, other)
	})
}
