// Package activities holds the activities of the workflows in package workflows: a chat
// turn's model calls (made through package llm), GNS3 tool runs, device console steps, title and
// finalizer; the approval requests and decisions of a turn or a configuration job, a job's
// configuration read-backs and status; an MCP call's result; an exercise's checks, hints and
// progress. Workflow inputs carry IDs only, so activities load transcripts and rows from the
// database and secrets from worker-side stores, publish progress to the turn's event log
// (package relay), and return small summaries. They are methods of one Activities value that
// holds the shared dependencies; package worker registers them by name.
package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// CredentialStore gives activities the token of the user a turn acts for.
type CredentialStore interface {
	Get(ctx context.Context, key string) (string, error)
	Put(ctx context.Context, key, secret string, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// Activities carries the dependencies every activity shares. Methods are registered by name
// (see package workflows), so the workflow never needs an instance.
type Activities struct {
	Repo        *models.ChatRepository
	Events      relay.Log
	LLM         llmconfig.Loader
	Credentials CredentialStore
	GNS3        *gns3.Server
	Tools       *tools.Registry
	// LLMClient makes the model calls of turns and titles; nil reaches trusted endpoints with
	// go-openai's default client and the others under the strictest outbound policy, public
	// addresses only.
	LLMClient *llm.Client
	Logger    *slog.Logger
	// EventTTL is how long a finished turn's events stay available for rejoining.
	EventTTL time.Duration
	// Devices reaches the lab's consoles; DeviceRecords keeps what was sent to them.
	Devices       DeviceAccess
	DeviceRecords models.DeviceRepository
	// Skills gives the prompts, which a reload may change between turns; nil means the built-in.
	Skills *skills.Store
	// Approvals and ConfigJobs are the rows the page and the audit read.
	Approvals  models.ApprovalRepository
	ConfigJobs models.ConfigJobRepository
	// Metrics records LLM calls, tools, device commands and finished turns; nil records nothing.
	Metrics *metrics.Metrics
	// Live is the live topology (nil: every model call reads GNS3); Marks keeps what each
	// session last saw of its lab, for the drift note (nil: no note).
	Live  LiveTopology
	Marks *models.TopologyMarks
	// MCPCalls keeps the results of tool calls made over MCP (package mcp), which have no
	// transcript to go to.
	MCPCalls models.MCPCallRepository
	// Exercises keeps the exercises and their private fault records; ExerciseStarter starts
	// their workflows; ExerciseTTL is how long one stays open (0: the default). Without them
	// record_injected_fault refuses.
	Exercises       models.ExerciseRepository
	ExerciseStarter ExerciseStarter
	ExerciseTTL     time.Duration
	// SavePoints keeps which nodes ran at each snapshot the copilot took of a running lab, and
	// what each saved, for the restore that brings them back.
	SavePoints models.SavePointRepository
}

// logger is the activities' log; inside an activity every line carries the turn id.
func (a *Activities) logger(ctx context.Context) *slog.Logger {
	l := a.baseLogger()
	if activity.IsActivity(ctx) {
		if turn := workflows.TurnIDOf(activity.GetInfo(ctx).WorkflowExecution.ID); turn != "" {
			l = l.With("turn_id", turn)
		}
	}
	return l
}

func (a *Activities) baseLogger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// publish appends an event; a failing log must not fail the turn, whose durable record is the
// database, so errors are logged and dropped.
func (a *Activities) publish(ctx context.Context, turnID string, p relay.Payload) {
	data, err := json.Marshal(p)
	if err == nil {
		_, err = a.Events.Append(ctx, turnID, p.Type, data)
	}
	if err != nil {
		a.logger(ctx).Warn("publishing a turn event", "type", p.Type, "error", err)
	}
}

// keepAlive heartbeats until the returned stop is called, so a long silent wait (a model that
// thinks before its first token, a node that boots slowly) is not mistaken for a dead worker and
// a cancellation reaches the activity promptly.
func keepAlive(ctx context.Context, every time.Duration) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// abortable returns a context that also ends when the user aborts the turn. Temporal hands a
// cancellation to a running activity only with a heartbeat answer, seconds later; the turn's
// control stream says it at once.
func (a *Activities) abortable(ctx context.Context, turnID string) (context.Context, func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	var aborted atomic.Bool
	go func() {
		stream := relay.ControlStream(turnID)
		for ctx.Err() == nil {
			evs, err := a.Events.Wait(ctx, stream, "", 30*time.Second)
			if err != nil {
				if ctx.Err() == nil {
					a.logger(ctx).Warn("watching the turn's control stream", "error", err)
				}
				return
			}
			for _, ev := range evs {
				if ev.Type == relay.TypeCancelRequested {
					aborted.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() bool { cancel(); return aborted.Load() }
}

// credentialsError decides whether a failed credential read is final. Only a credential that
// is gone (expired, deleted) or sealed under another key is: asking again cannot bring it
// back. A store that failed to answer (a database or Redis error) may answer on the next
// attempt, so that error is left retryable.
func credentialsError(err error) error {
	switch {
	case errors.Is(err, credentials.ErrNotFound):
		return temporal.NewNonRetryableApplicationError(
			"The turn's GNS3 credentials have expired; send the message again.", domain.ErrTypeNoCredentials, err)
	case errors.Is(err, credentials.ErrWrongKey), errors.Is(err, credentials.ErrCorrupt):
		return temporal.NewNonRetryableApplicationError(
			"The turn's GNS3 credentials cannot be decrypted (was the server's secret key changed?); send the message again.",
			domain.ErrTypeNoCredentials, err)
	}
	return fmt.Errorf("reading the turn's GNS3 credentials: %w", err)
}

// llmSettingsError decides whether a failed LLM configuration load is final: a configuration
// that is missing or unusable is; a database that failed to answer is retried.
func llmSettingsError(err error) error {
	var bad *llmconfig.BadConfigError
	if errors.Is(err, llmconfig.ErrNotConfigured) || errors.As(err, &bad) {
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTypeLLMConfig, nil)
	}
	return fmt.Errorf("loading the LLM configuration: %w", err)
}

// appendDone ends a turn's (or an MCP call's) event log with its done event, which keeps the
// log for EventTTL (an hour when unset) so a client can still rejoin.
func (a *Activities) appendDone(ctx context.Context, turnID string, data []byte) error {
	ttl := a.EventTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	_, _, err := a.Events.AppendTerminal(ctx, turnID, relay.TypeDone, data, ttl)
	return err
}

// abortedError tells the workflow the activity stopped because the user aborted the turn.
func abortedError() error {
	return temporal.NewNonRetryableApplicationError("the turn was aborted", domain.ErrTypeTurnAborted, nil)
}

func attempt(ctx context.Context) int {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return int(activity.GetInfo(ctx).Attempt)
}
