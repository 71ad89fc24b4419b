package models

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// SavePoint is a GNS3 snapshot the copilot took of a running lab: which nodes ran then, and the
// configuration each one saved on its device, so that a restore of that snapshot starts them
// again and reads each one back against what it had. GNS3 keeps neither: its snapshot holds
// the nodes' files, not which of them ran, and its snapshot ids change whenever the project is
// opened again, so a save point is found by its project, snapshot name and time.
//
// Save points belong to the project, not to a conversation: a snapshot is restored long after
// the session that took it, so pruning old sessions leaves them.
type SavePoint struct {
	// ID is the call that took it: the turn (or MCP call) and its tool call, so a retried
	// attempt writes the same row.
	ID           string `gorm:"primaryKey;size:200"`
	ProjectID    string `gorm:"size:64;not null;index:idx_save_point_snapshot,priority:1"`
	SnapshotName string `gorm:"size:200;not null;default:'';index:idx_save_point_snapshot,priority:2"`
	// SnapshotID is the id GNS3 gave when it was taken (informative: it changes), SnapshotAt
	// its time in Unix seconds as GNS3 lists it; 0 until the snapshot is taken.
	SnapshotID string `gorm:"size:64;not null;default:''"`
	SnapshotAt int64  `gorm:"not null;default:0"`
	TurnID     string `gorm:"size:64;not null;default:''"`
	ToolCallID string `gorm:"size:100;not null;default:''"`
	UserID     string `gorm:"size:64;not null;default:''"`
	// Devices is the JSON of []SavePointDevice, one per node that ran.
	Devices string `gorm:"type:text;not null;default:'[]'"`
	// PausedMS is how long the lab was paused for the snapshot, once it was taken.
	PausedMS  int64 `gorm:"not null;default:0"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SavePointDevice is one node that ran at a save point and what it saved.
type SavePointDevice struct {
	Name     string `json:"name"`
	NodeType string `json:"node_type"`
	Platform string `json:"platform,omitempty"`
	// Status is the node's status before the pause (started or suspended).
	Status string `json:"status"`
	// SaveCommand is what saved its configuration ("" when its platform has none), Saved whether
	// it did, Error why not.
	SaveCommand string `json:"save_command,omitempty"`
	Saved       bool   `json:"saved"`
	Error       string `json:"error,omitempty"`
	// ReadCommand and Config are the configuration read right after the save, which a restore
	// compares the device with.
	ReadCommand string `json:"read_command,omitempty"`
	Config      string `json:"config,omitempty"`
}

// DeviceList decodes Devices.
func (p *SavePoint) DeviceList() []SavePointDevice {
	var out []SavePointDevice
	_ = json.Unmarshal([]byte(p.Devices), &out)
	return out
}

// SetDevices encodes devices into Devices.
func (p *SavePoint) SetDevices(devices []SavePointDevice) {
	if devices == nil {
		devices = []SavePointDevice{}
	}
	b, _ := json.Marshal(devices)
	p.Devices = string(b)
}

// MigrateSavePoints creates the save point table.
func MigrateSavePoints(db *gorm.DB) error { return db.AutoMigrate(&SavePoint{}) }

// SavePointRepository stores and finds save points.
type SavePointRepository struct{ DB *gorm.DB }

// Record stores what a save point saved, before its snapshot is taken; a retried attempt
// replaces what the earlier one wrote, the snapshot fields included.
func (r SavePointRepository) Record(ctx context.Context, p *SavePoint) error {
	return r.DB.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"project_id", "snapshot_name", "snapshot_id", "snapshot_at", "turn_id", "tool_call_id", "user_id", "devices", "paused_ms", "updated_at"}),
	}).Create(p).Error
}

// Taken records the snapshot a save point took and how long the lab was paused for it.
func (r SavePointRepository) Taken(ctx context.Context, id, snapshotID string, at time.Time, paused time.Duration) error {
	res := r.DB.WithContext(ctx).Model(&SavePoint{}).Where("id = ?", id).Updates(map[string]any{
		"snapshot_id": snapshotID, "snapshot_at": at.Unix(), "paused_ms": paused.Milliseconds(), "updated_at": time.Now().UTC()})
	if res.Error == nil && res.RowsAffected == 0 {
		return ErrNotFound
	}
	return res.Error
}

// ForSnapshot finds the save point of a project's snapshot by its name and time (ErrNotFound for
// a snapshot the copilot did not take while nodes ran).
func (r SavePointRepository) ForSnapshot(ctx context.Context, projectID, name string, at time.Time) (*SavePoint, error) {
	return first[SavePoint](r.DB.WithContext(ctx).Where("project_id = ? AND snapshot_name = ? AND snapshot_at = ?", projectID, name, at.Unix()).
		Order("updated_at DESC"))
}

// Get loads a save point by its ID (ErrNotFound when none was recorded).
func (r SavePointRepository) Get(ctx context.Context, id string) (*SavePoint, error) {
	return first[SavePoint](r.DB.WithContext(ctx).Where("id = ?", id))
}
