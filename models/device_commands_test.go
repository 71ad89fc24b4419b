package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
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

// Several calls' records come back in one query, grouped by call, each in Commands' order; an
// approval list by ids likewise; on SQLite and PostgreSQL.
func TestRecordsAndApprovalsOfManyJobsInOneQueryEach(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := DeviceRepository{DB: db}
		add := func(turn, call, node string, seq int) {
			require.NoError(t, repo.Save(ctx, &DeviceCommand{TurnID: turn, ToolCallID: call, NodeID: node, Seq: seq, SessionID: "s",
				UserID: "u", ProjectID: "p", DeviceName: node, Tool: "x", Command: "c", Status: CommandOK}))
		}
		add("t1", "c1", "n2", 0)
		add("t1", "c1", "n1", 1)
		add("t1", "c1", "n1", 0)
		add("t1", "c2", "n1", 0)
		add("t2", "c1", "n1", 0) // same call id in another turn: not asked for
		got, err := repo.CommandsOfCalls(ctx, []CallRef{{"t1", "c1"}, {"t1", "c2"}, {"t9", "c9"}})
		require.NoError(t, err)
		for _, call := range []CallRef{{"t1", "c1"}, {"t1", "c2"}} {
			one, err := repo.Commands(ctx, call.TurnID, call.CallID, "")
			require.NoError(t, err)
			require.Equal(t, one, got[call], "%v as Commands gives it", call)
		}
		require.Len(t, got[CallRef{"t1", "c1"}], 3)
		require.Len(t, got, 2, "nothing for a call without records, nothing of calls not asked for")
		empty, err := repo.CommandsOfCalls(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, empty)

		approvals := ApprovalRepository{DB: db}
		for _, id := range []string{"a1", "a2"} {
			_, err := approvals.Create(ctx, &Approval{ID: id, SessionID: "s", TurnID: id, ToolCallID: "c", ProjectID: "p", UserID: "u",
				ToolName: "x", Kind: domain.ApprovalKindConfig, WorkflowID: "w", Plan: `{}`, Status: domain.ApprovalPending, ExpiresAt: time.Now().Add(time.Hour)})
			require.NoError(t, err)
		}
		byID, err := approvals.GetMany(ctx, []string{"a2", "missing"})
		require.NoError(t, err)
		require.Len(t, byID, 1)
		require.Equal(t, "a2", byID["a2"].ID)
		none, err := approvals.GetMany(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

// A device_commands table made before SSH consoles gains the host key column in Migrate, and
// keeps its records.
func TestMigrateAddsTheHostKeyToAnOlderDeviceCommandsTable(t *testing.T) {
	for name, open := range testDatabases {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			// The table as it was: DeviceCommand without HostKey.
			type deviceCommand struct {
				ID                                                    uint `gorm:"primaryKey;autoIncrement"`
				TurnID, ToolCallID, NodeID, SessionID, Origin, UserID string
				ProjectID, DeviceName, Tool, Command, Status, Reason  string
				Output, Error                                         string
				Seq, Claims                                           int
				Config, Blocked                                       bool
				CreatedAt                                             time.Time
				SentAt, FinishedAt                                    *time.Time
			}
			require.NoError(t, db.Table("device_commands").AutoMigrate(&deviceCommand{}))
			require.NoError(t, db.Table("device_commands").Create(&deviceCommand{TurnID: "t0", ToolCallID: "c", NodeID: "n", SessionID: "s",
				Origin: "chat", UserID: "u", ProjectID: "p", DeviceName: "PC1", Tool: "x", Command: "show ip", Status: "ok"}).Error)
			require.False(t, db.Migrator().HasColumn(&DeviceCommand{}, "host_key"))

			require.NoError(t, Migrate(db))
			require.True(t, db.Migrator().HasColumn(&DeviceCommand{}, "host_key"))
			repo := DeviceRepository{DB: db}
			ctx := context.Background()
			old, err := repo.Commands(ctx, "t0", "c", "")
			require.NoError(t, err)
			require.Len(t, old, 1)
			require.Equal(t, "show ip", old[0].Command)
			require.Empty(t, old[0].HostKey)
			rec := &DeviceCommand{TurnID: "t1", ToolCallID: "c", NodeID: "n", SessionID: "s", UserID: "u", ProjectID: "p",
				DeviceName: "PC1", Tool: "x", Command: "show ip", Status: "ok", HostKey: "ssh-ed25519 SHA256:abc"}
			require.NoError(t, repo.Save(ctx, rec))
			got, err := repo.Commands(ctx, "t1", "c", "")
			require.NoError(t, err)
			require.Equal(t, "ssh-ed25519 SHA256:abc", got[0].HostKey)
		})
	}
}
