package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// An undo is a configuration job like any other; its plan holds the lines that take the job
// back. One step is its own: a device changed by someone else since the job must not be
// overwritten unseen, so an undo whose operator asks no approvals still asks when its read
// before shows such a device.
const CheckUndoActivity = "CheckUndoDrift"

// UndoCheckInput compares an undo's read before with the read after of the job it takes back.
type UndoCheckInput struct {
	Turn ToolCallRef
	Plan domain.DevicePlan
}

// UndoCheckResult names the devices whose configuration changed since the job.
type UndoCheckResult struct {
	Changed []string
}

// undoMustAsk reports whether an undo that would run unasked must ask after all: a device it
// would change was changed since the job, or that could not be compared. Any other job, and
// an undo with nothing changed since, goes as the operator's setting says.
func undoMustAsk(ctx workflow.Context, call ToolCall, ref ToolCallRef, plan domain.DevicePlan) bool {
	if call.Name != domain.UndoConfigTool || plan.Undo == nil ||
		workflow.GetVersion(ctx, "undo-job", workflow.DefaultVersion, 1) < 1 {
		return false
	}
	var res UndoCheckResult
	err := workflow.ExecuteActivity(summarized(recordOptions(ctx), "compare with the read after job "+plan.Undo.JobID), CheckUndoActivity,
		UndoCheckInput{Turn: ref, Plan: plan}).Get(ctx, &res)
	if err != nil {
		workflow.GetLogger(ctx).Warn("comparing the devices with the job they undo failed; asking", "error", err)
		return true
	}
	return len(res.Changed) > 0
}
