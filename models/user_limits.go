package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// LimitError is durable work (a turn, an MCP call) refused because its user already has the
// most running that is allowed; What names the kind, plural.
type LimitError struct {
	What         string
	Running, Max int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d %s of this user are running; at most %d may run at once", e.Running, e.What, e.Max)
}

// checkUserTurns refuses a new turn when the user already has max running, across all their
// sessions and projects. On PostgreSQL a transaction-scoped advisory lock per user makes the
// count and the insert that follows one step for concurrent requests of the same user, in any
// API process; SQLite runs one transaction at a time anyway.
func checkUserTurns(tx *gorm.DB, userID string, max int) error {
	if max <= 0 {
		return nil
	}
	running, err := countRunningLocked(tx, "gns3copilot:user-turns:"+userID, func() (n int64, err error) {
		return n, scanOne(tx.Statement.Context, tx, runningOfUserN, []any{userID}, &n)
	})
	if err != nil {
		return err
	}
	if running >= int64(max) {
		return &LimitError{What: "turns", Running: int(running), Max: max}
	}
	return nil
}

// countRunningLocked counts a user's running rows with count, inside tx. On PostgreSQL it
// first takes the transaction-scoped advisory lock lockKey, so that for concurrent requests of
// the same user the count and the insert that follows in tx are one step; SQLite runs one write
// transaction at a time anyway.
func countRunningLocked(tx *gorm.DB, lockKey string, count func() (int64, error)) (int64, error) {
	if tx.Dialector.Name() == "postgres" {
		if _, err := advisoryLock.Exec(tx.Statement.Context, tx, lockKey); err != nil {
			return 0, err
		}
	}
	return count()
}

var advisoryLock = newStatement("SELECT pg_advisory_xact_lock(hashtext(?))")

// runningOfUser is the condition "this user's rows in status running" with the status written
// into the text: SQLite uses a partial index (idx_running_turns_of_user) only for a query that
// names its status as that literal. running is one of our status constants, never input.
func runningOfUser(running string) string {
	return "user_id = ? AND status = '" + running + "'"
}

// UserTokenUsage is what a user's turns consumed on one UTC day. It is kept apart from the
// sessions' statistics, which it repeats, so deleting a session does not give tokens back.
type UserTokenUsage struct {
	UserID       string `gorm:"primaryKey;size:64"`
	Day          string `gorm:"primaryKey;size:10"` // 2006-01-02, UTC
	InputTokens  int64  `gorm:"not null;default:0"`
	OutputTokens int64  `gorm:"not null;default:0"`
}

// TableName names the table after what it counts.
func (UserTokenUsage) TableName() string { return "user_token_usage" }

// UsageDay is the key of t's day in user_token_usage.
func UsageDay(t time.Time) string { return t.UTC().Format("2006-01-02") }

// addTokenUsage adds a finished turn's tokens to its user's day, in the finalizing transaction.
func addTokenUsage(ctx context.Context, tx *gorm.DB, userID string, at time.Time, in, out int64) error {
	if in == 0 && out == 0 {
		return nil
	}
	_, err := addUsage.Exec(ctx, tx, userID, UsageDay(at), in, out)
	return err
}

// TokensUsedOn is the total of the tokens the user's finished turns consumed on day's UTC date.
func (r *ChatRepository) TokensUsedOn(ctx context.Context, userID string, day time.Time) (int64, error) {
	var total int64
	err := r.DB.WithContext(ctx).Model(&UserTokenUsage{}).Where("user_id = ? AND day = ?", userID, UsageDay(day)).
		Select("COALESCE(SUM(input_tokens + output_tokens), 0)").Scan(&total).Error
	return total, err
}
