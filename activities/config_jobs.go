package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ReadDeviceConfig reads one device's configuration with its platform's show command, before
// or after a configuration job applies, and keeps it in the job's device records.
func (a *Activities) ReadDeviceConfig(ctx context.Context, in workflows.ReadConfigInput) error {
	seq := models.SeqReadBefore
	if in.Phase == workflows.ReadAfter {
		seq = models.SeqReadAfter
	}
	r := a.deviceRunner(in.Turn)
	job := in.Job
	// Only a retry can find its read done: a first attempt has no earlier one, and skipping the
	// lookup spares every device of a 200-device job a query in each read phase.
	if attempt(ctx) > 1 {
		existing, err := a.DeviceRecords.Commands(ctx, in.Turn.TurnID, in.Turn.CallID, job.NodeID)
		if err != nil {
			return fmt.Errorf("loading the device's records: %w", err)
		}
		for _, c := range existing {
			if c.Seq == seq && (c.Status == models.CommandOK || c.Status == models.CommandSkipped) {
				return nil // the read is done
			}
		}
	}
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	r.progress(ctx, job, "reading_config", "reading the configuration "+in.Phase+" the change")
	_, profile, err := r.readConfig(ctx, job, seq)
	if err != nil {
		return err
	}
	if profile == nil {
		c := r.record(job, seq, "", models.CommandSkipped)
		c.Error = "this platform has no configuration to read back"
		if err := a.DeviceRecords.Save(context.WithoutCancel(ctx), c); err != nil {
			return err
		}
	}
	return nil
}

// SaveConfigJobStatus records where a configuration job stands, for the audit route.
func (a *Activities) SaveConfigJobStatus(ctx context.Context, in workflows.ConfigJobStatusInput) error {
	return a.ConfigJobs.Save(ctx, configJobRow(in.JobID, in.Turn, in.Call, in.ApprovalID, in.Status, in.Devices))
}

// configJobRow is a configuration job's row as its status and its end store it.
func configJobRow(jobID string, turn workflows.WorkRef, call workflows.ToolCall, approvalID, status string, deviceCount int) *models.ConfigJob {
	return &models.ConfigJob{ID: jobID, SessionID: turn.SessionID, TurnID: turn.TurnID, ToolCallID: call.ID,
		ProjectID: turn.ProjectID, UserID: turn.UserID, ToolName: call.Name, ApprovalID: approvalID, Status: status, Devices: deviceCount}
}

// DeviceChange is one device's part of a configuration job's outcome: the result item's status,
// the configuration lines that appeared and disappeared between the reads, and the sent lines
// the read-after shows not in effect.
type DeviceChange struct {
	NodeID      string   `json:"node_id"`
	Name        string   `json:"name"`
	Status      string   `json:"status"`
	ReadCommand string   `json:"read_command,omitempty"`
	Added       []string `json:"added"`
	Removed     []string `json:"removed"`
	NotTaken    []string `json:"not_taken,omitempty"`
	Error       string   `json:"error,omitempty"`
	// On an undo: whether the read-back equals the configuration before the undone job, the
	// lines by which it still differs, and the job's changes the undo could not take back.
	BackToBefore *bool    `json:"back_to_before,omitempty"`
	StillDiffers []string `json:"still_differs,omitempty"`
	NotUndone    []string `json:"not_undone,omitempty"`
}

// FinishConfigJob builds the job's tool result from the device records: per device the lines'
// outputs, the diff of the reads before and after, and the lines that did not take (which make
// the device partial_success). A job that sent nothing says why. The result is stored as the
// tool's answer and the job's summary.
func (a *Activities) FinishConfigJob(ctx context.Context, in workflows.FinishConfigJobInput) (workflows.FinishConfigJobResult, error) {
	var out jobOutcome
	if !in.Applied {
		out = notApplied(in)
	} else {
		var err error
		if out, err = a.applied(ctx, in); err != nil {
			return workflows.FinishConfigJobResult{}, err
		}
	}
	out.describe(in)
	summary, _ := json.Marshal(out.changes)
	now := time.Now().UTC()
	row := configJobRow(in.JobID, in.Turn, in.Call, in.Approval.ApprovalID, out.status, len(in.Plan.Jobs))
	row.Summary, row.FinishedAt = string(summary), &now
	if err := a.ConfigJobs.Save(ctx, row); err != nil {
		return workflows.FinishConfigJobResult{}, fmt.Errorf("storing the job: %w", err)
	}
	if err := a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, out.res); err != nil {
		return workflows.FinishConfigJobResult{}, err
	}
	return workflows.FinishConfigJobResult{Status: out.status}, nil
}

// jobOutcome is what a finished job reports: its tool result, each device's change, the job's
// status and the devices' wait_for outcomes.
type jobOutcome struct {
	res     tools.Result
	changes []DeviceChange
	status  string
	waited  map[string][]WaitReport
}

// notApplied is the outcome of a job that sent nothing: rejected, expired or cancelled before
// its decision, every device failed with the reason.
func notApplied(in workflows.FinishConfigJobInput) jobOutcome {
	msg := workflows.RejectionMessage(in.Approval)
	out := jobOutcome{status: map[string]string{domain.ApprovalExpired: domain.JobExpired, domain.ApprovalRejected: domain.JobRejected}[in.Approval.Status]}
	if msg == "" || (in.Approval.Status == domain.ApprovalRejected && in.Approval.Comment == workflows.CommentTurnAborted) {
		msg, out.status = "Nothing was sent: the turn was cancelled before the change was approved.", domain.JobCancelled
	}
	items := append([]tools.Item(nil), in.Plan.Failed...)
	for _, job := range in.Plan.Jobs {
		items = append(items, tools.Item{ID: job.NodeID, Name: job.Name, Status: tools.StatusFailed, Error: msg})
		out.changes = append(out.changes, DeviceChange{NodeID: job.NodeID, Name: job.Name, Status: tools.StatusFailed, Error: msg})
	}
	out.res = tools.Collect(items)
	out.res.Error = msg
	return out
}

// applied is the outcome of a job that was sent, from its device records: each device's lines,
// the diff of its reads, its wait_for checks and, on an undo, whether it is back.
func (a *Activities) applied(ctx context.Context, in workflows.FinishConfigJobInput) (jobOutcome, error) {
	plan := in.Plan
	recs, err := a.DeviceRecords.Commands(ctx, in.Turn.TurnID, in.Call.ID, "")
	if err != nil {
		return jobOutcome{}, fmt.Errorf("loading device records: %w", err)
	}
	byNode := map[string][]models.DeviceCommand{}
	for _, r := range recs {
		byNode[r.NodeID] = append(byNode[r.NodeID], r)
	}
	outcomes := planOutcomes(plan, byNode, in.Errors)
	out := jobOutcome{res: tools.DeviceResult(plan, outcomes)}
	byID := map[string]int{}
	for i, it := range out.res.Data {
		byID[it.ID] = i
	}
	found, err := a.undoFound(ctx, plan)
	if err != nil {
		return jobOutcome{}, err
	}
	backs := map[string]readBack{}
	for k, job := range plan.Jobs {
		i, ok := byID[job.NodeID]
		if !ok {
			continue
		}
		ch := compareReads(job, outcomes[k], byNode[job.NodeID], in.ReadErrors)
		if plan.Undo != nil {
			rb := compareBack(job, found[plan.Undo.Nodes[job.NodeID]], readOf(byNode[job.NodeID], models.SeqReadAfter))
			backs[job.NodeID] = rb
			if rb.back() {
				// The undo's read-back is the configuration before the job: whatever one line's
				// own verdict, together they did what the undo is for.
				ch.NotTaken = nil
			}
		}
		annotate(&out.res.Data[i], ch)
		ch.Status, ch.Error = out.res.Data[i].Status, out.res.Data[i].Error
		out.changes = append(out.changes, ch)
	}
	out.waited = reportWaits(out.res.Data, plan, in.Waits, byNode)
	judgeUndo(plan, out.res.Data, out.changes, backs)
	out.res = tools.Collect(out.res.Data)
	switch {
	case out.res.Failed == 0:
		out.status = domain.JobCompleted
	case out.res.Successful == 0 && !anyPartial(out.res.Data):
		out.status = domain.JobFailed
	default:
		out.status = domain.JobPartial
	}
	return out, nil
}

// describe puts the job in the result's metadata: its id and status, the changes, the checks
// that waited, the job an undo took back, and the decision.
func (o *jobOutcome) describe(in workflows.FinishConfigJobInput) {
	o.res.Metadata = map[string]any{"tool_name": in.Call.Name, "version": tools.FormatVersion, "config_job_id": in.JobID,
		"config_job_status": o.status, "changes": o.changes}
	if o.waited != nil {
		o.res.Metadata["wait_for"] = o.waited
	}
	if in.Plan.Undo != nil {
		o.res.Metadata["undo_of"] = in.Plan.Undo.JobID
	}
	if in.Approval.ApprovalID != "" {
		o.res.Metadata["approval"] = map[string]any{"approval_id": in.Approval.ApprovalID, "status": in.Approval.Status,
			"decided_by": in.Approval.DecidedBy, "comment": in.Approval.Comment}
	}
}

func anyPartial(items []tools.Item) bool {
	for _, it := range items {
		if it.Status == tools.StatusPartial {
			return true
		}
	}
	return false
}

// compareReads diffs a device's configuration before and after, and judges each line that the
// device accepted against the read-after.
func compareReads(job tools.DeviceJob, o tools.DeviceOutcome, recs []models.DeviceCommand, readErrs map[string]map[string]string) DeviceChange {
	ch := DeviceChange{NodeID: job.NodeID, Name: job.Name, Added: []string{}, Removed: []string{}}
	var before, after *models.DeviceCommand
	for i := range recs {
		switch recs[i].Seq {
		case models.SeqReadBefore:
			before = &recs[i]
		case models.SeqReadAfter:
			after = &recs[i]
		}
	}
	var problems []string
	for _, phase := range []string{workflows.ReadBefore, workflows.ReadAfter} {
		if msg := readErrs[phase][job.NodeID]; msg != "" {
			problems = append(problems, "reading the configuration "+phase+" failed: "+msg)
		}
	}
	if before == nil || after == nil || before.Status != models.CommandOK || after.Status != models.CommandOK {
		for _, r := range []*models.DeviceCommand{before, after} {
			if r != nil && r.Error != "" {
				problems = append(problems, r.Error)
			}
		}
		if len(problems) == 0 {
			problems = append(problems, "the configuration was not read before and after, so what changed is not known")
		}
		ch.Error = strings.Join(problems, "; ")
		return ch
	}
	profile := profileFor(job, after.Command, after.Output)
	if profile == nil {
		ch.Error = "no read-back profile for this device"
		return ch
	}
	ch.ReadCommand = after.Command
	bl, al := profile.ConfigLines(before.Output), profile.ConfigLines(after.Output)
	ch.Added, ch.Removed = devices.DiffConfig(bl, al)
	if ch.Added == nil {
		ch.Added = []string{}
	}
	if ch.Removed == nil {
		ch.Removed = []string{}
	}
	// A line a later line of the job sets again shows only that later line's effect: the
	// read-back judges the job's last word on each setting (devices.Superseded).
	applied := make([]string, len(o.Results))
	for i, r := range o.Results {
		if !r.Failed {
			applied[i] = r.Command
		}
	}
	replaced := profile.Superseded(applied)
	for i, r := range o.Results {
		if r.Failed || replaced[i] || !devices.ChangesConfig(profile.Name, r.Command) {
			continue
		}
		if profile.Verify(r.Command, al) == devices.VerdictNotTook {
			ch.NotTaken = append(ch.NotTaken, r.Command)
		}
	}
	return ch
}

// profileFor finds the profile that read a device: the job's platform, else the one whose
// read-back command was used and whose configuration the output looks like.
func profileFor(job tools.DeviceJob, readCommand, output string) *devices.Profile {
	if p, err := devices.ProfileByName(job.Platform); err == nil && p.ConfigCommand() == readCommand {
		return p
	}
	return devices.ReadBy(readCommand, output)
}

// annotate adds the diff to a device's result item and marks lines that did not take.
func annotate(it *tools.Item, ch DeviceChange) {
	var b strings.Builder
	b.WriteString(it.Result)
	switch {
	case ch.Error != "":
		fmt.Fprintf(&b, "\n\nWhat changed is not known: %s", ch.Error)
	case len(ch.Added) == 0 && len(ch.Removed) == 0:
		fmt.Fprintf(&b, "\n\nConfiguration changes (%s, before → after): none", ch.ReadCommand)
	default:
		fmt.Fprintf(&b, "\n\nConfiguration changes (%s, before → after):", ch.ReadCommand)
		for _, l := range ch.Removed {
			b.WriteString("\n- " + l)
		}
		for _, l := range ch.Added {
			b.WriteString("\n+ " + l)
		}
	}
	it.Result = strings.TrimLeft(b.String(), "\n")
	if len(ch.NotTaken) > 0 {
		quoted := make([]string, len(ch.NotTaken))
		for i, l := range ch.NotTaken {
			quoted[i] = fmt.Sprintf("%q", l)
		}
		markPartial(it, "accepted but not in effect when read back: "+strings.Join(quoted, ", "))
	}
}
