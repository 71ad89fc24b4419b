package models

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// A claim moves a record on only from the status its caller read, on SQLite and PostgreSQL.
func TestDeviceCommandClaimMovesOnlyFromTheStatusRead(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		repo := DeviceRepository{DB: db}
		ctx := context.Background()
		rec := func(status string) *DeviceCommand {
			return &DeviceCommand{TurnID: "t", ToolCallID: "c", NodeID: "n", Seq: 0, SessionID: "s", UserID: "u",
				ProjectID: "p", DeviceName: "R1", Tool: "x", Command: "no shutdown", Config: true, Status: status}
		}
		ok, err := repo.Claim(ctx, rec(CommandQueued), "")
		require.NoError(t, err)
		require.True(t, ok, "a new record is written")
		ok, err = repo.Claim(ctx, rec(CommandQueued), "")
		require.NoError(t, err)
		require.False(t, ok, "a record another attempt wrote meanwhile is not overwritten")

		ok, err = repo.Claim(ctx, rec(CommandSent), CommandQueued)
		require.NoError(t, err)
		require.True(t, ok, "queued → sent")
		ok, err = repo.Claim(ctx, rec(CommandSent), CommandQueued)
		require.NoError(t, err)
		require.False(t, ok, "the second attempt to send the same queued line is refused")
		ok, err = repo.Claim(ctx, rec(CommandQueued), CommandQueued)
		require.NoError(t, err)
		require.False(t, ok, "a sent line is not queued again by an attempt that read it queued")

		recs, err := repo.Commands(ctx, "t", "c", "n")
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, CommandSent, recs[0].Status)
	})
}
