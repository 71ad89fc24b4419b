package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// After GNS3's restore every node is stopped, under a new id. A snapshot the copilot took of a
// running lab (a save point) says which nodes ran and what each saved: those are started again,
// their consoles waited for, and each one read back against its saved configuration, so a reset
// gives the class its lab back running, configured and pinging, and says per device what came
// back and what did not.

// DeviceBack is what a restore gave back of one device that ran at the save point.
type DeviceBack struct {
	Name string
	// Back: it runs, its console answers, and what it saved is in effect.
	Back bool
	// Text says so, or what is missing, for people.
	Text string
}

// RestoreReport is what came back after a restore; Known is false for a snapshot without a save
// point (which nodes ran then is not known, so none is started).
type RestoreReport struct {
	Known   bool
	Devices []DeviceBack
	Took    time.Duration
}

// Summary says it in a sentence or two.
func (r RestoreReport) Summary() string {
	if !r.Known {
		return "Which nodes ran when this snapshot was taken is not known (the copilot did not take it while the lab ran), " +
			"so every node stays stopped: start them with start_gns3_node."
	}
	if len(r.Devices) == 0 {
		return "No node ran when the snapshot was taken, so none was started."
	}
	var back, notBack []string
	for _, d := range r.Devices {
		if d.Back {
			back = append(back, d.Name)
		} else {
			notBack = append(notBack, d.Name)
		}
	}
	text := fmt.Sprintf("The %d node(s) that ran when the snapshot was taken were started again (%s)", len(r.Devices), seconds(r.Took.Milliseconds()))
	switch {
	case len(notBack) == 0:
		text += ": every one runs, its console answers and its saved configuration is back."
	case len(back) == 0:
		text += ": none came back as it was saved."
	default:
		text += fmt.Sprintf(": %s came back as saved; %s did not.", strings.Join(back, ", "), strings.Join(notBack, ", "))
	}
	return text
}

// PerDevice lists each device's outcome, one line each.
func (r RestoreReport) PerDevice() string {
	var b strings.Builder
	for _, d := range r.Devices {
		fmt.Fprintf(&b, "\n- **%s**: %s", d.Name, d.Text)
	}
	return b.String()
}

// bringBack starts again the nodes that ran at the restored snapshot's save point, waits for
// their consoles and reads each one back. snapshot and created name the snapshot as GNS3 lists
// it; the device reads are recorded under the call.
func (a *Activities) bringBack(ctx context.Context, env tools.Env, ref workflows.ToolCallRef, snapshot string, created int64) (RestoreReport, error) {
	began := time.Now()
	sp, err := a.SavePoints.ForSnapshot(ctx, ref.ProjectID, snapshot, time.Unix(created, 0))
	if errors.Is(err, models.ErrNotFound) {
		return RestoreReport{}, nil
	}
	if err != nil {
		return RestoreReport{}, fmt.Errorf("loading the snapshot's save point: %w", err)
	}
	devs := sp.DeviceList()
	nodes := make([]domain.SavePointNode, len(devs))
	for i, d := range devs {
		nodes[i] = domain.SavePointNode{Name: d.Name, NodeType: d.NodeType, Platform: d.Platform, Status: d.Status}
	}
	report := RestoreReport{Known: true, Devices: make([]DeviceBack, len(devs))}
	index := map[string]int{}
	for i, d := range devs {
		index[d.Name] = i
	}
	// Each device is read back as soon as GNS3 accepted its start, beside the others.
	started := tools.StartNodes(ctx, env, nodes, func(n tools.StartedNode) string {
		i := index[n.Name]
		d := a.readBackDevice(ctx, env, ref, n, devs[i])
		report.Devices[i] = d
		if d.Back {
			return ""
		}
		return d.Text
	})
	for i, n := range started {
		if report.Devices[i].Name == "" {
			report.Devices[i] = DeviceBack{Name: n.Name, Text: "not started again: " + n.Err}
		}
	}
	report.Took = time.Since(began)
	return report, ctx.Err()
}

// readBackDevice waits for a started node's console and then until its configuration holds what
// it saved at the save point, reading it again every second: a router's console answers before
// its daemons have loaded the saved configuration. A configuration that stays the same for
// settledFor without holding it all is what came back (a line the platform does not keep across
// a restart, such as the hostname FRR's vtysh keeps for itself, never comes); so is the last read
// past the node's console bound. The last read is recorded under the call.
func (a *Activities) readBackDevice(ctx context.Context, env tools.Env, ref workflows.ToolCallRef, n tools.StartedNode, saved models.SavePointDevice) DeviceBack {
	out := DeviceBack{Name: n.Name}
	if !tools.HasCLIConsole(n.Target) {
		out.Back, out.Text = true, "runs again (it has no console to read its configuration from)"
		return out
	}
	job := tools.DeviceJob{NodeID: n.NodeID, Name: n.Name, Target: n.Target, Platform: saved.Platform}
	runner := a.deviceRunner(ref)
	wait := tools.StartWait(n.NodeType)
	deadline := time.Now().Add(wait)
	var verdict DeviceBack
	compared := false
	var last []string
	var sameSince time.Time
	err := runner.whenConsoleAnswers(ctx, job, wait, func(s *devices.Session) error {
		profile := s.Profile()
		cmd := saved.ReadCommand
		if cmd == "" {
			cmd = profile.ConfigCommand()
		}
		if saved.Config == "" || cmd == "" {
			return nil
		}
		want := profile.KeptLines(saved.Config)
		for {
			rec := runner.record(job, models.SeqReadBack, cmd, models.CommandSent)
			rec.HostKey, rec.SentAt = s.HostKey(), now()
			res, err := s.Run(ctx, cmd)
			finishRecord(rec, res, err)
			if err == nil && res.Failed {
				err = fmt.Errorf("%q failed: %s", cmd, res.Error)
			}
			settled := false
			if err == nil {
				compared = true
				lines := profile.KeptLines(res.Output)
				verdict.Back, verdict.Text = compareSaved(profile, saved, want, lines)
				if last == nil || !slices.Equal(lines, last) {
					last, sameSince = lines, time.Now()
				}
				settled = time.Since(sameSince) >= settledFor
			}
			// Only what the device saved is worth waiting for; what it could not save is gone.
			if err != nil || verdict.Back || settled || !saved.Saved || !time.Now().Add(time.Second).Before(deadline) {
				a.saveRecord(ctx, rec)
				return err
			}
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				a.saveRecord(ctx, rec)
				return ctx.Err()
			case <-t.C:
			}
		}
	})
	switch {
	case err != nil:
		out.Text = "started again, but " + err.Error()
	case compared:
		out.Back, out.Text = verdict.Back, verdict.Text
	default:
		out.Back = true
		out.Text = "runs again and its console answers"
		if saved.Error != "" {
			out.Text += "; nothing was saved to compare it with (" + saved.Error + ")"
		} else {
			out.Text += "; nothing was saved to compare it with"
		}
	}
	status := "back"
	if !out.Back {
		status = "failed"
	}
	env.Report(tools.Progress{ItemID: n.NodeID, ItemName: n.Name, Status: status, Message: out.Text})
	return out
}

// settledFor is how long a device's configuration read back must stay the same, without holding
// all it saved, before the rest is taken as not coming back: FRR loads its saved configuration in
// a second or two after its console answers.
const settledFor = 5 * time.Second

// compareSaved judges a device read back after a restore against what it saved: want and got are
// the lines the platform keeps of its saved configuration and of the one read now.
func compareSaved(p *devices.Profile, saved models.SavePointDevice, want, got []string) (bool, string) {
	extra, missing := devices.DiffConfig(want, got)
	if p.Name == "vpcs" {
		if len(missing) == 0 && len(extra) == 0 {
			return true, "runs again with the addresses it saved: " + vpcsAddresses(got)
		}
		return false, fmt.Sprintf("runs again, but its addresses are not as saved: it reads %s, it saved %s", vpcsAddresses(got), vpcsAddresses(want))
	}
	if len(missing) == 0 {
		text := fmt.Sprintf("runs again and its running configuration (%s) holds all %d line(s) it saved", saved.ReadCommand, len(want))
		if len(extra) > 0 {
			text += fmt.Sprintf(", and %d more: %s", len(extra), clipLines(extra, 5))
		}
		return true, text
	}
	return false, fmt.Sprintf("runs again, but %d of the %d line(s) it saved are missing from its running configuration (%s): %s",
		len(missing), len(want), saved.ReadCommand, clipLines(missing, 8))
}

// vpcsAddresses says a VPCS read's address, gateway and DNS in one phrase.
func vpcsAddresses(lines []string) string {
	var parts []string
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			continue
		}
		switch k {
		case "IP/MASK":
			parts = append(parts, v)
		case "GATEWAY":
			parts = append(parts, "gateway "+v)
		case "DNS":
			parts = append(parts, "DNS "+v)
		}
	}
	if len(parts) == 0 {
		return "no address"
	}
	return strings.Join(parts, ", ")
}

func clipLines(lines []string, max int) string {
	quoted := make([]string, 0, min(len(lines), max))
	for _, l := range lines[:min(len(lines), max)] {
		quoted = append(quoted, fmt.Sprintf("%q", l))
	}
	text := strings.Join(quoted, ", ")
	if len(lines) > max {
		text += fmt.Sprintf(" and %d more", len(lines)-max)
	}
	return text
}

// afterRestore brings back what ran at the save point of a restore that succeeded, and adds to
// its result: the snapshot's item says what came back, each device's item whether it is back as
// saved (failed when not).
func (a *Activities) afterRestore(ctx context.Context, env tools.Env, ref workflows.ToolCallRef, res tools.Result) (tools.Result, RestoreReport) {
	name, _ := res.Metadata["snapshot_name"].(string)
	created, _ := res.Metadata["snapshot_created"].(int64)
	if !res.Success || name == "" || len(res.Data) == 0 {
		return res, RestoreReport{}
	}
	report, err := a.bringBack(ctx, env, ref, name, created)
	if err != nil {
		res.Data[0].Result += ". The nodes that ran when the snapshot was taken could not all be started again: " + err.Error() +
			"; start them with start_gns3_node"
		return res, report
	}
	res.Data[0].Result += ". " + report.Summary()
	byName := map[string]DeviceBack{}
	for _, d := range report.Devices {
		byName[d.Name] = d
	}
	for i := range res.Data[1:] {
		it := &res.Data[i+1]
		d, ok := byName[it.Name]
		if !ok {
			continue
		}
		if d.Back {
			it.Result += "; " + d.Text
		} else {
			it.Status, it.Error = tools.StatusFailed, d.Text
		}
	}
	if report.Known {
		var back []string
		for _, d := range report.Devices {
			if d.Back {
				back = append(back, d.Name)
			}
		}
		sort.Strings(back)
		res.Metadata["started_again"] = len(report.Devices)
		res.Metadata["back_as_saved"] = back
		res.Metadata["bring_back_seconds"] = secondsValue(report.Took.Milliseconds())
	}
	counted := tools.Collect(res.Data)
	res.Success, res.Total, res.Successful, res.Failed, res.Error = counted.Success, counted.Total, counted.Successful, counted.Failed, counted.Error
	return res, report
}
