package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Registry is the set of tools the copilot knows, in a stable order.
type Registry struct {
	order  []Tool
	byName map[string]Tool
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		r.Register(t)
	}
	return r
}

// Register adds t, replacing a tool of the same name in place.
func (r *Registry) Register(t Tool) {
	if _, dup := r.byName[t.Name()]; dup {
		for i, x := range r.order {
			if x.Name() == t.Name() {
				r.order[i] = t
			}
		}
	} else {
		r.order = append(r.order, t)
	}
	r.byName[t.Name()] = t
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// All returns every registered tool in registration order.
func (r *Registry) All() []Tool { return append([]Tool(nil), r.order...) }

// For returns the tools offered to the model in mode, in registration order.
func (r *Registry) For(mode Mode) []Tool {
	if m, err := ParseMode(string(mode)); err == nil {
		mode = m
	}
	var out []Tool
	for _, t := range r.order {
		if slices.Contains(t.Modes(), mode) {
			out = append(out, t)
		}
	}
	return out
}

func (r *Registry) names(mode Mode) string {
	var ns []string
	for _, t := range r.For(mode) {
		ns = append(ns, t.Name())
	}
	return strings.Join(ns, ", ")
}

// Execute runs one tool call from the model. It never panics and always
// returns a Result with metadata {tool_name, version,
// execution_time}: unknown tools, tools outside mode and malformed
// arguments come back as failed Results the model can read and correct.
func (r *Registry) Execute(ctx context.Context, env Env, mode Mode, name, rawArgs string) (res Result) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			// The stack goes to the worker log; the model only learns that it failed.
			slog.Error("tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
			res = Failure("internal error in tool %s: %v", name, p)
		}
		res.stamp(name, start)
	}()

	if m, err := ParseMode(string(mode)); err == nil {
		mode = m
	}
	env.Mode = mode
	t, found := r.Lookup(name)
	if !found {
		return Failure("unknown tool %q; the tools available in %s mode are: %s", name, mode, r.names(mode))
	}
	if !slices.Contains(t.Modes(), mode) {
		need := make([]string, 0, 2)
		for _, m := range t.Modes() {
			need = append(need, string(m))
		}
		return Failure("tool %s is not available in %s mode (it needs %s mode); tell the user what to do instead or ask them to switch modes",
			name, mode, strings.Join(need, " or "))
	}
	args, err := NormalizeArgs(rawArgs)
	if err != nil {
		return Failure("invalid arguments for %s: %v", name, err)
	}
	if env.GNS3 == nil {
		return Failure("not connected to the GNS3 server (no credentials for this turn)")
	}
	if env.ProjectID == "" {
		return Failure("no GNS3 project is bound to this chat")
	}
	if env.Attempt < 1 {
		env.Attempt = 1
	}
	run, ok := t.(Runner)
	if !ok {
		return Failure("%s runs on device consoles through the device activities, one per device; it cannot run as one call", name)
	}
	return run.Run(ctx, env, args)
}

// stamp gives a result the metadata every tool result carries.
func (res *Result) stamp(name string, start time.Time) {
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	if res.Data == nil {
		res.Data = []Item{}
	}
	res.Metadata["tool_name"] = name
	res.Metadata["version"] = FormatVersion
	res.Metadata["execution_time"] = math.Round(time.Since(start).Seconds()*1000) / 1000
}

// Check is a destructive call resolved against the lab as it is now, before anyone is asked
// about it.
type Check struct {
	// Summary says in a sentence what the call would do, or why it cannot, for the approval's
	// plan; "" when the tool has no preview.
	Summary string
	// Refusal is set when the call cannot run as asked (arguments it refuses, a closed
	// project, an unknown snapshot, node or link): the failed result the call ends with, which
	// names what exists. Nobody is asked to approve what cannot happen.
	Refusal *Result
}

// Check resolves a call of a tool with a preview (see Previewer) without running it. A lab that
// could not be read (GNS3 unreachable or failing) refuses nothing: then the summary says the
// call could not be checked, and the call goes on to its approval, as it would have before
// there was a check.
func (r *Registry) Check(ctx context.Context, env Env, name, rawArgs string) Check {
	start := time.Now()
	t, found := r.Lookup(name)
	pv, previews := t.(Previewer)
	if !found || !previews || env.GNS3 == nil {
		return Check{}
	}
	var what string
	args, err := NormalizeArgs(rawArgs)
	if err != nil {
		err = fmt.Errorf("invalid arguments for %s: %v", name, err)
	} else {
		what, err = pv.Preview(ctx, env, args)
	}
	if err == nil {
		return Check{Summary: what}
	}
	if what == "" {
		what = name
	}
	if ctx.Err() != nil || gns3.Retryable(err) {
		return Check{Summary: what + ": the lab could not be read to check it (" + err.Error() + ")"}
	}
	res := Failure("%s was not run, so nothing changed: %v", name, err)
	res.stamp(name, start)
	return Check{Summary: what + ": it cannot run as asked, " + err.Error() + "; rejecting it changes nothing", Refusal: &res}
}

// NormalizeArgs turns what models send as tool arguments into one JSON
// object: an object as is, a JSON string that holds an object (models
// double-encode), empty or null as {}, and the reference implementation's
// {"tool_input": ...} wrapper unwrapped.
func NormalizeArgs(raw string) (json.RawMessage, error) {
	s := strings.TrimSpace(raw)
	for depth := 0; depth < 3; depth++ {
		if s == "" || s == "null" || s == `""` {
			return json.RawMessage(`{}`), nil
		}
		if strings.HasPrefix(s, `"`) {
			var inner string
			if err := json.Unmarshal([]byte(s), &inner); err != nil {
				return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
			}
			s = strings.TrimSpace(inner)
			continue
		}
		if !strings.HasPrefix(s, "{") {
			return nil, errors.New("arguments must be a JSON object, e.g. {\"node_ids\": [\"PC1\"]}")
		}
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		if dec.More() {
			return nil, errors.New("arguments hold more than one JSON value")
		}
		if inner, ok := obj["tool_input"]; ok && len(obj) == 1 {
			s = strings.TrimSpace(string(inner))
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		return buf.Bytes(), nil
	}
	return nil, errors.New("arguments are nested too deeply in JSON strings")
}
