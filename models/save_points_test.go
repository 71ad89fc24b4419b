package models

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// A save point is written before its snapshot exists, written again by a retried attempt, and
// found by its project, snapshot name and time (GNS3 renews snapshot ids), never by another's.
func TestSavePointFoundByItsSnapshot(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := SavePointRepository{DB: db}
		sp := &SavePoint{ID: "turn-1/c1", ProjectID: "p", SnapshotName: "before", TurnID: "turn-1", ToolCallID: "c1", UserID: "u"}
		sp.SetDevices([]SavePointDevice{{Name: "PC1", NodeType: "vpcs", Platform: "vpcs", Status: "started", SaveCommand: "save", Saved: true,
			ReadCommand: "show ip", Config: "IP/MASK : 10.0.0.1/24"}})
		require.NoError(t, repo.Record(ctx, sp))
		at := time.Unix(1796540920, 0)
		_, err := repo.ForSnapshot(ctx, "p", "before", at)
		require.ErrorIs(t, err, ErrNotFound, "not found before its snapshot is taken")

		sp.SetDevices([]SavePointDevice{{Name: "PC1", Saved: true, Config: "IP/MASK : 10.0.0.2/24"}, {Name: "PC2", Saved: true}})
		require.NoError(t, repo.Record(ctx, sp), "a retried attempt writes the row again")
		require.NoError(t, repo.Taken(ctx, sp.ID, "snap-1", at, 1500*time.Millisecond))
		require.ErrorIs(t, repo.Taken(ctx, "nope", "x", at, 0), ErrNotFound)

		got, err := repo.ForSnapshot(ctx, "p", "before", at)
		require.NoError(t, err)
		require.Equal(t, int64(1500), got.PausedMS)
		require.Equal(t, "snap-1", got.SnapshotID)
		devs := got.DeviceList()
		require.Len(t, devs, 2)
		require.Equal(t, "IP/MASK : 10.0.0.2/24", devs[0].Config)

		for _, miss := range []struct {
			project, name string
			at            time.Time
		}{{"q", "before", at}, {"p", "after", at}, {"p", "before", at.Add(time.Second)}} {
			_, err := repo.ForSnapshot(ctx, miss.project, miss.name, miss.at)
			require.ErrorIs(t, err, ErrNotFound, "%+v", miss)
		}
	})
}
