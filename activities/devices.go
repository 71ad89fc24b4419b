package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gns3-copilot/gns3-copilot/devices"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/relay"
	"github.com/gns3-copilot/gns3-copilot/tools"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// DeviceAccess is what the device activities need to reach consoles safely.
type DeviceAccess struct {
	Locker  devices.Locker // one writer per console, across worker processes
	Policy  *devices.Policy
	Options devices.Options
}

// PlanDeviceTool validates a device tool call and resolves its devices. A call that fails as a
// whole (bad arguments, a tool outside the mode) is answered here and reported Done.
func (a *Activities) PlanDeviceTool(ctx context.Context, in workflows.ToolInput) (workflows.DevicePlanResult, error) {
	env, mode, err := a.startTool(ctx, in)
	if err != nil {
		return workflows.DevicePlanResult{}, err
	}

	t, found := a.Tools.Lookup(in.Call.Name)
	if !found || !slices.Contains(t.Modes(), mode) {
		// The registry words the refusal; it runs nothing for a tool outside the mode.
		res := a.Tools.Execute(ctx, env, mode, in.Call.Name, in.Call.Arguments)
		return workflows.DevicePlanResult{Done: true}, a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res)
	}
	args, err := tools.NormalizeArgs(in.Call.Arguments)
	var plan tools.DevicePlan
	var fail *tools.Result
	if err != nil {
		r := tools.Failure("%v", err)
		fail = &r
	} else {
		plan, fail = tools.PlanDevices(ctx, env, in.Call.Name, args, a.Devices.Policy)
	}
	if fail != nil {
		fail.Metadata = map[string]any{"tool_name": in.Call.Name, "version": tools.FormatVersion}
		return workflows.DevicePlanResult{Done: true}, a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, *fail)
	}
	for _, f := range plan.Failed {
		env.Progress(tools.Progress{ItemID: f.ID, ItemName: f.Name, Status: "failed", Message: f.Error})
	}
	for _, j := range plan.Jobs {
		env.Progress(tools.Progress{ItemID: j.NodeID, ItemName: j.Name, Status: "queued"})
	}
	return workflows.DevicePlanResult{Plan: plan}, nil
}

// RunDevice runs one device's commands under the device's lock. Every command is recorded
// before it goes out and again with its outcome; a retried attempt reuses what finished and
// never re-sends a change that may already have been applied. What happened stays in the
// records, which FinishDeviceTool reads; a device that fails is not an activity failure.
func (a *Activities) RunDevice(ctx context.Context, in workflows.DeviceInput) error {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	runCtx, release := a.abortable(ctx, in.Turn.TurnID)
	a.deviceRunner(in.Turn).RunDevice(runCtx, in.Job)
	if release() {
		return abortedError()
	}
	return ctx.Err()
}

// FinishDeviceTool builds the call's result from the device records and stores it.
func (a *Activities) FinishDeviceTool(ctx context.Context, in workflows.DeviceFinishInput) error {
	recs, err := a.DeviceRecords.Commands(ctx, in.Turn.TurnID, in.Call.ID, "")
	if err != nil {
		return fmt.Errorf("loading device records: %w", err)
	}
	byNode := map[string][]models.DeviceCommand{}
	var first time.Time
	for _, r := range recs {
		byNode[r.NodeID] = append(byNode[r.NodeID], r)
		if first.IsZero() || r.CreatedAt.Before(first) {
			first = r.CreatedAt
		}
	}
	outcomes := make([]tools.DeviceOutcome, 0, len(in.Plan.Jobs))
	for _, job := range in.Plan.Jobs {
		o := outcomeFromRecords(job, byNode[job.NodeID])
		if msg, ok := in.Errors[job.NodeID]; ok && o.Err == "" {
			o.Err = msg
		}
		outcomes = append(outcomes, o)
	}
	res := tools.DeviceResult(in.Plan, outcomes)
	res.Metadata = map[string]any{"tool_name": in.Call.Name, "version": tools.FormatVersion}
	if !first.IsZero() {
		res.Metadata["execution_time"] = math.Round(time.Since(first).Seconds()*1000) / 1000
	}
	return a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res)
}

// outcomeFromRecords rebuilds a device's outcome from its records: outputs of what ran, and a
// device-level error from the record that ended it.
func outcomeFromRecords(job tools.DeviceJob, recs []models.DeviceCommand) tools.DeviceOutcome {
	o := tools.DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Blocked: job.Blocked}
	for _, r := range recs {
		if r.Seq == deviceErrorSeq {
			o.Err = r.Error // cleared by a later attempt that reached the device
			continue
		}
		switch r.Status {
		case models.CommandOK, models.CommandFailed:
			o.Results = append(o.Results, devices.CommandResult{Command: r.Command, Output: r.Output,
				Failed: r.Status == models.CommandFailed, Error: r.Error})
		case models.CommandUnknown:
			o.Results = append(o.Results, devices.CommandResult{Command: r.Command, Failed: true, Error: r.Error})
		case models.CommandSkipped:
			o.Results = append(o.Results, devices.CommandResult{Command: r.Command, Failed: true, Error: "not sent: an earlier line failed or did not finish"})
		}
	}
	return o
}

// deviceErrorSeq is the slot of a record that notes why a device as a whole failed (busy,
// unreachable); it is not a command.
const deviceErrorSeq = -1

// deviceRunner runs jobs for one tool call, recording to the database.
type deviceRunner struct {
	a   *Activities
	ref workflows.ToolCallRef
}

func (a *Activities) deviceRunner(ref workflows.ToolCallRef) *deviceRunner {
	return &deviceRunner{a: a, ref: ref}
}

func (r *deviceRunner) progress(ctx context.Context, job tools.DeviceJob, status, msg string) {
	r.a.publish(ctx, r.ref.TurnID, relay.Payload{Type: relay.TypeToolProgress, SessionID: r.ref.SessionID, ToolName: r.ref.ToolName,
		ToolCallID: r.ref.CallID, Progress: tools.Progress{ItemID: job.NodeID, ItemName: job.Name, Status: status, Message: msg}})
}

func (r *deviceRunner) record(job tools.DeviceJob, seq int, cmd, status string) *models.DeviceCommand {
	return &models.DeviceCommand{TurnID: r.ref.TurnID, ToolCallID: r.ref.CallID, NodeID: job.NodeID, Seq: seq,
		SessionID: r.ref.SessionID, UserID: r.ref.UserID, ProjectID: r.ref.ProjectID, DeviceName: job.Name,
		Tool: r.ref.ToolName, Command: cmd, Config: job.Config, Status: status}
}

// RunDevice implements tools.DeviceRunner.
func (r *deviceRunner) RunDevice(ctx context.Context, job tools.DeviceJob) tools.DeviceOutcome {
	repo := r.a.DeviceRecords
	platform := job.Platform // until the console says which platform it is
	save := func(c *models.DeviceCommand) {
		// Records must be written even when the turn is being cancelled.
		if err := repo.Save(context.WithoutCancel(ctx), c); err != nil {
			r.a.logger(ctx).Error("recording a device command", "device", job.Name, "error", err)
		}
		if c.Seq != deviceErrorSeq {
			r.a.Metrics.DeviceCommand(platform, c.Status)
		}
	}
	existing, err := repo.Commands(ctx, r.ref.TurnID, r.ref.CallID, job.NodeID)
	if err != nil {
		return tools.DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Err: "could not read the device's records: " + err.Error()}
	}
	done := map[int]models.DeviceCommand{}
	for _, c := range existing {
		done[c.Seq] = c
	}
	for i, b := range job.Blocked {
		seq := len(job.Commands) + i
		if _, ok := done[seq]; !ok {
			c := r.record(job, seq, b.Command, models.CommandBlocked)
			c.Blocked, c.Reason = true, b.Reason
			save(c)
		}
	}

	// What is left to send. A read-only command interrupted by a crash is simply sent again. A
	// change is not, since it may already be in effect, and nothing after it is sent either:
	// later lines usually depend on it, so the model gets to decide with the facts in hand.
	readOnly := r.ref.ToolName == tools.ShowCommandsTool
	var pending []int
	stopped := false
	for i, cmd := range job.Commands {
		c, ok := done[i]
		open := !ok || c.Status == models.CommandSent || c.Status == models.CommandQueued
		switch {
		case !open:
		case readOnly:
			pending = append(pending, i)
		case stopped:
			save(r.record(job, i, cmd, models.CommandSkipped))
		case ok:
			u := r.record(job, i, cmd, models.CommandUnknown)
			u.Error = "the worker stopped while this command was being sent; it was not sent again (nor what follows it): check whether it took effect"
			save(u)
			stopped = true
		default:
			pending = append(pending, i)
		}
	}
	if len(pending) == 0 {
		return r.outcome(ctx, job)
	}

	r.progress(ctx, job, "connecting", "")
	opts := r.a.Devices.Options
	opts.Policy = r.a.Devices.Policy
	err = devices.Use(ctx, r.a.Devices.Locker, job.Target, r.a.GNS3.Host(), opts, func(s *devices.Session) error {
		if p := s.Profile(); p != nil {
			platform = p.Name
		}
		r.progress(ctx, job, "running", fmt.Sprintf("%d command(s)", len(pending)))
		if !job.Config {
			for _, i := range pending {
				c := r.record(job, i, job.Commands[i], models.CommandSent)
				now := time.Now().UTC()
				c.SentAt = &now
				save(c)
				res, err := s.Run(ctx, job.Commands[i])
				finishRecord(c, res, err)
				save(c)
				if err != nil {
					return err
				}
			}
			return nil
		}
		lines := make([]string, len(pending))
		recs := make([]*models.DeviceCommand, len(pending))
		for k, i := range pending {
			lines[k] = job.Commands[i]
			recs[k] = r.record(job, i, job.Commands[i], models.CommandQueued)
			save(recs[k])
		}
		next := 0
		_, err := s.ConfigureWith(ctx, lines, devices.ConfigureOptions{OnResult: func(res devices.CommandResult) {
			if next < len(recs) {
				finishRecord(recs[next], res, nil)
				save(recs[next])
				next++
			}
		}})
		if err == nil {
			for ; next < len(recs); next++ {
				recs[next].Status = models.CommandSkipped
				save(recs[next])
			}
		}
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return r.outcome(context.WithoutCancel(ctx), job)
		}
		msg := err.Error()
		var busy *devices.BusyError
		if errors.As(err, &busy) {
			msg = busy.Error()
		}
		e := r.record(job, deviceErrorSeq, "", models.CommandFailed)
		e.Error = msg
		save(e)
		r.progress(ctx, job, "failed", msg)
		return r.outcome(ctx, job)
	}
	if prev, ok := done[deviceErrorSeq]; ok && prev.Error != "" {
		save(r.record(job, deviceErrorSeq, "", models.CommandOK)) // an earlier attempt's failure no longer holds
	}
	r.progress(ctx, job, "done", "")
	return r.outcome(ctx, job)
}

func (r *deviceRunner) outcome(ctx context.Context, job tools.DeviceJob) tools.DeviceOutcome {
	recs, err := r.a.DeviceRecords.Commands(ctx, r.ref.TurnID, r.ref.CallID, job.NodeID)
	if err != nil {
		return tools.DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Err: "could not read the device's records: " + err.Error()}
	}
	return outcomeFromRecords(job, recs)
}

func finishRecord(c *models.DeviceCommand, res devices.CommandResult, err error) {
	now := time.Now().UTC()
	c.FinishedAt = &now
	if c.SentAt == nil {
		c.SentAt = &now
	}
	c.Output = res.Output
	c.Error = res.Error
	switch {
	case err != nil:
		c.Status = models.CommandFailed
		if c.Error == "" {
			c.Error = err.Error()
		}
	case res.Blocked:
		c.Status, c.Blocked, c.Reason = models.CommandBlocked, true, res.Error
	case res.Failed:
		c.Status = models.CommandFailed
	default:
		c.Status = models.CommandOK
	}
}
