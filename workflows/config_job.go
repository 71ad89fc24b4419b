package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// Configuration jobs: a device tool call that changes configuration runs as a child workflow
// of its turn. It reads every device's configuration, waits for the owner's approval, applies
// the lines per device, reads the configuration again and reports what really changed.
const (
	ConfigJobWorkflow       = "ConfigJob"
	ReadConfigActivity      = "ReadDeviceConfig"
	ConfigJobStatusActivity = "SaveConfigJobStatus"
	FinishConfigJobActivity = "FinishConfigJob"
	// Phases of a configuration read.
	ReadBefore = "before"
	ReadAfter  = "after"
)

// ConfigJobID makes a job readable in the Temporal UI ("config-job-<turn>-<call>") and unique
// per tool call.
func ConfigJobID(turnID, callID string) string {
	return fmt.Sprintf("config-job-%s-%s", turnID, callID)
}

// jobSearchAttributes make a job findable by project, session, user and tool; a turn sets
// ToolName to the last tool that asked for approval or ran as a job.
func jobSearchAttributes(ref WorkRef, tool string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		temporal.NewSearchAttributeKeyKeyword(SearchAttrProjectID).ValueSet(ref.ProjectID),
		temporal.NewSearchAttributeKeyKeyword(SearchAttrSessionID).ValueSet(ref.SessionID),
		temporal.NewSearchAttributeKeyKeyword(SearchAttrUserID).ValueSet(ref.UserID),
		temporal.NewSearchAttributeKeyKeyword(SearchAttrToolName).ValueSet(tool),
	)
}

// ConfigJobInput carries identifiers and settings only, like the turn's input.
type ConfigJobInput struct {
	Turn              WorkRef
	Call              ToolCall
	MessageIndex      int
	Approval          string
	ApprovalTimeout   time.Duration
	DeviceConcurrency int
	// Standing is the turn's "approve all", when one was given before this job started: the
	// job's approval is then decided by it.
	Standing *ApprovalOutcome `json:",omitempty"`
}

// ConfigJobResult is how the job ended.
type ConfigJobResult struct {
	Status   string
	Approval ApprovalOutcome
}

// ReadConfigInput reads one device's configuration before or after the change.
type ReadConfigInput struct {
	Turn  ToolCallRef
	Job   domain.DeviceJob
	Phase string
}

// ConfigJobStatusInput records where a job stands.
type ConfigJobStatusInput struct {
	JobID      string
	Turn       WorkRef
	Call       ToolCall
	Status     string
	ApprovalID string
	Devices    int
}

// FinishConfigJobInput builds the job's result: per device what was sent, what the read-back
// shows, and the diff of before and after.
type FinishConfigJobInput struct {
	JobID        string
	Turn         WorkRef
	Call         ToolCall
	MessageIndex int
	Plan         domain.DevicePlan
	// Errors are devices whose apply activity failed for good; ReadErrors are reads that
	// failed, by phase and node id.
	Errors     map[string]string
	ReadErrors map[string]map[string]string
	Approval   ApprovalOutcome
	// Applied is false when nothing was sent (rejected, expired, cancelled before applying).
	Applied bool
	// Waits are the devices' wait_for outcomes, by node id.
	Waits map[string][]domain.WaitOutcome `json:",omitempty"`
}

// FinishConfigJobResult is the job's final status as stored.
type FinishConfigJobResult struct {
	Status string
}

// ConfigJob runs one configuration tool call. Nothing is sent to a device before the decision
// is recorded; read-before and read-after use the platform's show command, and the device
// records hold both, so the audit shows what changed.
func ConfigJob(ctx workflow.Context, in ConfigJobInput) (ConfigJobResult, error) {
	gate, err := newApprovalGate(ctx, in.Turn)
	if err != nil {
		return ConfigJobResult{}, err
	}
	gate.standing = in.Standing
	jobID := workflow.GetInfo(ctx).WorkflowExecution.ID
	toolCtx := workflow.WithActivityOptions(ctx, jobPlanOptions())
	var planned DevicePlanResult
	if err := workflow.ExecuteActivity(summarized(toolCtx, fmt.Sprintf("plan %s", toolSummary(in.Call))), DevicePlanActivity, ToolInput{Turn: in.Turn, Call: in.Call, MessageIndex: in.MessageIndex}).Get(ctx, &planned); err != nil {
		return ConfigJobResult{}, err
	}
	if planned.Done {
		return ConfigJobResult{Status: domain.JobDone}, nil
	}
	if !planned.Changes {
		// Only looking (ping, show): nothing to approve or to compare.
		err := runPlannedDevices(ctx, in.Turn, in.Call, in.MessageIndex, planned.Plan, in.DeviceConcurrency)
		return ConfigJobResult{Status: domain.JobDone}, err
	}

	status := func(s, approvalID string) error {
		return workflow.ExecuteActivity(summarized(recordOptions(ctx), fmt.Sprintf("job status: %s, %s", s, plural(len(planned.Plan.Jobs), "device"))), ConfigJobStatusActivity, ConfigJobStatusInput{
			JobID: jobID, Turn: in.Turn, Call: in.Call, Status: s, ApprovalID: approvalID, Devices: len(planned.Plan.Jobs),
		}).Get(ctx, nil)
	}
	if err := status(domain.JobPlanning, ""); err != nil {
		return ConfigJobResult{}, err
	}
	ref := ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name}

	readErrs := map[string]map[string]string{ReadBefore: readConfigs(ctx, ref, planned.Plan, ReadBefore, in.DeviceConcurrency)}
	var waits map[string][]domain.WaitOutcome

	finish := func(fctx workflow.Context, outcome ApprovalOutcome, applied bool, errs map[string]string) (ConfigJobResult, error) {
		fctx, _ = workflow.NewDisconnectedContext(fctx)
		var fin FinishConfigJobResult
		err := workflow.ExecuteActivity(summarized(recordOptions(fctx), fmt.Sprintf("%s result: %s", in.Call.Name, planDevices(planned.Plan))), FinishConfigJobActivity, FinishConfigJobInput{
			JobID: jobID, Turn: in.Turn, Call: in.Call, MessageIndex: in.MessageIndex, Plan: planned.Plan,
			Errors: errs, ReadErrors: readErrs, Approval: outcome, Applied: applied, Waits: waits,
		}).Get(fctx, &fin)
		return ConfigJobResult{Status: fin.Status, Approval: outcome}, err
	}

	outcome := ApprovalOutcome{Status: domain.ApprovalApproved}
	if in.Approval == domain.ApprovalChanges || in.Approval == domain.ApprovalConfig || undoMustAsk(ctx, in.Call, ref, planned.Plan) {
		if err := status(domain.JobWaiting, ApprovalID(in.Turn.TurnID, in.Call.ID)); err != nil {
			return ConfigJobResult{}, err
		}
		outcome, err = gate.ask(ctx, ApprovalRequest{Call: in.Call, Kind: domain.ApprovalKindConfig, JobID: jobID, Plan: &planned.Plan, MessageIndex: in.MessageIndex}, in.ApprovalTimeout)
		if err != nil {
			if ctx.Err() != nil {
				res, ferr := finish(ctx, outcome, false, nil)
				if ferr != nil {
					return res, ferr
				}
				return res, err
			}
			return ConfigJobResult{}, err
		}
		if !outcome.Approved() {
			return finish(ctx, outcome, false, nil)
		}
	}
	if err := status(domain.JobApplying, outcome.ApprovalID); err != nil {
		return ConfigJobResult{}, err
	}
	errs, cancelErr := applyDevices(ctx, ref, planned.Plan, in.DeviceConcurrency)
	if cancelErr == nil && ctx.Err() == nil {
		waits = readBackAndWait(ctx, ref, planned.Plan, errs, in.DeviceConcurrency, readErrs)
	}
	res, err := finish(ctx, outcome, true, errs)
	if err != nil {
		return res, err
	}
	if cancelErr == nil && ctx.Err() != nil {
		cancelErr = ctx.Err()
	}
	return res, cancelErr
}

// readConfigs reads every device's configuration, a bounded number at a time. A device whose
// read fails is reported by node id; the job goes on without its read.
func readConfigs(ctx workflow.Context, ref ToolCallRef, plan domain.DevicePlan, phase string, concurrency int) map[string]string {
	errs := map[string]string{}
	forEachDevice(ctx, plan, concurrency, func(gctx workflow.Context, job domain.DeviceJob) {
		rctx := workflow.WithActivityOptions(gctx, readConfigOptions())
		if err := workflow.ExecuteActivity(summarized(rctx, fmt.Sprintf("%s: read the configuration %s the change", deviceName(job), phase)), ReadConfigActivity, ReadConfigInput{Turn: ref, Job: job, Phase: phase}).Get(gctx, nil); err != nil {
			errs[job.NodeID] = failureMessage(err)
		}
	})
	return errs
}

// forEachDevice runs fn for every job of the plan, at most concurrency at once, and returns when
// all have finished. It returns the jobs fn never ran for: those still waiting for a slot when
// the context was cancelled.
func forEachDevice(ctx workflow.Context, plan domain.DevicePlan, concurrency int, fn func(workflow.Context, domain.DeviceJob)) []domain.DeviceJob {
	if concurrency <= 0 {
		// Calls recorded before "device-fanout" ran 16 devices at a time; they replay so.
		concurrency = legacyDeviceConcurrency
		if workflow.GetVersion(ctx, "device-fanout", workflow.DefaultVersion, 1) >= 1 {
			concurrency = DefaultDeviceConcurrency
		}
	}
	sem := workflow.NewSemaphore(ctx, int64(concurrency))
	wg := workflow.NewWaitGroup(ctx)
	var notRun []domain.DeviceJob
	for _, job := range plan.Jobs {
		wg.Add(1)
		workflow.Go(ctx, func(gctx workflow.Context) {
			defer wg.Done()
			if err := sem.Acquire(gctx, 1); err != nil {
				notRun = append(notRun, job)
				return
			}
			defer sem.Release(1)
			fn(gctx, job)
		})
	}
	wg.Wait(ctx)
	return notRun
}
