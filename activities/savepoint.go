package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The steps of a save point (workflows/savepoint.go): plan, save the devices, pause for the
// snapshot, resume after a pause that failed for good, answer. GNS3's half of each is in
// package tools; the consoles' half (saving, reading back, waiting for a prompt) is here, under
// the device locks and with the device records every console command leaves.

// PlanSavePoint checks a create_gns3_snapshot call (or an injection turn's own save point) and
// lists the nodes that run. A call it can answer at once, it answers: a refusal, or a lab where
// nothing runs, whose snapshot it takes. Then Done is set.
func (a *Activities) PlanSavePoint(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointPlan, error) {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	if in.Injection {
		return a.planInjectionSavePoint(ctx, in)
	}
	tin := workflows.ToolInput{Turn: in.Turn, Call: in.Call, MessageIndex: in.MessageIndex}
	env, mode, err := a.startTool(ctx, tin)
	if err != nil {
		return workflows.SavePointPlan{}, err
	}
	answer := func(res tools.Result) (workflows.SavePointPlan, error) {
		if res.Metadata == nil {
			res.Metadata = map[string]any{}
		}
		res.Metadata["tool_name"], res.Metadata["version"] = in.Call.Name, tools.FormatVersion
		a.refreshAfter(ctx, in.Turn, in.Call.Name)
		return workflows.SavePointPlan{Done: true}, a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res)
	}
	t, found := a.Tools.Lookup(in.Call.Name)
	if !found || !slices.Contains(t.Modes(), mode) {
		return answer(a.Tools.Execute(ctx, env, mode, in.Call.Name, in.Call.Arguments))
	}
	args, err := tools.NormalizeArgs(in.Call.Arguments)
	if err != nil {
		return answer(tools.Failure("invalid arguments for %s: %v", in.Call.Name, err))
	}
	plan, err := tools.PlanSavePoint(ctx, env, args)
	if err != nil {
		if gns3.Retryable(err) && ctx.Err() == nil {
			return workflows.SavePointPlan{}, err
		}
		return answer(tools.Failure("%s was not run, so nothing changed: %v", in.Call.Name, err))
	}
	if len(plan.Running) == 0 {
		return answer(a.Tools.Execute(ctx, env, mode, in.Call.Name, in.Call.Arguments))
	}
	return workflows.SavePointPlan{Name: plan.Name, Running: plan.Running}, nil
}

// planInjectionSavePoint plans an injection turn's starting point under the exercise's own
// name. A snapshot already recorded on the turn's plan, or one of that name (an earlier attempt
// of this turn took it), is the one; a lab where nothing runs is saved at once.
func (a *Activities) planInjectionSavePoint(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointPlan, error) {
	done := workflows.SavePointPlan{Done: true}
	name, err := a.injectionSnapshotName(ctx, in.Turn)
	if err != nil || name == "" {
		return done, err
	}
	env, err := a.toolEnv(ctx, in.Turn)
	if err != nil {
		return done, err
	}
	args, _ := json.Marshal(map[string]string{"name": name})
	plan, err := tools.PlanSavePoint(ctx, env, args)
	var refusal *tools.SnapshotError
	if errors.As(err, &refusal) && refusal.Taken != nil {
		s := refusal.Taken
		return done, a.Exercises.SetSnapshot(ctx, in.Turn.TurnID, s.SnapshotID, s.Name, s.Created())
	}
	if err != nil {
		return done, gns3Refusal(err)
	}
	if len(plan.Running) == 0 {
		s, err := tools.TakeSnapshot(ctx, env, name)
		if err != nil {
			return done, gns3Refusal(err)
		}
		return done, a.Exercises.SetSnapshot(ctx, in.Turn.TurnID, s.SnapshotID, s.Name, s.Created())
	}
	return workflows.SavePointPlan{Name: plan.Name, Running: plan.Running}, nil
}

// injectionSnapshotName is the name of an injection turn's snapshot; "" when the turn's plan
// records its snapshot already.
func (a *Activities) injectionSnapshotName(ctx context.Context, ref workflows.WorkRef) (string, error) {
	plan, err := a.Exercises.Plan(ctx, ref.TurnID)
	if errors.Is(err, models.ErrNotFound) {
		// Started by an API that stored no plan: one fault, as injections were.
		plan = &models.InjectionPlan{TurnID: ref.TurnID, SessionID: ref.SessionID, ProjectID: ref.ProjectID, UserID: ref.UserID, Requested: 1}
		err = a.Exercises.PlanInjection(ctx, plan)
	}
	if err != nil {
		return "", fmt.Errorf("loading the injection's plan: %w", err)
	}
	if plan.SnapshotID != "" {
		return "", nil
	}
	turn, err := a.Repo.Turn(ctx, ref.TurnID)
	if err != nil {
		return "", fmt.Errorf("loading the turn: %w", err)
	}
	return fmt.Sprintf("exercise-%s-%d-start", shortSession(ref.SessionID), turn.Seq), nil
}

// gns3Refusal is a failure a retry may cure (GNS3 unreachable or failing), or else final, in
// words.
func gns3Refusal(err error) error {
	if gns3.Retryable(err) {
		return fmt.Errorf("saving the lab: %w", err)
	}
	return temporal.NewNonRetryableApplicationError("GNS3 refused the snapshot: "+err.Error(), "SnapshotRefused", err)
}

// savePointEnv is the tools' environment for a save point's step; progress goes to the call's
// card (not for an injection's, which the student must not see).
func (a *Activities) savePointEnv(ctx context.Context, in workflows.SavePointInput) (tools.Env, error) {
	env, err := a.toolEnv(ctx, in.Turn)
	if err == nil && !in.Injection {
		env.Progress = a.cardProgress(ctx, in.Turn, in.Call)
	}
	return env, err
}

// SaveDevicesForSavePoint saves the configuration of every running node on its console, all at
// once, reads it back, and records the save point. A node whose configuration could not be
// saved (its console busy or silent, the save refused) stops the save point before anything is
// paused: stopping it would lose what it runs. A node that has nothing to save (its platform
// keeps no running configuration, or it has no console to save from) is noted, not a refusal.
// Saving again is harmless, so a retry saves again.
func (a *Activities) SaveDevicesForSavePoint(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointSaved, error) {
	env, err := a.savePointEnv(ctx, in)
	if err != nil {
		return workflows.SavePointSaved{}, err
	}
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	devs := make([]models.SavePointDevice, len(in.Running))
	refusals := make([]string, len(in.Running))
	var wg sync.WaitGroup
	for i, n := range in.Running {
		wg.Go(func() { devs[i], refusals[i] = a.saveDevice(ctx, env, in, n) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return workflows.SavePointSaved{}, ctx.Err()
	}
	sp := &models.SavePoint{ID: workflows.SavePointID(in.Turn.TurnID, in.Call.ID), ProjectID: in.Turn.ProjectID, SnapshotName: in.Name,
		TurnID: in.Turn.TurnID, ToolCallID: in.Call.ID, UserID: in.Turn.UserID}
	sp.SetDevices(devs)
	if err := a.SavePoints.Record(ctx, sp); err != nil {
		return workflows.SavePointSaved{}, fmt.Errorf("recording the save point: %w", err)
	}
	var refused []string
	for _, r := range refusals {
		if r != "" {
			refused = append(refused, r)
		}
	}
	if len(refused) == 0 {
		return workflows.SavePointSaved{}, nil
	}
	return workflows.SavePointSaved{Refused: fmt.Sprintf("No snapshot was taken and nothing was stopped: %s. Stopping a node whose "+
		"configuration is not saved would lose it; save it by hand or stop it yourself, then ask again.", strings.Join(refused, "; "))}, nil
}

// saveDevice saves one node's configuration and reads it back; the refusal, when not "", says
// why the save point must not stop it.
func (a *Activities) saveDevice(ctx context.Context, env tools.Env, in workflows.SavePointInput, n domain.SavePointNode) (models.SavePointDevice, string) {
	dev := models.SavePointDevice{Name: n.Name, NodeType: n.NodeType, Platform: n.Platform, Status: n.Status}
	if n.Status == gns3.NodeSuspended {
		dev.Error = "it is suspended, and a suspended node's console does not answer"
		return dev, fmt.Sprintf("%s is suspended, so its configuration cannot be saved (resume or stop it first)", n.Name)
	}
	if !tools.HasCLIConsole(n.Target) {
		dev.Error = "it has no telnet or SSH console to save its configuration from; it starts again from its disk"
		return dev, ""
	}
	env.Report(tools.Progress{ItemID: n.NodeID, ItemName: n.Name, Status: "saving"})
	runner := a.deviceRunner(workflows.ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name})
	job := tools.DeviceJob{NodeID: n.NodeID, Name: n.Name, Target: n.Target, Platform: n.Platform}
	refusal := ""
	err := runner.whenConsoleAnswers(ctx, job, saveConsoleWait, func(s *devices.Session) error {
		p := s.Profile()
		dev.Platform = p.Name
		if cmd, _ := p.SaveCommand(); cmd != "" {
			dev.SaveCommand = cmd
			res, err, serr := runner.runRecorded(ctx, s, job, 0, cmd, func(ctx context.Context, _ string) (devices.CommandResult, error) {
				return s.SaveConfig(ctx)
			})
			a.logUnrecorded(ctx, job.Name, serr)
			switch {
			case err != nil:
				return err
			case res.Failed:
				refusal = fmt.Sprintf("%s refused %q: %s", n.Name, cmd, cmpOr(res.Error, res.Output))
				dev.Error = refusal
				return nil
			}
			dev.Saved = true
		}
		if cmd := p.ConfigCommand(); cmd != "" {
			res, err, serr := runner.runRecorded(ctx, s, job, models.SeqReadAfter, cmd, s.Run)
			a.logUnrecorded(ctx, job.Name, serr)
			if err == nil && !res.Failed {
				dev.ReadCommand, dev.Config = cmd, res.Output
			}
			return err
		}
		return nil
	})
	if err != nil && refusal == "" {
		dev.Error = err.Error()
		refusal = fmt.Sprintf("%s's configuration could not be saved (%s)", n.Name, err)
	}
	status, msg := "saved", dev.SaveCommand
	switch {
	case refusal != "":
		status, msg = "failed", refusal
	case dev.SaveCommand == "":
		status, msg = "nothing to save", "its platform has no save command"
	}
	env.Report(tools.Progress{ItemID: n.NodeID, ItemName: n.Name, Status: status, Message: msg})
	return dev, refusal
}

// saveConsoleWait bounds the wait for a running node's console before its save: it runs, so its
// console answers unless it is busy or broken.
const saveConsoleWait = 30 * time.Second

func now() *time.Time {
	t := time.Now().UTC()
	return &t
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// saveRecord writes a device record; the audit must not fail the save point.
func (a *Activities) saveRecord(ctx context.Context, c *models.DeviceCommand) {
	a.logUnrecorded(ctx, c.DeviceName, a.DeviceRecords.Save(context.WithoutCancel(ctx), c))
}

// logUnrecorded logs a device command's record that could not be stored: the step goes on.
func (a *Activities) logUnrecorded(ctx context.Context, device string, err error) {
	if err != nil {
		a.logger(ctx).Error("recording a device command", "device", device, "error", err)
	}
}

// errInSession marks an error of the work done on a console, as opposed to reaching it.
type errInSession struct{ error }

func (e errInSession) Unwrap() error { return e.error }

// whenConsoleAnswers runs fn on the job's console, under its lock, as soon as the console
// answers with a prompt; until wait passes it tries again (a node just started may not listen
// yet, a router may still boot, another session may hold the console). An error of fn itself
// is returned at once.
func (r *deviceRunner) whenConsoleAnswers(ctx context.Context, job tools.DeviceJob, wait time.Duration, fn func(*devices.Session) error) error {
	deadline := time.Now().Add(wait)
	for {
		actx, cancel := context.WithDeadline(ctx, deadline)
		err := r.use(actx, job, func(s *devices.Session) error {
			if err := fn(s); err != nil {
				return errInSession{err}
			}
			return nil
		})
		cancel()
		var inSession errInSession
		switch {
		case err == nil:
			return nil
		case errors.As(err, &inSession):
			return inSession.error
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return fmt.Errorf("its console did not answer within %s: %w", wait, err)
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// PauseForSavePoint stops the nodes that ran, takes the snapshot and starts them again, then
// waits until each console answers: the lab's pause, as short as GNS3 allows (every node at
// once, the status read every 100 ms). A node that does not stop makes it start the others
// again and take no snapshot. Once nodes stopped, they are started again whatever happens to the
// activity (its context cancelled, the snapshot refused). A retried attempt that finds the
// snapshot taken only starts what is stopped.
func (a *Activities) PauseForSavePoint(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointPaused, error) {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	return a.pauseAttempt(ctx, in, attempt(ctx))
}

// pauseAttempt is one attempt of PauseForSavePoint (n counts them from 1).
func (a *Activities) pauseAttempt(ctx context.Context, in workflows.SavePointInput, n int) (workflows.SavePointPaused, error) {
	var out workflows.SavePointPaused
	env, err := a.savePointEnv(ctx, in)
	if err != nil {
		return out, err
	}
	env.Attempt = n
	var taken *gns3.Snapshot
	if n > 1 {
		taken, _ = tools.SnapshotNamed(ctx, env, in.Name)
	}
	began := time.Now()
	if taken == nil {
		if extra, err := startedSince(ctx, env, in.Running); err != nil {
			return out, err
		} else if extra != "" {
			out.Refused = fmt.Sprintf("No snapshot was taken and nothing was stopped: %s started since the configurations were saved; ask again", extra)
			return out, nil
		}
		began = time.Now()
		stopped, failed := tools.StopNodes(ctx, env, in.Running)
		out.StopMS = time.Since(began).Milliseconds()
		if len(failed) > 0 {
			back := a.startAgain(context.WithoutCancel(ctx), env, in, stopped, &out)
			out.Refused = hungRefusal(failed, back)
			out.PausedMS = time.Since(began).Milliseconds()
			return out, ctx.Err()
		}
		snapAt := time.Now()
		s, err := tools.TakeSnapshot(ctx, env, in.Name)
		out.SnapshotMS = time.Since(snapAt).Milliseconds()
		if err != nil {
			out.Refused = "No snapshot was taken: " + err.Error() + ". The nodes were started again"
		}
		taken = s
	}
	back := a.startAgain(context.WithoutCancel(ctx), env, in, in.Running, &out)
	out.PausedMS = time.Since(began).Milliseconds()
	out.NotBack = notBack(back)
	a.refreshAfter(ctx, in.Turn, in.Call.Name)
	if taken != nil {
		out.SnapshotID, out.CreatedAt = taken.SnapshotID, taken.CreatedAt
		err := a.SavePoints.Taken(context.WithoutCancel(ctx), workflows.SavePointID(in.Turn.TurnID, in.Call.ID), taken.SnapshotID, taken.Created(),
			time.Duration(out.PausedMS)*time.Millisecond)
		if err != nil {
			return out, fmt.Errorf("recording the save point's snapshot: %w", err)
		}
	}
	return out, ctx.Err()
}

// startedSince names the nodes that run now and were not running when the save point was
// planned: their configuration was not saved, so the pause must not stop them.
func startedSince(ctx context.Context, env tools.Env, planned []domain.SavePointNode) (string, error) {
	nodes, err := env.GNS3.ListNodes(ctx, env.ProjectID)
	if err != nil {
		return "", fmt.Errorf("reading the project before the pause: %w", err)
	}
	known := map[string]bool{}
	for _, n := range planned {
		known[n.NodeID] = true
	}
	var extra []string
	for i := range nodes {
		if tools.Running(&nodes[i]) && !known[nodes[i].NodeID] {
			extra = append(extra, nodes[i].Name)
		}
	}
	sort.Strings(extra)
	return strings.Join(extra, ", "), nil
}

// hungRefusal says which nodes could not be stopped, and how the others came back.
func hungRefusal(failed []tools.Item, back []tools.StartedNode) string {
	var hung []string
	for _, f := range failed {
		hung = append(hung, fmt.Sprintf("%s could not be stopped (%s)", f.Name, f.Error))
	}
	text := "No snapshot was taken: " + strings.Join(hung, "; ") + ", and GNS3 takes a snapshot only of a stopped lab"
	var again, notBack []string
	for _, b := range back {
		if b.Err != "" {
			notBack = append(notBack, fmt.Sprintf("%s (%s)", b.Name, b.Err))
		} else {
			again = append(again, b.Name)
		}
	}
	if len(again) > 0 {
		text += fmt.Sprintf(". %s, stopped meanwhile, run again with the configuration they saved and their consoles answer", strings.Join(again, ", "))
	}
	if len(notBack) > 0 {
		text += ". Not back: " + strings.Join(notBack, "; ")
	}
	return text
}

// startAgain starts the nodes (by name), all at once, and waits until each one is back: its
// console answers and, where it saved a configuration, its configuration holds what it saved
// (read back beside the others, as soon as GNS3 accepted its start). A node's Err says why it is
// not back. The parts' times go into out (start: until GNS3 accepted the last start; consoles:
// the rest).
func (a *Activities) startAgain(ctx context.Context, env tools.Env, in workflows.SavePointInput, nodes []domain.SavePointNode, out *workflows.SavePointPaused) []tools.StartedNode {
	saved := map[string]models.SavePointDevice{}
	if sp, err := a.SavePoints.Get(ctx, workflows.SavePointID(in.Turn.TurnID, in.Call.ID)); err == nil {
		for _, d := range sp.DeviceList() {
			saved[d.Name] = d
		}
	}
	ref := workflows.ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name}
	began := time.Now()
	started := tools.StartNodes(ctx, env, nodes, func(n tools.StartedNode) string {
		if d := a.readBackDevice(ctx, env, ref, n, saved[n.Name]); !d.Back {
			return d.Text
		}
		return ""
	})
	last := began
	for _, n := range started {
		if n.Accepted.After(last) {
			last = n.Accepted
		}
	}
	if out != nil {
		out.StartMS = last.Sub(began).Milliseconds()
		out.ConsoleMS = time.Since(last).Milliseconds()
	}
	return started
}

// notBack is why each node started again is not back, by name; nil when every one is.
func notBack(started []tools.StartedNode) map[string]string {
	var out map[string]string
	for _, n := range started {
		if n.Err != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[n.Name] = n.Err
		}
	}
	return out
}

// ResumeAfterSavePoint starts again every node of a save point whose pause failed for good,
// and waits for their consoles.
func (a *Activities) ResumeAfterSavePoint(ctx context.Context, in workflows.SavePointInput) (workflows.SavePointResumed, error) {
	env, err := a.savePointEnv(ctx, in)
	if err != nil {
		return workflows.SavePointResumed{}, err
	}
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	out := workflows.SavePointResumed{NotBack: notBack(a.startAgain(ctx, env, in, in.Running, nil))}
	a.refreshAfter(ctx, in.Turn, in.Call.Name)
	return out, ctx.Err()
}

// FinishSavePoint gives a save point its answer: the call's result in the standard format, or,
// for an injection turn, the snapshot recorded on the turn's plan and a sentence the student
// reads as content (the lab was paused, for how long). A retry answers the same.
func (a *Activities) FinishSavePoint(ctx context.Context, in workflows.SavePointFinish) (workflows.SavePointResult, error) {
	var devs []models.SavePointDevice
	if sp, err := a.SavePoints.Get(ctx, workflows.SavePointID(in.Turn.TurnID, in.Call.ID)); err == nil {
		devs = sp.DeviceList()
	}
	sum := summarizeSavePoint(in, devs)
	if in.Injection {
		if sum.taken {
			p := in.Paused
			if err := a.Exercises.SetSnapshot(ctx, in.Turn.TurnID, p.SnapshotID, in.Name, time.Unix(p.CreatedAt, 0)); err != nil {
				return workflows.SavePointResult{}, fmt.Errorf("recording the exercise's snapshot: %w", err)
			}
			a.publish(ctx, in.Turn.TurnID, relay.Payload{Type: relay.TypeContent, SessionID: in.Turn.SessionID, Content: sum.injectionNote() + "\n\n"})
		}
		return workflows.SavePointResult{Taken: sum.taken, Message: sum.message}, nil
	}
	res := sum.result()
	res.Metadata["tool_name"], res.Metadata["version"] = in.Call.Name, tools.FormatVersion
	if err := a.storeToolResult(ctx, in.Turn, in.Call, in.MessageIndex, res); err != nil {
		return workflows.SavePointResult{}, err
	}
	return workflows.SavePointResult{Taken: sum.taken, Message: sum.message}, nil
}

// savePointSummary is what a save point did, in the words of its result.
type savePointSummary struct {
	in      workflows.SavePointFinish
	devs    map[string]models.SavePointDevice
	taken   bool
	message string
}

func summarizeSavePoint(in workflows.SavePointFinish, devs []models.SavePointDevice) savePointSummary {
	s := savePointSummary{in: in, devs: map[string]models.SavePointDevice{}}
	for _, d := range devs {
		s.devs[d.Name] = d
	}
	p := in.Paused
	switch {
	case in.Failure != "":
		s.message = in.Failure
		if in.Resumed != nil {
			s.message += ". " + s.resumedText(in.Resumed.NotBack)
		}
	case in.Saved != nil && in.Saved.Refused != "":
		s.message = in.Saved.Refused
	case p == nil:
		s.message = "The snapshot was not taken."
	case p.Refused != "":
		s.message = p.Refused
	default:
		s.taken = true
		s.message = fmt.Sprintf("Snapshot %q taken. The lab was paused for %s while GNS3 took it: %s", in.Name, seconds(p.PausedMS), s.pausedText())
	}
	return s
}

// seconds renders milliseconds for people ("1.4 s").
func seconds(ms int64) string {
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// pausedText says what the pause did to each node, and which did not come back.
func (s savePointSummary) pausedText() string {
	p := s.in.Paused
	var saved []string
	for _, n := range s.in.Running {
		if d, ok := s.devs[n.Name]; ok && d.Saved {
			saved = append(saved, fmt.Sprintf("%s (%s)", n.Name, d.SaveCommand))
		}
	}
	text := fmt.Sprintf("the %d node(s) that ran were stopped and started again", len(s.in.Running))
	if len(saved) > 0 {
		text += "; saved first: " + strings.Join(saved, ", ")
	}
	text += fmt.Sprintf(" (stop %s, snapshot %s, start %s, consoles %s)", seconds(p.StopMS), seconds(p.SnapshotMS), seconds(p.StartMS), seconds(p.ConsoleMS))
	if len(p.NotBack) > 0 {
		text += ". " + s.resumedText(p.NotBack)
	} else {
		text += "; every one runs again, its console answers and what it saved is back"
	}
	return text
}

func (s savePointSummary) resumedText(notBack map[string]string) string {
	if len(notBack) == 0 {
		return "Every node that ran was started again and its console answers"
	}
	names := make([]string, 0, len(notBack))
	for n := range notBack {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s: %s", n, notBack[n])
	}
	return "Not back as it was: " + strings.Join(parts, "; ")
}

// injectionNote tells the student that the lab was paused for the exercise's starting point.
func (s savePointSummary) injectionNote() string {
	p := s.in.Paused
	names := make([]string, len(s.in.Running))
	for i, n := range s.in.Running {
		names[i] = n.Name
	}
	text := fmt.Sprintf("Before anything was broken, the lab was saved so that **reset** can give it back as it is now: %s saved their "+
		"configuration and were paused for %s while GNS3 took the snapshot (GNS3 takes snapshots only of a stopped lab)",
		strings.Join(names, ", "), seconds(p.PausedMS))
	if len(p.NotBack) > 0 {
		return text + ". " + s.resumedText(p.NotBack) + "."
	}
	return text + "; they run again."
}

// result is the call's standard result: the snapshot's item, then one per node paused.
func (s savePointSummary) result() tools.Result {
	in := s.in
	var items []tools.Item
	if s.taken {
		items = append(items, tools.Item{ID: in.Paused.SnapshotID, Name: in.Name, Status: tools.StatusSuccess, Result: s.message})
	} else {
		items = append(items, tools.Item{Name: in.Name, Status: tools.StatusFailed, Error: s.message})
	}
	notBack := map[string]string{}
	if in.Paused != nil {
		notBack = in.Paused.NotBack
	}
	if in.Resumed != nil {
		notBack = in.Resumed.NotBack
	}
	for _, n := range in.Running {
		d := s.devs[n.Name]
		it := tools.Item{ID: n.NodeID, Name: n.Name, Status: tools.StatusSuccess}
		var parts []string
		switch {
		case d.Saved:
			parts = append(parts, fmt.Sprintf("configuration saved with %q", d.SaveCommand))
		case d.Error != "":
			parts = append(parts, "not saved: "+d.Error)
		case d.Name != "":
			parts = append(parts, "nothing to save (its platform keeps no running configuration a command saves)")
		}
		switch why, gone := notBack[n.Name]; {
		case gone:
			it.Status, it.Error = tools.StatusFailed, why
		case in.Paused != nil && (s.taken || in.Paused.StopMS > 0):
			parts = append(parts, "stopped and started again; its console answers and what it saved is back")
		}
		it.Result = strings.Join(parts, "; ")
		items = append(items, it)
	}
	r := tools.Collect(items)
	if !s.taken {
		r.Success, r.Error = false, s.message
	}
	if p := in.Paused; p != nil && s.taken {
		r.Metadata["snapshot_id"] = p.SnapshotID
		r.Metadata["snapshot_name"] = in.Name
		r.Metadata["taken_at"] = time.Unix(p.CreatedAt, 0).UTC().Format("2006-01-02T15:04:05+00:00")
		r.Metadata["paused_seconds"] = secondsValue(p.PausedMS)
		r.Metadata["pause"] = map[string]any{"stop_seconds": secondsValue(p.StopMS), "snapshot_seconds": secondsValue(p.SnapshotMS),
			"start_seconds": secondsValue(p.StartMS), "console_seconds": secondsValue(p.ConsoleMS)}
		r.Metadata["nodes_paused"] = len(in.Running)
	}
	return r
}

// secondsValue is milliseconds as seconds, for a result's metadata.
func secondsValue(ms int64) float64 { return float64(ms) / 1000 }
