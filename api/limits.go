package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
)

// RateLimiter takes one turn from a user's allowance (quota.Memory and quota.Redis are two).
type RateLimiter interface {
	Take(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// TurnLimits are the per-user spending limits on starting turns, since every turn costs model
// calls. The zero value limits nothing.
type TurnLimits struct {
	// MaxRunning is how many turns one user may have running at once, across all sessions.
	MaxRunning int
	// PerMinute, when set, allows TurnsPerMinute turns a minute per user.
	PerMinute      RateLimiter
	TurnsPerMinute int
	// DailyTokens is how many tokens one user's turns may consume per UTC day; 0 is no budget.
	DailyTokens int64
	// IncludeSuperadmins applies the limits to GNS3 superadmins too; they are exempt otherwise.
	IncludeSuperadmins bool
}

// turnRetryAfter is what a user refused for running too many turns is told to wait: about as
// long as a short turn takes.
const turnRetryAfter = 5 * time.Second

// tooMany answers 429 with the Retry-After a client (or a person) can act on.
func tooMany(c *gin.Context, wait time.Duration, message string) {
	c.Header("Retry-After", strconv.Itoa(retrySeconds(wait)))
	abort(c, http.StatusTooManyRequests, message)
}

func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// admitTurn applies the daily budget and the rate limit to a user about to start a turn, and
// returns the running-turn limit StartTurn must hold (0 for an exempt user). false means the
// answer has been sent.
func (s *Server) admitTurn(c *gin.Context, u *auth.Caller) (maxRunning int, ok bool) {
	l := s.deps.Limits
	if u.Superadmin && !l.IncludeSuperadmins {
		return 0, true
	}
	ctx := c.Request.Context()
	if l.DailyTokens > 0 {
		now := time.Now().UTC()
		used, err := s.deps.Repo.TokensUsedOn(ctx, u.ID, now)
		if err != nil {
			s.internalError(c, err, "Reading your token usage failed")
			return 0, false
		}
		if used >= l.DailyTokens {
			midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
			wait := midnight.Sub(now)
			tooMany(c, wait, fmt.Sprintf("You have used your daily budget of %d tokens (%d so far today); it renews at midnight UTC, in %s.",
				l.DailyTokens, used, wait.Round(time.Minute)))
			return 0, false
		}
	}
	if l.PerMinute != nil {
		allowed, wait, err := l.PerMinute.Take(ctx, u.ID)
		if err != nil {
			s.log.Error("rate limiter", "error", err)
			abort(c, http.StatusServiceUnavailable, "The copilot cannot check its rate limit right now; try again in a moment.")
			return 0, false
		}
		if !allowed {
			tooMany(c, wait, fmt.Sprintf("Too many messages: at most %d turns a minute per user. Try again in %d seconds.",
				l.TurnsPerMinute, retrySeconds(wait)))
			return 0, false
		}
	}
	return l.MaxRunning, true
}
