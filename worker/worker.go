// Package worker builds the copilot's Temporal worker: the ChatTurn, ConfigJob, MCPCall and
// Exercise workflows and their activities (package activities), registered under the names
// package workflows uses, on one task queue. The serve and worker subcommands run it.
package worker

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/activities"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Options tunes the worker.
type Options struct {
	TaskQueue string
	// MaxConcurrentActivities bounds how many tools and device sessions one worker runs at
	// once, and separately how many model calls and finalizers, which are local activities
	// (--max-concurrent-activities); 0 keeps the SDK's defaults.
	MaxConcurrentActivities int
}

// New returns a worker with everything registered; the caller starts and stops it.
func New(c client.Client, acts *activities.Activities, opts Options) sdkworker.Worker {
	q := opts.TaskQueue
	if q == "" {
		q = workflows.TaskQueue
	}
	w := sdkworker.New(c, q, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      opts.MaxConcurrentActivities,
		MaxConcurrentLocalActivityExecutionSize: opts.MaxConcurrentActivities,
		// Pollers stay at the SDK's two per task kind, because more of them lose tasks on the
		// dev server under bursts. Its matching service gives a task handed to a waiting poll one
		// second (a constant) to be recorded as started; when history's SQLite write takes
		// longer, the poll never gets the task and its retry is refused as already started, so
		// no worker holds it until the workflow task timeout. In bursts of 100 turns, eight
		// pollers per kind lost a task in 5 bursts of 16, two in none of 37 (the load command
		// with LOAD_SLOW_HISTORY=1 names a lost task in the slowest turn's history).
	})
	Register(w, acts)
	return w
}

// Register adds the workflow and activities to any registry (a worker, or a test environment).
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.ChatTurn, workflow.RegisterOptions{Name: workflows.ChatTurnWorkflow})
	r.RegisterWorkflowWithOptions(workflows.ConfigJob, workflow.RegisterOptions{Name: workflows.ConfigJobWorkflow})
	r.RegisterWorkflowWithOptions(workflows.MCPCall, workflow.RegisterOptions{Name: workflows.MCPCallWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Exercise, workflow.RegisterOptions{Name: workflows.ExerciseWorkflow})
	for name, fn := range map[string]any{
		workflows.LLMActivity:          acts.LLMCall,
		workflows.ToolActivity:         acts.RunTool,
		workflows.ToolFailedActivity:   acts.RecordToolFailure,
		workflows.TitleActivity:        acts.GenerateTitle,
		workflows.FinalizeActivity:     acts.FinalizeTurn,
		workflows.DevicePlanActivity:   acts.PlanDeviceTool,
		workflows.DeviceRunActivity:    acts.RunDevice,
		workflows.DeviceFinishActivity: acts.FinishDeviceTool,
		workflows.WaitCheckActivity:    acts.RunWaitChecks,
		// Approvals and configuration jobs.
		workflows.RequestApprovalActivity: acts.RequestApproval,
		workflows.RecordDecisionActivity:  acts.RecordApprovalDecision,
		workflows.RenewCredentialActivity: acts.RenewTurnCredential,
		workflows.ReadConfigActivity:      acts.ReadDeviceConfig,
		workflows.ConfigJobStatusActivity: acts.SaveConfigJobStatus,
		workflows.FinishConfigJobActivity: acts.FinishConfigJob,
		workflows.CheckUndoActivity:       acts.CheckUndoDrift,
		// A destructive tool's call, checked before anyone is asked about it.
		workflows.CheckDestructiveActivity: acts.CheckDestructiveTool,
		// MCP calls.
		workflows.FinishMCPCallActivity: acts.FinishMCPCall,
		// Fault-injection exercises.
		workflows.ExerciseVerifyActivity:    acts.VerifyExercise,
		workflows.ExerciseHintActivity:      acts.ExerciseHint,
		workflows.ExerciseProgressActivity:  acts.SaveExerciseProgress,
		workflows.ExerciseFinishActivity:    acts.FinishExercise,
		workflows.SnapshotInjectionActivity: acts.SnapshotBeforeInjection,
		// Save points: snapshots of a running lab.
		workflows.PlanSavePointActivity:      acts.PlanSavePoint,
		workflows.SaveDevicesActivity:        acts.SaveDevicesForSavePoint,
		workflows.PauseSavePointActivity:     acts.PauseForSavePoint,
		workflows.ResumeSavePointActivity:    acts.ResumeAfterSavePoint,
		workflows.FinishSavePointActivity:    acts.FinishSavePoint,
		workflows.ExerciseResetActivity:      acts.ResetExercise,
		workflows.ExerciseTurnFinishActivity: acts.FinishExerciseTurn,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
