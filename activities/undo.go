package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The undo of a configuration job: its plan is computed from the job's records (the reads
// before and after it), and it then runs as a configuration job of its own. These are its
// parts that know it is an undo: the plan, the comparison with what the job left (for the
// approval), and the verdict on whether each device is back to where the job found it.

// planUndo plans an undo call: the job it names (or the chat's last applied one), that job's
// reads, and the lines computed from them. A refusal a person can act on is a Result; an error
// is a failure to read the database, which a retry may not meet.
func (a *Activities) planUndo(ctx context.Context, env tools.Env, in workflows.ToolInput, raw json.RawMessage) (tools.DevicePlan, *tools.Result, error) {
	refuse := func(format string, args ...any) (tools.DevicePlan, *tools.Result, error) {
		r := tools.Failure(format, args...)
		return tools.DevicePlan{Tool: in.Call.Name}, &r, nil
	}
	args, err := tools.DecodeUndoArgs(env, raw)
	if err != nil {
		return refuse("%v", err)
	}
	job, refusal, err := a.undoTarget(ctx, in.Turn, workflows.ConfigJobID(in.Turn.TurnID, in.Call.ID), args.Job)
	if err != nil {
		return tools.DevicePlan{}, nil, fmt.Errorf("finding the job to undo: %w", err)
	}
	if refusal != "" {
		return refuse("%s", refusal)
	}
	src, err := a.undoSource(ctx, job)
	if err != nil {
		return tools.DevicePlan{}, nil, fmt.Errorf("loading the records of job %s: %w", job.ID, err)
	}
	plan, fail := tools.PlanUndo(ctx, env, src, args.DeviceNames, a.Devices.Policy)
	return plan, fail, nil
}

// undoTarget finds the job an undo takes back: the one named (by job id, or by the tool call
// id the model saw), or the session's last applied job. It refuses, in words, a job of another
// project or user, the undo itself, and a job that sent nothing or is still running.
func (a *Activities) undoTarget(ctx context.Context, turn workflows.WorkRef, self, name string) (*models.ConfigJob, string, error) {
	if name == "" {
		j, err := a.ConfigJobs.LastApplied(ctx, turn.SessionID, turn.UserID, self)
		if errors.Is(err, models.ErrNotFound) {
			return nil, "no configuration job was applied in this chat yet, so there is nothing to undo; name the job to undo with job", nil
		}
		return j, "", err
	}
	j, err := a.ConfigJobs.Get(ctx, name)
	if errors.Is(err, models.ErrNotFound) {
		jobs, lerr := a.ConfigJobs.BySession(ctx, turn.SessionID, 50)
		if lerr != nil {
			return nil, "", lerr
		}
		for i := range jobs {
			if jobs[i].ToolCallID == name {
				j, err = &jobs[i], nil
				break
			}
		}
		if j == nil {
			return nil, fmt.Sprintf("there is no configuration job %q; %s", name, describeJobs(jobs, turn.UserID)), nil
		}
	}
	if err != nil {
		return nil, "", err
	}
	switch {
	case j.ProjectID != turn.ProjectID:
		return nil, fmt.Sprintf("job %s belongs to another project", j.ID), nil
	case j.UserID != turn.UserID:
		return nil, fmt.Sprintf("job %s was run by another user; only they can undo it", j.ID), nil
	case j.ID == self:
		return nil, "an undo cannot take back itself", nil
	case slices.Contains(models.AppliedJobStatuses, j.Status):
		return j, "", nil
	case j.Status == domain.JobRejected || j.Status == domain.JobExpired || j.Status == domain.JobCancelled:
		return nil, fmt.Sprintf("job %s sent nothing (it was %s), so there is nothing to undo", j.ID, j.Status), nil
	}
	return nil, fmt.Sprintf("job %s has not finished yet (%s); undo it once it has", j.ID, j.Status), nil
}

// describeJobs names a session's jobs a user may undo, for a refusal that must say what exists.
func describeJobs(jobs []models.ConfigJob, userID string) string {
	var names []string
	for _, j := range jobs {
		if j.UserID == userID && slices.Contains(models.AppliedJobStatuses, j.Status) {
			names = append(names, fmt.Sprintf("%s (%s, %s, %s)", j.ID, j.ToolName, j.Status, plural(j.Devices, "device")))
		}
	}
	if len(names) == 0 {
		return "this chat has no applied configuration job"
	}
	return "this chat's applied jobs, newest first: " + clipList(names, 10)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// undoSource loads what a job read on each device before and after, in the order its result
// listed the devices.
func (a *Activities) undoSource(ctx context.Context, job *models.ConfigJob) (tools.UndoSource, error) {
	recs, err := a.DeviceRecords.Commands(ctx, job.TurnID, job.ToolCallID, "")
	if err != nil {
		return tools.UndoSource{}, err
	}
	reads := map[string]*jobReads{}
	var order []string
	for i := range recs {
		r := &recs[i]
		if r.Seq != models.SeqReadBefore && r.Seq != models.SeqReadAfter {
			continue
		}
		jr := reads[r.NodeID]
		if jr == nil {
			jr = &jobReads{name: r.DeviceName}
			reads[r.NodeID] = jr
			order = append(order, r.NodeID)
		}
		if r.Seq == models.SeqReadBefore {
			jr.before = r
		} else {
			jr.after = r
		}
	}
	var listed []DeviceChange
	if json.Unmarshal([]byte(job.Summary), &listed) == nil && len(listed) > 0 {
		byResult := make([]string, 0, len(order))
		for _, ch := range listed {
			if _, ok := reads[ch.NodeID]; ok {
				byResult = append(byResult, ch.NodeID)
			}
		}
		if len(byResult) == len(order) {
			order = byResult
		}
	}
	src := tools.UndoSource{JobID: job.ID}
	for _, id := range order {
		jr := reads[id]
		d := tools.UndoDevice{NodeID: id, Name: jr.name}
		switch {
		case !readOK(jr.before):
			d.Problem = "its configuration was not read before the job"
		case !readOK(jr.after):
			d.Problem = "its configuration was not read after the job"
		case jr.before.Command != jr.after.Command:
			d.Problem = fmt.Sprintf("it was read with %q before the job and %q after it", jr.before.Command, jr.after.Command)
		default:
			d.ReadCommand, d.Before, d.After = jr.after.Command, jr.before.Output, jr.after.Output
		}
		src.Devices = append(src.Devices, d)
	}
	return src, nil
}

// jobReads are one device's reads in a job.
type jobReads struct {
	name          string
	before, after *models.DeviceCommand
}

// readOK reports whether a configuration read is there and succeeded.
func readOK(r *models.DeviceCommand) bool { return r != nil && r.Status == models.CommandOK }

// ConfigDrift is how a device's configuration changed since a job: lines that appeared and
// lines that went, as the device's platform compares its state. Unknown says why it could not
// be compared.
type ConfigDrift struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Unknown string   `json:"unknown,omitempty"`
}

func (d ConfigDrift) changed() bool { return len(d.Added)+len(d.Removed) > 0 || d.Unknown != "" }

// CheckUndoDrift names the devices of an undo whose configuration, read before the undo,
// is not what the job it undoes left: the undo then asks before it changes them.
func (a *Activities) CheckUndoDrift(ctx context.Context, in workflows.UndoCheckInput) (workflows.UndoCheckResult, error) {
	drift, err := a.undoDrift(ctx, in.Turn.TurnID, in.Turn.CallID, in.Plan)
	if err != nil {
		return workflows.UndoCheckResult{}, err
	}
	var res workflows.UndoCheckResult
	for _, job := range in.Plan.Jobs {
		if d, ok := drift[job.NodeID]; ok && d.changed() {
			res.Changed = append(res.Changed, job.Name)
		}
	}
	return res, nil
}

// undoDrift compares each device of an undo's plan, as the undo read it before (turnID and
// callID are the undo's), with what the job it undoes read after itself, by node id.
func (a *Activities) undoDrift(ctx context.Context, turnID, callID string, plan domain.DevicePlan) (map[string]ConfigDrift, error) {
	job, err := a.ConfigJobs.Get(ctx, plan.Undo.JobID)
	if err != nil {
		return nil, fmt.Errorf("loading job %s: %w", plan.Undo.JobID, err)
	}
	left, err := a.readsOf(ctx, job.TurnID, job.ToolCallID, models.SeqReadAfter)
	if err != nil {
		return nil, err
	}
	now, err := a.readsOf(ctx, turnID, callID, models.SeqReadBefore)
	if err != nil {
		return nil, err
	}
	out := map[string]ConfigDrift{}
	for _, j := range plan.Jobs {
		then, cur := left[plan.Undo.Nodes[j.NodeID]], now[j.NodeID]
		if !readOK(cur) {
			out[j.NodeID] = ConfigDrift{Unknown: "its configuration could not be read now, so it is not known whether it changed since the job"}
			continue
		}
		profile := profileFor(j, then.Command, then.Output)
		if profile == nil {
			out[j.NodeID] = ConfigDrift{Unknown: "no platform profile compares its configuration"}
			continue
		}
		added, removed := profile.SameState(then.Output, cur.Output)
		out[j.NodeID] = ConfigDrift{Added: added, Removed: removed}
	}
	return out, nil
}

// readsOf returns a tool call's configuration reads of one phase, by node id.
func (a *Activities) readsOf(ctx context.Context, turnID, callID string, seq int) (map[string]*models.DeviceCommand, error) {
	recs, err := a.DeviceRecords.Commands(ctx, turnID, callID, "")
	if err != nil {
		return nil, fmt.Errorf("loading device records: %w", err)
	}
	out := map[string]*models.DeviceCommand{}
	for i := range recs {
		if recs[i].Seq == seq {
			out[recs[i].NodeID] = &recs[i]
		}
	}
	return out, nil
}

// undoFound is, on an undo, what the job it undoes read on each device before it, by that job's
// node ids; nil for any other job.
func (a *Activities) undoFound(ctx context.Context, plan domain.DevicePlan) (map[string]*models.DeviceCommand, error) {
	if plan.Undo == nil {
		return nil, nil
	}
	job, err := a.ConfigJobs.Get(ctx, plan.Undo.JobID)
	if err != nil {
		return nil, fmt.Errorf("loading job %s: %w", plan.Undo.JobID, err)
	}
	return a.readsOf(ctx, job.TurnID, job.ToolCallID, models.SeqReadBefore)
}

// readBack is how a device's read-back after an undo (after) compares with what the undone job
// found (before), as its platform compares configurations. Unknown says why it could not be
// compared.
type readBack struct {
	unknown        string
	added, removed []string
}

func (r readBack) back() bool { return r.unknown == "" && len(r.added)+len(r.removed) == 0 }

// compareBack compares once per device: the job's outcome and its verdict both read it.
func compareBack(job tools.DeviceJob, before, after *models.DeviceCommand) readBack {
	if !readOK(before) || !readOK(after) {
		return readBack{unknown: "it was not read back"}
	}
	profile := profileFor(job, after.Command, after.Output)
	if profile == nil {
		return readBack{unknown: "no platform profile compares it"}
	}
	added, removed := profile.SameState(before.Output, after.Output)
	return readBack{added: added, removed: removed}
}

// judgeUndo says, on an undo's result, per device whether it is back to the configuration the
// undone job found (see judgeDevice); items and changes are the result's, backs the devices'
// read-backs compared (compareBack), by node id. Any other job's result is left as it is.
func judgeUndo(plan domain.DevicePlan, items []tools.Item, changes []DeviceChange, backs map[string]readBack) {
	if plan.Undo == nil {
		return
	}
	for _, j := range plan.Jobs {
		i := slices.IndexFunc(items, func(it tools.Item) bool { return it.ID == j.NodeID })
		c := slices.IndexFunc(changes, func(ch DeviceChange) bool { return ch.NodeID == j.NodeID })
		rb, ok := backs[j.NodeID]
		if i < 0 || c < 0 || !ok {
			continue
		}
		judgeDevice(&items[i], &changes[c], j, plan.Undo, rb)
		changes[c].Status, changes[c].Error = items[i].Status, items[i].Error
	}
}

// readOf finds a device's read of one phase among its records.
func readOf(recs []models.DeviceCommand, seq int) *models.DeviceCommand {
	for i := range recs {
		if recs[i].Seq == seq {
			return &recs[i]
		}
	}
	return nil
}

// describeUndo tells the approval of an undo what it undoes: per device the changes since the
// job, and the job's changes the lines leave.
func (a *Activities) describeUndo(ctx context.Context, req workflows.ApprovalRequest, p *ApprovalPlan) error {
	plan := req.Plan
	drift, err := a.undoDrift(ctx, req.Turn.TurnID, req.Call.ID, *plan)
	if err != nil {
		return err
	}
	p.UndoOf = plan.Undo.JobID
	p.Summary = fmt.Sprintf("Undo job %s: %s", plan.Undo.JobID, lowerFirst(p.Summary))
	for i := range p.Devices {
		d := &p.Devices[i]
		if dr, ok := drift[d.NodeID]; ok && dr.changed() {
			dr := dr
			d.ChangedSince = &dr
		}
		d.NotUndone = plan.Undo.Left[d.NodeID]
	}
	return nil
}

// judgeDevice says on a device's result of an undo whether its configuration, read back, is the
// one the undone job found (rb, see compareBack), and what the undo left. A device not back where
// it was is partial_success.
func judgeDevice(it *tools.Item, ch *DeviceChange, job tools.DeviceJob, undo *domain.UndoOf, rb readBack) {
	var b strings.Builder
	switch {
	case rb.unknown != "":
		fmt.Fprintf(&b, "\n\nWhether it is back to the configuration before job %s is not known: %s.", undo.JobID, rb.unknown)
	default:
		back := rb.back()
		ch.BackToBefore = &back
		if back {
			// Whatever the undo could not compute lines for is back too: the read-back says so.
			fmt.Fprintf(&b, "\n\nBack to the configuration before job %s: the read-back equals it.", undo.JobID)
			it.Result += b.String()
			return
		}
		fmt.Fprintf(&b, "\n\nNot back to the configuration before job %s; the read-back still differs from it:", undo.JobID)
		for _, l := range rb.removed {
			b.WriteString("\n- " + l)
			ch.StillDiffers = append(ch.StillDiffers, "- "+l)
		}
		for _, l := range rb.added {
			b.WriteString("\n+ " + l)
			ch.StillDiffers = append(ch.StillDiffers, "+ "+l)
		}
		markPartial(it, "the read-back differs from the configuration before job "+undo.JobID)
	}
	if left := undo.Left[job.NodeID]; len(left) > 0 {
		ch.NotUndone = left
		b.WriteString("\n\nNot undone: " + strings.Join(left, "; ") + ".")
		markPartial(it, "some of the job's changes were not undone")
	}
	it.Result += b.String()
}

// markPartial adds a problem to a device's result item; a device that succeeded is then
// partial_success.
func markPartial(it *tools.Item, msg string) {
	if it.Error != "" {
		it.Error += "; " + msg
	} else {
		it.Error = msg
	}
	if it.Status == tools.StatusSuccess {
		it.Status = tools.StatusPartial
	}
}
