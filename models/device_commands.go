package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Device command statuses. A command is written as sent (or queued, for configuration lines)
// before it goes out, so a worker that dies mid-command leaves a trace and a retry knows not to
// send a change twice.
const (
	CommandQueued  = "queued"
	CommandSent    = "sent"
	CommandOK      = "ok"
	CommandFailed  = "failed"
	CommandBlocked = "blocked"
	CommandUnknown = "unknown" // may or may not have run; never re-sent
	CommandSkipped = "skipped" // not sent because an earlier line failed or may not have run
)

// DeviceCommand is one command a tool call meant for one device: the audit of what the copilot
// sent to the lab, and the record that keeps a retried activity from sending it again.
type DeviceCommand struct {
	ID         uint   `gorm:"primaryKey;autoIncrement"`
	TurnID     string `gorm:"size:64;not null;uniqueIndex:idx_device_command,priority:1"`
	ToolCallID string `gorm:"size:200;not null;uniqueIndex:idx_device_command,priority:2"`
	NodeID     string `gorm:"size:64;not null;uniqueIndex:idx_device_command,priority:3"`
	Seq        int    `gorm:"not null;uniqueIndex:idx_device_command,priority:4"`
	SessionID  string `gorm:"size:64;not null"`
	// Origin is who asked: "chat" for the chat page, "mcp:<client>" for an MCP client.
	Origin     string `gorm:"size:200;not null;default:chat"`
	UserID     string `gorm:"size:64;not null;index"`
	ProjectID  string `gorm:"size:64;not null;index"`
	DeviceName string `gorm:"size:200;not null"`
	Tool       string `gorm:"size:100;not null"`
	Command    string `gorm:"type:text;not null"`
	Config     bool   `gorm:"not null;default:false"`
	Status     string `gorm:"size:16;not null"`
	Blocked    bool   `gorm:"not null;default:false"`
	Reason     string `gorm:"type:text"`
	Output     string `gorm:"type:text"`
	Error      string `gorm:"type:text"`
	CreatedAt  time.Time
	SentAt     *time.Time
	FinishedAt *time.Time
	// HostKey is the fingerprint of the host key an SSH console showed when the command went
	// over SSH ("ssh-ed25519 SHA256:…"), empty over telnet. GNS3 makes a new key every time a
	// node starts, so the key is accepted and kept here for the audit rather than pinned.
	HostKey string `gorm:"size:200"`
	// Claims counts the attempts that took this record on to send its command. A claim names
	// the count it read, so two attempts that read the same record cannot both take it, even
	// when the first leaves it in the status both read (a line re-sent after a crash is "sent"
	// before and after).
	Claims int `gorm:"not null;default:0"`
}

// DeviceRepository reads and writes device command records.
type DeviceRepository struct{ DB *gorm.DB }

// MigrateDeviceCommands creates the device command table.
func MigrateDeviceCommands(db *gorm.DB) error { return db.AutoMigrate(&DeviceCommand{}) }

// Commands returns a tool call's records for one device ("" for every device), in order.
func (r DeviceRepository) Commands(ctx context.Context, turnID, callID, nodeID string) ([]DeviceCommand, error) {
	q := r.DB.WithContext(ctx).Where("turn_id = ? AND tool_call_id = ?", turnID, callID)
	if nodeID != "" {
		q = q.Where("node_id = ?", nodeID)
	}
	var out []DeviceCommand
	err := q.Order("node_id").Order("seq").Find(&out).Error
	return out, err
}

// CallRef names one tool call of a turn.
type CallRef struct{ TurnID, CallID string }

// CommandsOfCalls returns the records of several tool calls in one query, each call's in the
// order Commands gives them.
func (r DeviceRepository) CommandsOfCalls(ctx context.Context, calls []CallRef) (map[CallRef][]DeviceCommand, error) {
	out := map[CallRef][]DeviceCommand{}
	if len(calls) == 0 {
		return out, nil
	}
	pairs := make([][]any, len(calls))
	for i, c := range calls {
		pairs[i] = []any{c.TurnID, c.CallID}
	}
	var rows []DeviceCommand
	err := r.DB.WithContext(ctx).Where("(turn_id, tool_call_id) IN ?", pairs).
		Order("turn_id").Order("tool_call_id").Order("node_id").Order("seq").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, c := range rows {
		k := CallRef{TurnID: c.TurnID, CallID: c.ToolCallID}
		out[k] = append(out[k], c)
	}
	return out, nil
}

// Save writes a record, replacing the one with the same turn, call, node and position.
func (r DeviceRepository) Save(ctx context.Context, c *DeviceCommand) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	return r.writer(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "turn_id"}, {Name: "tool_call_id"}, {Name: "node_id"}, {Name: "seq"}},
		DoUpdates: clause.AssignmentColumns([]string{"status", "output", "error", "sent_at", "finished_at", "reason", "blocked", "host_key"}),
	}).Create(c).Error
}

// Claim writes c only if the stored record of its slot is still as the caller read it (from:
// its status and claim count; nil when there was none), and reports whether it did; c then
// carries the new claim count. A command is sent only by the attempt whose claim wrote it: two
// attempts of one activity (a retry started while the attempt it replaces is still running)
// that read the same record cannot both send its line, since only one of them moves it on.
func (r DeviceRepository) Claim(ctx context.Context, c *DeviceCommand, from *DeviceCommand) (bool, error) {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	db := r.writer(ctx)
	if from == nil {
		claims := c.Claims
		c.Claims = 1
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(c)
		if res.Error != nil || res.RowsAffected != 1 {
			c.Claims = claims
			return false, res.Error
		}
		return true, nil
	}
	res := db.Model(&DeviceCommand{}).
		Where("turn_id = ? AND tool_call_id = ? AND node_id = ? AND seq = ? AND status = ? AND claims = ?",
			c.TurnID, c.ToolCallID, c.NodeID, c.Seq, from.Status, from.Claims).
		Updates(map[string]any{"status": c.Status, "sent_at": c.SentAt, "finished_at": c.FinishedAt,
			"output": c.Output, "error": c.Error, "reason": c.Reason, "blocked": c.Blocked, "host_key": c.HostKey, "claims": from.Claims + 1})
	if res.Error != nil || res.RowsAffected != 1 {
		return false, res.Error
	}
	c.Claims = from.Claims + 1
	return true, nil
}

// writer is the handle records are written through. Each write is one statement, atomic on
// its own, so GORM's default transaction around it only adds a BEGIN and a COMMIT on the one
// SQLite writer that every device of every job queues for: two thirds of the round trips of a
// 200-device job's records. The few statements it writes are prepared once (GORM's cache, on
// the writer) instead of on every record: preparing them was most of SQLite's own time there.
func (r DeviceRepository) writer(ctx context.Context) *gorm.DB {
	return r.DB.Session(&gorm.Session{SkipDefaultTransaction: true, PrepareStmt: true, Context: ctx})
}

// Audit lists what was sent to a project's devices, newest first.
func (r DeviceRepository) Audit(ctx context.Context, projectID string, limit int) ([]DeviceCommand, error) {
	var out []DeviceCommand
	err := r.DB.WithContext(ctx).Where("project_id = ?", projectID).Order("created_at DESC").Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// Slots of the records that are not commands of the call: a configuration job's reads of the
// device's configuration before and after applying, so the audit holds both.
const (
	SeqReadBefore = -2
	SeqReadAfter  = -3
	// SeqReadRecovery is the read a retry makes after a crash to see which lines took effect.
	SeqReadRecovery = -4
	// SeqReadBack is the read of a device started again by a save point or a restore, compared
	// with what it saved.
	SeqReadBack = -5
)

// CommandApplied marks a line whose sending was cut short by a crash but which the device's
// configuration, read back on the retry, shows in effect.
const CommandApplied = "applied"
