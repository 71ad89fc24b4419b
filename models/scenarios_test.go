package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

func TestScenariosHadAreTheUsersOwnOnEveryProject(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := ExerciseRepository{DB: db}
		record := func(session string, seq int, user, project, scenario string) {
			t.Helper()
			_, err := repo.RecordFault(ctx, &Exercise{ID: ExerciseID(session, seq), SessionID: session, TurnID: session + "-t" + string(rune('0'+seq)),
				Seq: seq, ProjectID: project, UserID: user, ExpiresAt: time.Now().Add(time.Hour)},
				&InjectedFault{ToolCallID: "c", NodeID: "n", Device: "R1", Lines: "[]", Description: "d", VerifyCommand: "show ip", VerifyExpect: "x",
					Hints: "[]", Scenario: scenario})
			require.NoError(t, err)
		}
		record("s1", 1, "alice", "p1", "ospf_issues/ospf_area_mismatch")
		record("s2", 1, "alice", "p2", "bgp_issues/bgp_wrong_as")
		record("s2", 2, "alice", "p2", "") // chosen freely
		record("s3", 1, "bob", "p1", "dhcp_issues/dhcp_no_server")
		got, err := repo.ScenariosHad(ctx, "alice")
		require.NoError(t, err)
		require.Equal(t, []string{"bgp_issues/bgp_wrong_as", "ospf_issues/ospf_area_mismatch"}, got)
		none, err := repo.ScenariosHad(ctx, "carol")
		require.NoError(t, err)
		require.Empty(t, none)
	})
}
