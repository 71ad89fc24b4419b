package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// The Temporal UI shows each activity with its summary, so an operator reads a turn as a story
// ("step 2: model gpt-4o", "start_gns3_node: R1, R2", "R1: 3 config lines") instead of a list of
// type names. Summaries hold names, ids and counts only: never a token, a key, the user's
// message or the model's text, nor a device's command lines.

// maxSummary keeps a summary on one line of the UI.
const maxSummary = 120

// summarized is ctx with its activity options' summary set.
func summarized(ctx workflow.Context, summary string) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	o.Summary = clipSummary(summary)
	return workflow.WithActivityOptions(ctx, o)
}

// runStep runs one of the turn's own steps (a model call, the finalizer) with ctx's activity
// options: as a local activity when asLocal, else as an activity. A local activity keeps the
// options' timeout and retry policy; it has no heartbeat, and needs none, since it lives and dies
// with the workflow task of the worker that runs it.
func runStep(ctx workflow.Context, asLocal bool, summary, name string, in any) workflow.Future {
	if !asLocal {
		return workflow.ExecuteActivity(summarized(ctx, summary), name, in)
	}
	o := workflow.GetActivityOptions(ctx)
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: o.StartToCloseTimeout, RetryPolicy: o.RetryPolicy, Summary: clipSummary(summary),
	}), name, in)
}

// clipSummary cuts s to maxSummary runes, on a rune boundary, and to its first line.
func clipSummary(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) <= maxSummary {
		return s
	}
	r := []rune(s)
	return string(r[:maxSummary-1]) + "…"
}

func llmSummary(step int, model string, last bool) string {
	s := fmt.Sprintf("step %d", step)
	if model != "" {
		s += ": model " + model
	}
	if last {
		s += " (last step, answer without tools)"
	}
	return s
}

// toolSummary names a tool call and what it acts on, as the model named it: the nodes, devices
// or links in its arguments. Other argument values (addresses, templates, text) are left out.
func toolSummary(call ToolCall) string {
	targets := callTargets(call.Arguments)
	if len(targets) == 0 {
		return call.Name
	}
	return call.Name + ": " + strings.Join(targets, ", ")
}

// targetKeys are the argument fields that name a node, device or link, in the tools' schemas.
var targetKeys = []string{"node_ids", "node_id", "nodes", "name", "device_configs", "device_name", "device_names", "job", "node_a", "node_b", "links", "link_id", "link_ids"}

func callTargets(arguments string) []string {
	var args map[string]any
	if json.Unmarshal([]byte(arguments), &args) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(out) < 8 {
				out = append(out, shortID(v))
			} else if len(out) == 8 {
				out = append(out, "…")
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, k := range targetKeys {
				if e, ok := v[k]; ok {
					walk(e)
				}
			}
		}
	}
	walk(args)
	return out
}

// shortID shortens a UUID to its first eight characters, as the Temporal UI shows ids, and any
// other long value to a readable length.
func shortID(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 36 && strings.Count(s, "-") == 4 {
		return s[:8] + "…"
	}
	if utf8.RuneCountInString(s) > 32 {
		return string([]rune(s)[:31]) + "…"
	}
	return s
}

// deviceSummary says which device does how much: "R1: 3 config lines", "PC1: 2 commands, 1
// blocked".
func deviceSummary(job domain.DeviceJob) string {
	kind := "command"
	if job.Config {
		kind = "config line"
	}
	s := fmt.Sprintf("%s: %s", deviceName(job), plural(len(job.Commands), kind))
	if len(job.Blocked) > 0 {
		s += fmt.Sprintf(", %d blocked", len(job.Blocked))
	}
	return s
}

func deviceName(job domain.DeviceJob) string {
	if job.Name != "" {
		return shortID(job.Name)
	}
	return shortID(job.NodeID)
}

// planDevices names a plan's devices, for the summaries of the activities that act on all of them.
func planDevices(plan domain.DevicePlan) string {
	names := make([]string, 0, len(plan.Jobs))
	for i, j := range plan.Jobs {
		if i == 8 {
			names = append(names, "…")
			break
		}
		names = append(names, deviceName(j))
	}
	return fmt.Sprintf("%s (%s)", plural(len(plan.Jobs), "device"), strings.Join(names, ", "))
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
