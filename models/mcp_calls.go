package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// MCPCall is one tool call an MCP client made: who, from which client, on which project, and,
// once its workflow has finished, the tool's result in the standard format. The row lets a
// client that lost its connection fetch the result again by call id, and bounds how many calls
// one user runs at once.
type MCPCall struct {
	ID         string `gorm:"primaryKey;size:64"`
	WorkflowID string `gorm:"size:300;not null"`
	// SessionID is the MCP session the call came in on.
	SessionID string `gorm:"size:200;not null"`
	UserID    string `gorm:"size:64;not null;index:idx_mcp_call_user_status,priority:1"`
	ProjectID string `gorm:"size:64;not null;index"`
	ToolName  string `gorm:"size:100;not null"`
	// Client is the MCP client's name as it gave it on initialize.
	Client string `gorm:"size:200;not null"`
	Mode   string `gorm:"size:40;not null"`
	Status string `gorm:"size:16;not null;index:idx_mcp_call_user_status,priority:2"`
	// Result is the tool's result (standard format JSON), set when the tool finished.
	Result     string `gorm:"type:text"`
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// MCPCallRepository reads and writes MCP calls.
type MCPCallRepository struct{ DB *gorm.DB }

// MigrateMCPCalls creates the MCP call table.
func MigrateMCPCalls(db *gorm.DB) error { return db.AutoMigrate(&MCPCall{}) }

// Start records a new running call, unless the user already has max running (0: no limit; a *LimitError past it),
// in one transaction so two concurrent calls cannot both slip under the limit.
func (r MCPCallRepository) Start(ctx context.Context, c *MCPCall, max int) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	c.Status = domain.MCPCallRunning
	return r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if max > 0 {
			running, err := countRunningLocked(tx, "gns3copilot:mcp-calls:"+c.UserID, func() (n int64, err error) {
				return n, tx.Model(&MCPCall{}).Where(runningOfUser(domain.MCPCallRunning), c.UserID).Count(&n).Error
			})
			if err != nil {
				return err
			}
			if running >= int64(max) {
				return &LimitError{What: "MCP calls", Running: int(running), Max: max}
			}
		}
		return tx.Create(c).Error
	})
}

// Get loads a call by id.
func (r MCPCallRepository) Get(ctx context.Context, id string) (*MCPCall, error) {
	return first[MCPCall](r.DB.WithContext(ctx).Where("id = ?", id))
}

// Running lists a user's calls still marked running, oldest first.
func (r MCPCallRepository) Running(ctx context.Context, userID string) ([]MCPCall, error) {
	var out []MCPCall
	err := r.DB.WithContext(ctx).Where("user_id = ? AND status = ?", userID, domain.MCPCallRunning).Order("created_at").Find(&out).Error
	return out, err
}

// SaveResult stores the tool's result; a retried activity overwrites its own.
func (r MCPCallRepository) SaveResult(ctx context.Context, id, result string) error {
	res := r.DB.WithContext(ctx).Model(&MCPCall{}).Where("id = ?", id).Update("result", result)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// Finish marks a call ended with status; result, when not empty, replaces the stored one (a
// call whose tool never ran gets its failure as the result). A finished call stays as it is.
func (r MCPCallRepository) Finish(ctx context.Context, id, status, result string, at time.Time) error {
	upd := map[string]any{"status": status, "finished_at": at.UTC()}
	if result != "" {
		upd["result"] = result
	}
	return updateWhile(ctx, r.DB, &MCPCall{}, id, domain.MCPCallRunning, upd).Error
}

// Recent lists a user's latest calls, newest first.
func (r MCPCallRepository) Recent(ctx context.Context, userID string, limit int) ([]MCPCall, error) {
	var out []MCPCall
	err := r.DB.WithContext(ctx).Where("user_id = ?", userID).Order("created_at DESC").Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}
