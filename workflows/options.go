package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// How long each kind of activity may take and how it is retried. Functions rather than values,
// so no two calls share a retry policy.

// heartbeating is the shape of every activity that talks to a model, GNS3 or a console: it
// heartbeats, so a crashed worker's attempt is retried elsewhere within seconds, and it is
// waited for when cancelled. The retry policy is copied, so each call gets its own.
func heartbeating(timeout time.Duration, retry temporal.RetryPolicy) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    10 * time.Second,
		WaitForCancellation: true,
		RetryPolicy:         &retry,
	}
}

// llmOptions: a thinking model may reason for many minutes before it answers, streaming all
// along, so a model call's bound is generous; a stream that falls silent is ended sooner by the
// client's idle timeout (llm.DefaultIdleTimeout) and retried. The short heartbeat lets a crashed
// worker's call be retried elsewhere within seconds. Errors a retry cannot fix are final.
func llmOptions() workflow.ActivityOptions {
	return heartbeating(llmCallTimeout, temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        5,
		NonRetryableErrorTypes: []string{domain.ErrTypeLLMAuth, domain.ErrTypeLLMBadRequest, domain.ErrTypeLLMConfig, domain.ErrTypeTurnAborted},
	})
}

// llmCallTimeout bounds one model call, answer and thinking together.
const llmCallTimeout = 20 * time.Minute

// toolOptions: starting many slow nodes may take a quarter of an hour; heartbeats prove progress.
// The device tools' plan runs under them too.
func toolOptions() workflow.ActivityOptions {
	return heartbeating(20*time.Minute, temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        20 * time.Second,
		MaximumAttempts:        3,
		NonRetryableErrorTypes: []string{domain.ErrTypeNoCredentials, domain.ErrTypeTurnAborted},
	})
}

// toolFailureOptions: storing a failed tool's result is a database write.
func toolFailureOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	}
}

// titleOptions: a title is a nicety, so it is tried twice and then given up.
func titleOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
	}
}

// finalizeOptions has no attempt limit: a finalizer that gave up would leave the session's row
// running.
func finalizeOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	}
}

// deviceOptions: one device's job, bounded by the time its commands may take.
func deviceOptions(timeout time.Duration) workflow.ActivityOptions {
	return heartbeating(timeout, temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{domain.ErrTypeTurnAborted},
	})
}

// deviceFinishOptions: aggregating a device tool call reads records and stores one result.
func deviceFinishOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 10},
	}
}

// jobPlanOptions: a configuration job's plan reads the topology once, so it has a tool's
// retries and a shorter bound.
func jobPlanOptions() workflow.ActivityOptions {
	o := toolOptions()
	o.StartToCloseTimeout = 5 * time.Minute
	return o
}

// destructiveCheckOptions: a destructive call's check reads the topology (or the snapshots)
// once, with a tool's retries; it answers before anyone is asked, so it is bounded short.
func destructiveCheckOptions() workflow.ActivityOptions {
	o := toolOptions()
	o.StartToCloseTimeout = 2 * time.Minute
	return o
}

// readConfigOptions: reading one device's configuration is one show command.
func readConfigOptions() workflow.ActivityOptions {
	return deviceOptions(2 * time.Minute)
}

// approvalRecordOptions: approvals and job statuses are database writes that must land, so they
// are retried longer than a tool's.
func approvalRecordOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second, MaximumAttempts: 20},
	}
}

// renewCredentialOptions: a renewal has half the credential's lifetime to succeed.
func renewCredentialOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	}
}

// exerciseCheckOptions: a check may wait for busy consoles; it answers the student who waits
// for it, so it is tried twice.
func exerciseCheckOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 3 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
	}
}

// exerciseRecordOptions: an exercise's hints and progress are database reads and writes.
func exerciseRecordOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	}
}

// exerciseFinishOptions has no attempt limit: an exercise whose end is not stored would show
// open forever.
func exerciseFinishOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	}
}
