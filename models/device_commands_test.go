package models

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// A claim moves a record on only from the record its caller read (status and claim count), on
// SQLite and PostgreSQL.
func TestDeviceCommandClaimMovesOnlyFromTheStatusRead(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		repo := DeviceRepository{DB: db}
		ctx := context.Background()
		rec := func(status string) *DeviceCommand {
			return &DeviceCommand{TurnID: "t", ToolCallID: "c", NodeID: "n", Seq: 0, SessionID: "s", UserID: "u",
				ProjectID: "p", DeviceName: "R1", Tool: "x", Command: "no shutdown", Config: true, Status: status}
		}
		read := func(status string, claims int) *DeviceCommand { return &DeviceCommand{Status: status, Claims: claims} }
		first := rec(CommandQueued)
		ok, err := repo.Claim(ctx, first, nil)
		require.NoError(t, err)
		require.True(t, ok, "a new record is written")
		require.Equal(t, 1, first.Claims)
		other := rec(CommandQueued)
		ok, err = repo.Claim(ctx, other, nil)
		require.NoError(t, err)
		require.False(t, ok, "a record another attempt wrote meanwhile is not overwritten")
		require.Zero(t, other.Claims)

		ok, err = repo.Claim(ctx, rec(CommandSent), read(CommandQueued, 1))
		require.NoError(t, err)
		require.True(t, ok, "queued → sent")
		ok, err = repo.Claim(ctx, rec(CommandSent), read(CommandQueued, 1))
		require.NoError(t, err)
		require.False(t, ok, "the second attempt to send the same queued line is refused")
		ok, err = repo.Claim(ctx, rec(CommandQueued), read(CommandQueued, 1))
		require.NoError(t, err)
		require.False(t, ok, "a sent line is not queued again by an attempt that read it queued")

		// After a crash two retries read the line "sent" (claimed twice so far); the read-back
		// says it is not in effect, and each would send it again, leaving it "sent". Only the
		// first may: the status is the same before and after, the claim count is not.
		resend := rec(CommandSent)
		ok, err = repo.Claim(ctx, resend, read(CommandSent, 2))
		require.NoError(t, err)
		require.True(t, ok, "sent → sent again by the first retry")
		require.Equal(t, 3, resend.Claims)
		ok, err = repo.Claim(ctx, rec(CommandSent), read(CommandSent, 2))
		require.NoError(t, err)
		require.False(t, ok, "the second retry, which read the same record, does not send it twice")

		recs, err := repo.Commands(ctx, "t", "c", "n")
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, CommandSent, recs[0].Status)
	})
}
