package models

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// MCP call rows on SQLite and PostgreSQL: concurrent starts never run past the per-user limit,
// a finished call keeps its first ending, and a user's approvals are listed per project.
func TestMCPCallsHoldThePerUserLimit(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		repo := MCPCallRepository{DB: db}
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		started, refused := 0, 0
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := repo.Start(ctx, &MCPCall{ID: fmt.Sprintf("c%d", i), WorkflowID: "w", SessionID: "s", UserID: "u1",
					ProjectID: "p", ToolName: "get_gns3_topology", Client: "agent", Mode: "teaching_assistant"}, 3)
				mu.Lock()
				defer mu.Unlock()
				var limit *LimitError
				switch {
				case err == nil:
					started++
				case errors.As(err, &limit):
					refused++
					require.Equal(t, 3, limit.Max)
				default:
					// SQLite may answer "busy" to a writer that lost the race; it started nothing.
					refused++
				}
			}()
		}
		wg.Wait()
		require.LessOrEqual(t, started, 3)
		require.Equal(t, 6, started+refused)
		running, err := repo.Running(ctx, "u1")
		require.NoError(t, err)
		require.Len(t, running, started)

		id := running[0].ID
		require.NoError(t, repo.SaveResult(ctx, id, `{"success":true}`))
		require.NoError(t, repo.Finish(ctx, id, domain.MCPCallCompleted, "", time.Now()))
		require.NoError(t, repo.Finish(ctx, id, domain.MCPCallFailed, `{"success":false}`, time.Now()))
		got, err := repo.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.MCPCallCompleted, got.Status, "the first ending stands")
		require.Equal(t, `{"success":true}`, got.Result)
		require.NotNil(t, got.FinishedAt)
		require.ErrorIs(t, repo.SaveResult(ctx, "nope", "x"), ErrNotFound)

		recent, err := repo.Recent(ctx, "u1", 2)
		require.NoError(t, err)
		require.Len(t, recent, min(2, started))

		approvals := ApprovalRepository{DB: db}
		for i, pid := range []string{"p", "p", "q"} {
			_, err := approvals.Create(ctx, &Approval{ID: fmt.Sprintf("a%d", i), SessionID: "mcp-session", TurnID: fmt.Sprintf("call%d", i), ToolCallID: "c",
				ProjectID: pid, UserID: "u1", ToolName: "execute_vpcs_commands", Kind: domain.ApprovalKindConfig, WorkflowID: "w",
				Plan: `{}`, Status: domain.ApprovalPending, ExpiresAt: time.Now().Add(time.Hour)})
			require.NoError(t, err)
		}
		_, err = approvals.Decide(ctx, "a0", Decision{Status: domain.ApprovalApproved, By: "alice", At: time.Now()})
		require.NoError(t, err)
		pending, err := approvals.ForProject(ctx, "p", "u1", domain.ApprovalPending)
		require.NoError(t, err)
		require.Len(t, pending, 1)
		require.Equal(t, "a1", pending[0].ID)
		all, err := approvals.ForProject(ctx, "p", "u1", "")
		require.NoError(t, err)
		require.Len(t, all, 2)
		none, err := approvals.ForProject(ctx, "p", "someone-else", "")
		require.NoError(t, err)
		require.Empty(t, none)
	})
}
