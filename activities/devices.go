package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
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
	} else if in.Call.Name == tools.UndoConfigTool {
		if plan, fail, err = a.planUndo(ctx, env, in, args); err != nil {
			return workflows.DevicePlanResult{}, err
		}
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
	// Only lines that will really be sent and change something make it a job that asks: a call
	// whose lines are all blocked, or whose devices all failed, asks nobody.
	changes := false
	for _, j := range plan.Jobs {
		env.Progress(tools.Progress{ItemID: j.NodeID, ItemName: j.Name, Status: "queued"})
		for _, c := range j.Commands {
			changes = changes || j.Config || devices.ChangesConfig(j.Platform, c)
		}
	}
	return workflows.DevicePlanResult{Plan: withTimeouts(plan), Changes: changes}, nil
}

// RunDevice runs one device's commands under the device's lock. Every command is recorded
// before it goes out and again with its outcome; a retried attempt reuses what finished and
// never re-sends a change that may already have been applied. What happened stays in the
// records, which FinishDeviceTool reads; a device that fails is not an activity failure.
func (a *Activities) RunDevice(ctx context.Context, in workflows.DeviceInput) error {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	runCtx, release := a.abortable(ctx, in.Turn.TurnID)
	runner := a.deviceRunner(in.Turn)
	runner.run(runCtx, in.Job) // the outcome is FinishDeviceTool's to read
	if release() {
		return abortedError()
	}
	if runner.unrecorded != nil {
		// Retried by Temporal: a database that could not write may write again, and the retry
		// picks up from the records that were written.
		return runner.unrecorded
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
	plan := in.Plan
	res := tools.DeviceResult(plan, planOutcomes(plan, byNode, in.Errors))
	waited := reportWaits(res.Data, plan, in.Waits, byNode)
	res = tools.Collect(res.Data)
	res.Metadata = map[string]any{"tool_name": in.Call.Name, "version": tools.FormatVersion}
	if waited != nil {
		res.Metadata["wait_for"] = waited
	}
	if !first.IsZero() {
		res.Metadata["execution_time"] = math.Round(time.Since(first).Seconds()*1000) / 1000
	}
	return a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res)
}

// planOutcomes rebuilds every job's outcome from its device's records, in the plan's order; a
// device whose activity failed for good without a device-level error gets that failure.
func planOutcomes(plan tools.DevicePlan, byNode map[string][]models.DeviceCommand, errs map[string]string) []tools.DeviceOutcome {
	outcomes := make([]tools.DeviceOutcome, 0, len(plan.Jobs))
	for _, job := range plan.Jobs {
		o := outcomeFromRecords(job, byNode[job.NodeID])
		if msg, ok := errs[job.NodeID]; ok && o.Err == "" {
			o.Err = msg
		}
		outcomes = append(outcomes, o)
	}
	return outcomes
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
		if r.Seq < 0 {
			continue // configuration reads, not commands of the call
		}
		switch r.Status {
		case models.CommandOK, models.CommandFailed:
			o.Results = append(o.Results, devices.CommandResult{Command: r.Command, Output: r.Output,
				Failed: r.Status == models.CommandFailed, Error: r.Error})
		case models.CommandApplied:
			o.Results = append(o.Results, devices.CommandResult{Command: r.Command, Output: "(" + r.Reason + ")"})
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
	// unrecorded is set when a command's "about to send" record could not be written; the
	// command was then not sent.
	unrecorded error
}

// errNotRecorded marks a command left unsent because its record could not be written first.
var errNotRecorded = errors.New("not sent: it could not be recorded first")

func (a *Activities) deviceRunner(ref workflows.ToolCallRef) *deviceRunner {
	return &deviceRunner{a: a, ref: ref}
}

func (r *deviceRunner) progress(ctx context.Context, job tools.DeviceJob, status, msg string) {
	r.a.publishTurn(ctx, r.ref.WorkRef, relay.Payload{Type: relay.TypeToolProgress, SessionID: r.ref.SessionID, ToolName: r.ref.ToolName,
		ToolCallID: r.ref.CallID, Progress: tools.Progress{ItemID: job.NodeID, ItemName: job.Name, Status: status, Message: msg}})
}

func (r *deviceRunner) record(job tools.DeviceJob, seq int, cmd, status string) *models.DeviceCommand {
	return &models.DeviceCommand{TurnID: r.ref.TurnID, ToolCallID: r.ref.CallID, NodeID: job.NodeID, Seq: seq,
		SessionID: r.ref.SessionID, Origin: origin(r.ref.WorkRef), UserID: r.ref.UserID, ProjectID: r.ref.ProjectID, DeviceName: job.Name,
		Tool: r.ref.ToolName, Command: cmd, Config: job.Config, Status: status}
}

// RunDevice runs one device's job (see run) and returns the device's outcome as the records
// tell it.
func (r *deviceRunner) RunDevice(ctx context.Context, job tools.DeviceJob) tools.DeviceOutcome {
	o, readCtx := r.run(ctx, job)
	if readCtx != nil {
		return r.outcome(readCtx, job)
	}
	return o
}

// run runs one device's job: it works out from the records what is left to send after any
// earlier attempt and sends it under the device's lock (line by line, or as one configuration
// session). It returns the outcome itself when the records cannot tell it (they could not be
// read, or a command could not be recorded); otherwise the context to read the records with,
// which the RunDevice activity, leaving the outcome to FinishDeviceTool, does not do.
func (r *deviceRunner) run(ctx context.Context, job tools.DeviceJob) (tools.DeviceOutcome, context.Context) {
	j := &jobRun{deviceRunner: r, job: job, platform: job.Platform}
	existing, err := r.a.DeviceRecords.Commands(ctx, r.ref.TurnID, r.ref.CallID, job.NodeID)
	if err != nil {
		return tools.DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Err: "could not read the device's records: " + err.Error()}, nil
	}
	j.read = map[int]*models.DeviceCommand{}
	for _, c := range existing {
		j.read[c.Seq] = &c
	}
	pending := j.pending(ctx)
	if len(pending) == 0 {
		return tools.DeviceOutcome{}, ctx
	}

	r.progress(ctx, job, "connecting", "")
	err = r.use(ctx, job, func(s *devices.Session) error {
		if p := s.Profile(); p != nil {
			j.platform = p.Name
		}
		r.progress(ctx, job, "running", fmt.Sprintf("%d command(s)", len(pending)))
		if !job.Config {
			return j.sendLines(ctx, s, pending)
		}
		return j.sendConfig(ctx, s, pending)
	})
	if errors.Is(err, errNotRecorded) {
		r.unrecorded = err
		r.progress(ctx, job, "failed", err.Error())
		return tools.DeviceOutcome{NodeID: job.NodeID, Name: job.Name, Err: "the command " + err.Error()}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return tools.DeviceOutcome{}, context.WithoutCancel(ctx)
		}
		msg := err.Error()
		var busy *devices.BusyError
		if errors.As(err, &busy) {
			msg = busy.Error()
		}
		e := r.record(job, deviceErrorSeq, "", models.CommandFailed)
		e.Error = msg
		j.save(ctx, e)
		r.progress(ctx, job, "failed", msg)
		return tools.DeviceOutcome{}, ctx
	}
	if prev, ok := j.read[deviceErrorSeq]; ok && prev.Error != "" {
		j.save(ctx, r.record(job, deviceErrorSeq, "", models.CommandOK)) // an earlier attempt's failure no longer holds
	}
	r.progress(ctx, job, "done", "")
	return tools.DeviceOutcome{}, ctx
}

// jobRun is one device's job on its way: the records it writes, and the platform its commands
// are counted under (the job's until the console says which platform it is).
type jobRun struct {
	*deviceRunner
	job      tools.DeviceJob
	platform string
	// read is each record as this attempt read it before sending anything.
	read map[int]*models.DeviceCommand
}

// save writes a record, even when the turn is being cancelled, and counts a command that
// reached its final status.
func (j *jobRun) save(ctx context.Context, c *models.DeviceCommand) {
	if err := j.a.DeviceRecords.Save(context.WithoutCancel(ctx), c); err != nil {
		j.a.logger(ctx).Error("recording a device command", "device", j.job.Name, "error", err)
	}
	if c.Seq != deviceErrorSeq {
		j.a.Metrics.DeviceCommand(j.platform, c.Status)
	}
}

// saveBeforeSend writes a command's "about to send" record; the command goes out only once it
// is written: without it a retry could not know the command may already be in effect, and the
// audit would miss it. The record moves on only from the record from that this attempt read
// (nil: none; DeviceRepository.Claim), so an attempt overlapping another one of the same
// activity (a retry started while the attempt it replaces still runs) never sends a change
// twice. A read-only command may be sent again, and is simply saved.
func (j *jobRun) saveBeforeSend(ctx context.Context, c *models.DeviceCommand, from *models.DeviceCommand) error {
	ctx = context.WithoutCancel(ctx)
	claimed := true
	var err error
	if j.ref.ToolName == tools.ShowCommandsTool {
		err = j.a.DeviceRecords.Save(ctx, c)
	} else {
		claimed, err = j.a.DeviceRecords.Claim(ctx, c, from)
	}
	if err != nil {
		j.a.logger(ctx).Error("recording a device command before sending it; not sending it", "device", j.job.Name, "error", err)
		return fmt.Errorf("%q on %s %w: %v", c.Command, j.job.Name, errNotRecorded, err)
	}
	if !claimed {
		j.a.logger(ctx).Warn("another attempt moved a device command's record on; not sending it", "device", j.job.Name, "seq", c.Seq)
		return fmt.Errorf("%q on %s %w: another attempt of this call has taken it over", c.Command, j.job.Name, errNotRecorded)
	}
	return nil
}

// pending records the job's blocked commands and returns the commands left to send, in order,
// given the records of earlier attempts (j.read).
//
// A read-only command interrupted by a crash is simply sent again. A change that was on its way
// when the worker died may already be in effect: the device's configuration is read back and
// tells. A line it shows in effect is recorded as applied and not sent again; a line it shows
// absent is sent; where it cannot tell, that line is left unknown and nothing after it is sent
// (later lines usually depend on it), so the model decides with the facts in hand. Queued lines
// never left the worker and are sent.
func (j *jobRun) pending(ctx context.Context) []int {
	job, done := j.job, j.read
	for i, b := range job.Blocked {
		seq := len(job.Commands) + i
		if _, ok := done[seq]; !ok {
			c := j.record(job, seq, b.Command, models.CommandBlocked)
			c.Blocked, c.Reason = true, b.Reason
			j.save(ctx, c)
		}
	}

	readOnly := j.ref.ToolName == tools.ShowCommandsTool
	var interrupted []int
	for i := range job.Commands {
		if c, ok := done[i]; ok && c.Status == models.CommandSent && !readOnly {
			interrupted = append(interrupted, i)
		}
	}
	verdicts := map[int]devices.Verdict{}
	if len(interrupted) > 0 {
		verdicts = j.verifyInterrupted(ctx, job, interrupted)
	}
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
			j.save(ctx, j.record(job, i, cmd, models.CommandSkipped))
		case ok && c.Status == models.CommandSent && verdicts[i] == devices.VerdictTook:
			a := j.record(job, i, cmd, models.CommandApplied)
			a.Reason = "verified after restart: the worker stopped while sending it, and the device's configuration shows it in effect"
			now := time.Now().UTC()
			a.FinishedAt = &now
			j.save(ctx, a)
		case ok && c.Status == models.CommandSent && verdicts[i] != devices.VerdictNotTook:
			u := j.record(job, i, cmd, models.CommandUnknown)
			u.Error = "the worker stopped while this command was being sent, and reading the device back could not tell whether it took effect; it was not sent again (nor what follows it): check whether it took effect"
			j.save(ctx, u)
			stopped = true
		default:
			pending = append(pending, i)
		}
	}
	return pending
}

// sendLines sends show and VPCS commands one at a time, each recorded before it goes out and
// again with its output; the first that fails stops the rest.
func (j *jobRun) sendLines(ctx context.Context, s *devices.Session, pending []int) error {
	job := j.job
	for _, i := range pending {
		c := j.record(job, i, job.Commands[i], models.CommandSent)
		c.HostKey = s.HostKey()
		now := time.Now().UTC()
		c.SentAt = &now
		if err := j.saveBeforeSend(ctx, c, j.read[i]); err != nil {
			return err
		}
		res, err := s.Run(ctx, job.Commands[i])
		finishRecord(c, res, err)
		j.save(ctx, c)
		if err != nil {
			return err
		}
	}
	return nil
}

// sendConfig sends configuration lines in one configuration-mode session. Every line is
// recorded queued before the session starts, sent just before it goes out and with its result
// after; lines the session did not reach are recorded skipped.
func (j *jobRun) sendConfig(ctx context.Context, s *devices.Session, pending []int) error {
	job := j.job
	var lines []string
	var recs []*models.DeviceCommand // nil for a context line sent again, which is not recorded
	if ctxLine, ok := s.Profile().ResumeContext(job.Commands[:pending[0]]); ok {
		// Resuming after a crash in the middle of a section: enter it again first.
		lines, recs = append(lines, ctxLine), append(recs, nil)
	}
	for _, i := range pending {
		lines = append(lines, job.Commands[i])
		rec := j.record(job, i, job.Commands[i], models.CommandQueued)
		rec.HostKey = s.HostKey()
		recs = append(recs, rec)
		if err := j.saveBeforeSend(ctx, rec, j.read[i]); err != nil {
			return err
		}
	}
	next := 0
	refused := false
	_, err := s.ConfigureWith(ctx, lines, devices.ConfigureOptions{OnSend: func(string) error {
		if next < len(recs) && recs[next] != nil {
			queued := models.DeviceCommand{Status: models.CommandQueued, Claims: recs[next].Claims} // as this attempt queued it
			now := time.Now().UTC()
			recs[next].Status, recs[next].SentAt = models.CommandSent, &now
			if err := j.saveBeforeSend(ctx, recs[next], &queued); err != nil {
				refused = true
				return err
			}
		}
		return nil
	}, OnResult: func(res devices.CommandResult) {
		// After a refused line the records belong to whoever claimed it.
		if next < len(recs) && !refused {
			if recs[next] != nil {
				finishRecord(recs[next], res, nil)
				j.save(ctx, recs[next])
			}
			next++
		}
	}})
	if err == nil {
		for ; next < len(recs); next++ {
			if recs[next] != nil {
				recs[next].Status = models.CommandSkipped
				j.save(ctx, recs[next])
			}
		}
	}
	return err
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

// verifyInterrupted reads the device's configuration back after a crash and judges the lines
// that were on their way. The read is recorded (seq SeqReadRecovery) so the audit shows what
// the decision rested on. A device that cannot be read gives no verdicts: every such line
// stays unknown.
func (r *deviceRunner) verifyInterrupted(ctx context.Context, job tools.DeviceJob, lines []int) map[int]devices.Verdict {
	out := map[int]devices.Verdict{}
	cfg, profile, err := r.readConfig(ctx, job, models.SeqReadRecovery)
	if err != nil || profile == nil {
		if err != nil {
			r.a.logger(ctx).Warn("reading a device back after a crash", "device", job.Name, "error", err)
		}
		return out
	}
	for _, i := range lines {
		out[i] = profile.Verify(job.Commands[i], profile.ConfigLines(cfg))
	}
	return out
}

// use opens a session on the job's device under the device's lock, with the worker's device
// options and policy, and runs fn in it.
func (r *deviceRunner) use(ctx context.Context, job tools.DeviceJob, fn func(*devices.Session) error) error {
	opts := r.a.Devices.Options
	opts.Policy = r.a.Devices.Policy
	var locker devices.Locker
	if r.a.Devices.Locker != nil {
		locker = timedLocker{Locker: r.a.Devices.Locker, m: r.a.Metrics}
	}
	return devices.Use(ctx, locker, devices.Target(job.Target), r.a.GNS3.Host(), opts, func(s *devices.Session) error {
		defer r.a.Metrics.ConsoleSessionOpened()()
		return fn(s)
	})
}

// timedLocker reports how long each wait for a console's lock took and how it ended.
type timedLocker struct {
	devices.Locker
	m *metrics.Metrics
}

func (l timedLocker) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	began := time.Now()
	unlock, err := l.Locker.Lock(ctx, key, ttl)
	outcome := "acquired"
	switch {
	case errors.Is(err, devices.ErrDeviceBusy):
		outcome = "busy"
	case err != nil:
		outcome = "cancelled"
	}
	l.m.ConsoleLockWaited(outcome, time.Since(began))
	return unlock, err
}

// runRecorded sends cmd on s with run (s.Run, or a platform's own way such as s.SaveConfig) and
// keeps it for the audit in slot seq, also once ctx has ended. stored is the record's own
// storage error: each caller decides whether it fails the step.
func (r *deviceRunner) runRecorded(ctx context.Context, s *devices.Session, job tools.DeviceJob, seq int, cmd string,
	run func(context.Context, string) (devices.CommandResult, error)) (res devices.CommandResult, err, stored error) {
	rec := r.record(job, seq, cmd, models.CommandSent)
	rec.HostKey = s.HostKey()
	now := time.Now().UTC()
	rec.SentAt = &now
	res, err = run(ctx, cmd)
	finishRecord(rec, res, err)
	return res, err, r.a.DeviceRecords.Save(context.WithoutCancel(ctx), rec)
}

// readConfig reads a device's configuration with its platform's show command under the
// device's lock and records it in the given slot. The profile is nil when the platform has no
// configuration to read.
func (r *deviceRunner) readConfig(ctx context.Context, job tools.DeviceJob, seq int) (string, *devices.Profile, error) {
	var output string
	var profile *devices.Profile
	err := r.use(ctx, job, func(s *devices.Session) error {
		p := s.Profile()
		cmd := p.ConfigCommand()
		if cmd == "" {
			return nil
		}
		res, err, serr := r.runRecorded(ctx, s, job, seq, cmd, s.Run)
		if serr != nil && err == nil {
			err = serr
		}
		if err == nil && res.Failed {
			err = fmt.Errorf("%q failed on %s: %s", cmd, job.Name, res.Error)
		}
		if err == nil {
			output, profile = res.Output, p
		}
		return err
	})
	return output, profile, err
}
