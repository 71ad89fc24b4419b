package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// wait_for: after a device tool call's commands (and, in a configuration job, the read-back),
// the devices with wait_for checks run the checks' commands again until every check holds or
// its timeout passes. Each attempt is an activity and the pause between attempts a workflow
// timer, so a worker that dies during the wait resumes waiting where it was, and nothing is
// applied a second time.
const (
	WaitCheckActivity = "RunWaitChecks"
	// waitForChange is the GetVersion id of the wait. Only plans that carry wait_for checks
	// ask for it, and no plan recorded before it existed does.
	waitForChange = "wait-for"
)

// WaitCheckInput runs one attempt of a device's pending checks (indexes into Job.Wait).
type WaitCheckInput struct {
	Turn    ToolCallRef
	Job     domain.DeviceJob
	Checks  []int
	Attempt int
	// Started is when the device's wait began, for the elapsed time its progress shows.
	Started time.Time
}

// WaitCheckResult is what one attempt saw, per entry of WaitCheckInput.Checks. Error is a
// device problem of this attempt (busy, unreachable), which the next attempt may not have.
type WaitCheckResult struct {
	Matches []int
	Held    []bool
	Error   string `json:",omitempty"`
}

// readBackAndWait is what a configuration job does once its lines are applied: it reads every
// device's configuration again (into readErrs), then waits for the devices' wait_for checks.
func readBackAndWait(ctx workflow.Context, ref ToolCallRef, plan domain.DevicePlan, failed map[string]string, concurrency int,
	readErrs map[string]map[string]string) map[string][]domain.WaitOutcome {
	readErrs[ReadAfter] = readConfigs(ctx, ref, plan, ReadAfter, concurrency)
	return waitForChecks(ctx, ref, plan, failed, concurrency)
}

// waitForChecks runs every planned device's wait, a bounded number of devices at once, for the
// devices whose commands did not fail. It returns each device's outcomes by node id, nil when
// the plan has no checks (or was recorded before they existed).
func waitForChecks(ctx workflow.Context, ref ToolCallRef, plan domain.DevicePlan, failed map[string]string, concurrency int) map[string][]domain.WaitOutcome {
	waiting := domain.DevicePlan{Tool: plan.Tool}
	for _, job := range plan.Jobs {
		if len(job.Wait) > 0 && failed[job.NodeID] == "" {
			waiting.Jobs = append(waiting.Jobs, job)
		}
	}
	if len(waiting.Jobs) == 0 || workflow.GetVersion(ctx, waitForChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	out := map[string][]domain.WaitOutcome{}
	forEachDevice(ctx, waiting, concurrency, func(gctx workflow.Context, job domain.DeviceJob) {
		out[job.NodeID] = waitDevice(gctx, ref, job)
	})
	return out
}

// waitDevice polls one device's checks until all hold or none has time left.
func waitDevice(ctx workflow.Context, ref ToolCallRef, job domain.DeviceJob) []domain.WaitOutcome {
	outs := make([]domain.WaitOutcome, len(job.Wait))
	pending := make([]int, len(job.Wait))
	for i := range pending {
		pending[i] = i
	}
	start := workflow.Now(ctx)
	actx := workflow.WithActivityOptions(ctx, waitCheckOptions())
	for attempt := 1; ; attempt++ {
		var res WaitCheckResult
		err := workflow.ExecuteActivity(summarized(actx, fmt.Sprintf("%s: wait_for, attempt %d", deviceName(job), attempt)), WaitCheckActivity,
			WaitCheckInput{Turn: ref, Job: job, Checks: pending, Attempt: attempt, Started: start}).Get(ctx, &res)
		elapsed := workflow.Now(ctx).Sub(start)
		if err == nil && (len(res.Matches) != len(pending) || len(res.Held) != len(pending)) {
			err = temporal.NewNonRetryableApplicationError("the wait_for attempt answered for other checks than it was given", "WaitCheckMismatch", nil)
		}
		if err != nil {
			for _, i := range pending {
				outs[i].Attempts, outs[i].Seconds, outs[i].Error = attempt, elapsed.Seconds(), failureMessage(err)
			}
			return outs
		}
		var still []int
		for k, i := range pending {
			outs[i].Attempts, outs[i].Matches, outs[i].Seconds, outs[i].Error = attempt, res.Matches[k], elapsed.Seconds(), res.Error
			if res.Held[k] {
				outs[i].Held, outs[i].Error = true, ""
			} else {
				still = append(still, i)
			}
		}
		pending = still
		pause, ok := domain.WaitPoll(job.Wait, pending, elapsed)
		if len(pending) == 0 || !ok {
			return outs
		}
		if err := workflow.NewTimer(ctx, pause).Get(ctx, nil); err != nil {
			for _, i := range pending {
				outs[i].Error = "the wait was cancelled"
			}
			return outs
		}
	}
}

// waitCheckOptions: one attempt runs a few show commands on one console; a failed attempt is
// not retried by Temporal (the next attempt comes after the pause anyway), except for the
// infrastructure errors the activity itself returns.
func waitCheckOptions() workflow.ActivityOptions {
	return heartbeating(2*time.Minute, temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
		NonRetryableErrorTypes: []string{domain.ErrTypeTurnAborted},
	})
}
