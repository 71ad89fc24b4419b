package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// RunWaitChecks runs one attempt of a device's pending wait_for checks in one console session
// under the device's lock: each check's command, and how many times its output matches. The
// last output of every check is kept in the device records (for the result and the audit),
// and where the checks stand goes to the event log as the device's progress ("1 of 2 Full,
// 9 s"). A device that cannot be reached this time is not a failure of the activity: the
// workflow tries again after its pause, until the checks' timeouts pass.
func (a *Activities) RunWaitChecks(ctx context.Context, in workflows.WaitCheckInput) (workflows.WaitCheckResult, error) {
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	r := a.deviceRunner(in.Turn)
	job := in.Job
	res := workflows.WaitCheckResult{Matches: make([]int, len(in.Checks)), Held: make([]bool, len(in.Checks))}
	outputs, problems := make([]string, len(in.Checks)), make([]string, len(in.Checks))
	for _, i := range in.Checks {
		if i < 0 || i >= len(job.Wait) {
			return res, fmt.Errorf("wait_for check %d is not in the plan of %s", i, job.Name)
		}
	}
	err := r.use(ctx, job, func(s *devices.Session) error {
		for k, i := range in.Checks {
			c := job.Wait[i]
			out, err := s.Run(ctx, c.Command)
			if err != nil {
				return err
			}
			outputs[k] = out.Output
			if out.Failed {
				problems[k] = fmt.Sprintf("%q failed: %s", c.Command, out.Error)
				continue
			}
			res.Matches[k] = tools.WaitMatches(c, out.Output)
			res.Held[k] = res.Matches[k] >= c.Count
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.Error = err.Error()
	}
	elapsed := time.Since(in.Started).Seconds()
	var words []string
	for k, i := range in.Checks {
		c := job.Wait[i]
		status, note := models.CommandFailed, tools.WaitProgress(c, res.Matches[k], elapsed)
		if res.Held[k] {
			status = models.CommandOK
		}
		if problems[k] != "" {
			note += "; " + problems[k]
		}
		words = append(words, note)
		rec := r.record(job, models.SeqWaitCheck(i), c.Command, status)
		rec.Output, rec.Error = outputs[k], fmt.Sprintf("attempt %d: %s", in.Attempt, note)
		if res.Error != "" && outputs[k] == "" {
			rec.Error += "; " + res.Error
		}
		now := time.Now().UTC()
		rec.SentAt, rec.FinishedAt = &now, &now
		if err := a.DeviceRecords.Save(context.WithoutCancel(ctx), rec); err != nil {
			return res, fmt.Errorf("storing the wait_for record: %w", err)
		}
	}
	msg := strings.Join(words, "; ")
	if res.Error != "" {
		msg += " (" + res.Error + ")"
	}
	r.progress(ctx, job, "waiting", msg)
	return res, nil
}

// WaitReport is one wait_for check's outcome in a tool result's metadata.
type WaitReport struct {
	Command        string  `json:"command"`
	Expect         string  `json:"expect"`
	Count          int     `json:"count"`
	TimeoutSeconds int     `json:"timeout_seconds"`
	Held           bool    `json:"held"`
	Matches        int     `json:"matches"`
	Attempts       int     `json:"attempts"`
	Seconds        float64 `json:"seconds"`
	Error          string  `json:"error,omitempty"`
	LastOutput     string  `json:"last_output"`
}

// reportWaits adds every device's wait_for outcomes to its result item (which checks held,
// after how long, with the last output) and returns them for the result's metadata, by
// device name (nil when the call had none). A device whose checks did not all hold becomes
// partial_success: its commands ran, the network did not get there in time.
func reportWaits(items []tools.Item, plan tools.DevicePlan, waits map[string][]domain.WaitOutcome, byNode map[string][]models.DeviceCommand) map[string][]WaitReport {
	if len(waits) == 0 {
		return nil
	}
	meta := map[string][]WaitReport{}
	for _, job := range plan.Jobs {
		outs, ok := waits[job.NodeID]
		if !ok {
			continue
		}
		last := map[int]string{}
		for _, r := range byNode[job.NodeID] {
			if i, ok := models.WaitCheckIndex(r.Seq); ok {
				last[i] = r.Output
			}
		}
		var reports []WaitReport
		for i, c := range job.Wait {
			if i >= len(outs) {
				break
			}
			o := outs[i]
			reports = append(reports, WaitReport{Command: c.Command, Expect: c.Expect, Count: c.Count, TimeoutSeconds: c.TimeoutSeconds,
				Held: o.Held, Matches: o.Matches, Attempts: o.Attempts, Seconds: o.Seconds, Error: o.Error, LastOutput: last[i]})
		}
		meta[job.Name] = reports
		for k := range items {
			if items[k].ID == job.NodeID {
				annotateWait(&items[k], reports)
			}
		}
	}
	return meta
}

// annotateWait words a device's checks in its result item.
func annotateWait(it *tools.Item, reports []WaitReport) {
	var b strings.Builder
	var failed []string
	b.WriteString(it.Result)
	b.WriteString("\n\nWaited for:")
	for _, r := range reports {
		mark := "held"
		if !r.Held {
			mark = "did NOT hold"
			why := fmt.Sprintf("%q showed %d of %d %q within %d s", r.Command, r.Matches, r.Count, r.Expect, r.TimeoutSeconds)
			if r.Error != "" {
				why += " (" + r.Error + ")"
			}
			failed = append(failed, why)
		}
		fmt.Fprintf(&b, "\n- %s: %d of %d %q, %s after %.0f s and %d attempt(s)", r.Command, min(r.Matches, r.Count), r.Count, r.Expect, mark, r.Seconds, r.Attempts)
		if r.Error != "" {
			fmt.Fprintf(&b, " (%s)", r.Error)
		}
		if r.LastOutput != "" {
			fmt.Fprintf(&b, "\n  last output:\n%s", indent(strings.TrimRight(r.LastOutput, "\n"), "    "))
		}
	}
	it.Result = strings.TrimLeft(b.String(), "\n")
	if len(failed) == 0 {
		return
	}
	markPartial(it, "wait_for did not hold: "+strings.Join(failed, "; "))
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
