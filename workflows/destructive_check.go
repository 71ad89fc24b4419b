package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// A destructive lab tool's call is checked before anyone is asked about it: a call that cannot
// run as asked (a snapshot, node or link that does not exist) fails at once with an error that
// names what exists, as any other tool failure, and nobody is asked to approve the impossible.
const (
	CheckDestructiveActivity = "CheckDestructiveTool"
	// destructiveCheckChange is the GetVersion id of the check. Workflows recorded before it
	// asked without checking, and replay so.
	destructiveCheckChange = "destructive-check"
)

// DestructiveCheckResult says whether the check refused the call; a refused call's result is
// already stored (and announced) as the call's failure.
type DestructiveCheckResult struct {
	Refused bool
}

// refusedBeforeAsking checks a destructive call with the caller's own credential and reports
// whether it was refused. An error is the check's own failure (the credential gone, the
// database down), which the caller treats as the call's.
func (r *toolRunner) refusedBeforeAsking(ctx workflow.Context, call ToolCall, slot int) (bool, error) {
	if workflow.GetVersion(ctx, destructiveCheckChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false, nil
	}
	var res DestructiveCheckResult
	actx := workflow.WithActivityOptions(ctx, destructiveCheckOptions())
	err := workflow.ExecuteActivity(summarized(actx, "check "+toolSummary(call)), CheckDestructiveActivity,
		ToolInput{Turn: r.ref, Call: call, MessageIndex: slot}).Get(ctx, &res)
	return res.Refused, err
}
