package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
)

// Bounds of one fuzz input: a call against the fake GNS3 takes milliseconds; the context ends
// the slow ones (a capture's duration, a start that polls) long before the deadline.
const (
	fuzzCallTimeout = 2 * time.Second
	fuzzDeadline    = 20 * time.Second
	fuzzMemory      = 128 << 20
)

// exampleArgs builds an arguments object from a tool's schema: every property with a value of
// its type, named after what the fuzz lab holds, so the seeds get past the decoding into each
// tool's own checks.
func exampleArgs(schema map[string]any) any {
	switch schema["type"] {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		out := map[string]any{}
		for name, p := range props {
			ps, _ := p.(map[string]any)
			out[name] = exampleValue(name, ps)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		return []any{exampleValue("", items)}
	}
	return exampleValue("", schema)
}

func exampleValue(name string, schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch schema["type"] {
	case "object", "array":
		return exampleArgs(schema)
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return true
	}
	switch {
	case strings.Contains(name, "command") || name == "template":
		return "show ip"
	case strings.Contains(name, "expect"):
		return "10.0.0"
	case strings.Contains(name, "node_b"):
		return "PC2"
	}
	return "PC1"
}

// fuzzLab is a fake GNS3 project with two started VPCS PCs joined by a link: enough for every
// tool's arguments to name something that exists.
func fuzzLab(t *testing.T) Env {
	fake := fakegns3.New(t)
	pid := fake.AddProject("fuzz")
	fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC2", Status: "started", X: 200})
	pcs := fake.Nodes(pid)
	fake.AddLink(pid, pcs[0].ID, 0, 0, pcs[1].ID, 0, 0)
	return Env{ProjectID: pid, GNS3: gns3.NewServer(fake.URL, time.Second).WithToken(fakegns3.AdminToken), Attempt: 1,
		RecordFault: func(context.Context, InjectedFault) error { return nil }}
}

// toolsUnderFuzz is every tool the copilot offers, in a stable order: a new tool is fuzzed
// without a change here, and one whose validation this file does not know fails the seeds.
func toolsUnderFuzz() []Tool {
	ts := AllTools()
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Name() < ts[j].Name() })
	return ts
}

// FuzzToolArgs sends any arguments to every tool of the registry, through the path the model's
// calls take: Registry.Execute for the tools that run as one call (and Registry.Check for
// those with a preview), PlanDevices for the console tools, DecodeUndoArgs for the undo. None
// may panic (Execute turns a panic into "internal error in tool", which fails here), hang or
// allocate without bound, and every result is the standard format in valid JSON. Normalising
// arguments is idempotent: what NormalizeArgs returns, it returns unchanged.
func FuzzToolArgs(f *testing.F) {
	ts := toolsUnderFuzz()
	for i, tool := range ts {
		var schema map[string]any
		if err := json.Unmarshal(tool.Parameters(), &schema); err != nil {
			f.Fatalf("%s: schema: %v", tool.Name(), err)
		}
		example, err := json.Marshal(exampleArgs(schema))
		if err != nil {
			f.Fatal(err)
		}
		doubled, _ := json.Marshal(string(example))
		for _, args := range []string{"", "{}", string(example), string(doubled), `{"tool_input": ` + string(example) + `}`} {
			f.Add(uint8(i), args)
		}
	}
	policy := devices.DefaultPolicy()
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		tool := ts[int(which)%len(ts)]
		name := tool.Name()
		if norm, err := NormalizeArgs(args); err == nil {
			again, err := NormalizeArgs(string(norm))
			if err != nil || string(again) != string(norm) {
				t.Fatalf("NormalizeArgs is not idempotent: %s, then %s (%v)", norm, again, err)
			}
		}
		env := fuzzLab(t)
		reg := NewRegistry(AllTools()...)
		var results []Result
		var unknown bool
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(args)), func() {
			ctx, cancel := context.WithTimeout(context.Background(), fuzzCallTimeout)
			defer cancel()
			switch tt := tool.(type) {
			case Runner:
				if _, previews := tt.(Previewer); previews {
					if c := reg.Check(ctx, env, name, args); c.Refusal != nil {
						results = append(results, *c.Refusal)
					}
				}
				results = append(results, reg.Execute(ctx, env, tool.Modes()[0], name, args))
			case *deviceTool:
				if raw, err := NormalizeArgs(args); err == nil {
					if _, fail := PlanDevices(ctx, env, name, raw, policy); fail != nil {
						results = append(results, *fail)
					}
				}
			case *undoTool:
				if raw, err := NormalizeArgs(args); err == nil {
					_, _ = DecodeUndoArgs(env, raw)
				}
			default:
				unknown = true
			}
		})
		if unknown {
			t.Fatalf("%s (%T) is neither run by the registry nor planned as a device or undo call: teach FuzzToolArgs its validation", name, tool)
		}
		for _, r := range results {
			if strings.Contains(r.Error, "internal error in tool") {
				t.Fatalf("%s panicked on %q: %s", name, args, r.Error)
			}
			var back map[string]any
			if err := json.Unmarshal([]byte(r.JSON()), &back); err != nil {
				t.Fatalf("%s: result is not JSON: %v", name, err)
			}
			for _, k := range []string{"success", "total", "successful", "failed", "data", "metadata"} {
				if _, ok := back[k]; !ok {
					t.Fatalf("%s: result without %q: %s", name, k, r.JSON())
				}
			}
		}
	})
}

// Outputs of real consoles a wait_for reads: FRR's OSPF neighbours coming up, VPCS's address.
var waitOutputs = []string{
	"Neighbor ID     Pri State           Up Time         Dead Time Address         Interface                        RXmtL RqstL DBsmL\n" +
		"2.2.2.2           1 Full/DR         1m02s             3.456s 10.1.0.2        eth0:10.1.0.1                        0     0     0\n" +
		"3.3.3.3           1 Init/DROther    0.512s           39.488s 10.1.1.3        eth1:10.1.1.1                        0     0     0",
	"NAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254\nDNS         : \nMAC         : 00:50:79:66:68:00\n" +
		"LPORT       : 20000\nRHOST:PORT  : 127.0.0.1:20001\nMTU         : 1500",
}

// FuzzWaitFor checks wait_for entries as a call's arguments give them and counts their
// matches in console output. Checking must not panic or accept what cannot be evaluated: an
// accepted expect /…/ compiles. Counting must not panic or hang, stays within what the output
// can hold, and finds a text expect in an output that ends with it. The check survives the JSON
// of the device plan (workflow histories carry it) with the same matches.
func FuzzWaitFor(f *testing.F) {
	for _, out := range waitOutputs {
		f.Add("show ip ospf neighbor", "Full", int64(2), int64(30), out)
		f.Add("show ip ospf neighbor", "/Full/(DR|BDR|DROther)/", int64(1), int64(0), out)
		f.Add("show ip", `/10\.0\.0\.[0-9]+/`, int64(0), int64(301), out)
		f.Add("configure terminal", "x", int64(1), int64(1), out)
		f.Add("show ip", "/(unclosed/", int64(1), int64(1), out)
	}
	policy := devices.DefaultPolicy()
	f.Fuzz(func(t *testing.T, command, expect string, count, timeout int64, output string) {
		// The entry reaches waitCheck decoded from the call's JSON, as in a real call (which is
		// also where invalid UTF-8 becomes U+FFFD, before anything checks the command).
		entry := map[string]any{"command": command, "expect": expect}
		if count != 0 {
			entry["count"] = count
		}
		if timeout != 0 {
			entry["timeout_seconds"] = timeout
		}
		raw, _ := json.Marshal(entry)
		var arg waitForArg
		if err := decodeArgs(raw, &arg); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var c, back domain.WaitCheck
		var err, jerr error
		var matches, matchesBack, withExpect int
		var progress string
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(output)+len(expect)), func() {
			if c, err = waitCheck(arg, policy); err != nil {
				return
			}
			matches = WaitMatches(c, output)
			progress = WaitProgress(c, matches, 12)
			var b []byte
			if b, jerr = json.Marshal(c); jerr == nil {
				jerr = json.Unmarshal(b, &back)
				matchesBack = WaitMatches(back, output)
			}
			if !c.Regexp {
				withExpect = WaitMatches(c, output+"\n"+c.Expect)
			}
		})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		if c.Count < 1 || c.TimeoutSeconds < 1 || c.TimeoutSeconds > domain.MaxWaitSeconds {
			t.Fatalf("accepted out of bounds: %+v", c)
		}
		if slashed := len(c.Expect) >= 3 && strings.HasPrefix(c.Expect, "/") && strings.HasSuffix(c.Expect, "/"); c.Regexp != slashed {
			t.Fatalf("expect %q read as regexp=%v", c.Expect, c.Regexp)
		}
		if matches < 0 || matches > len(output)+1 {
			t.Fatalf("%d matches in %d bytes", matches, len(output))
		}
		if jerr != nil || !reflect.DeepEqual(back, c) || matchesBack != matches {
			t.Fatalf("JSON round trip: %+v became %+v (%v), %d matches became %d", c, back, jerr, matches, matchesBack)
		}
		if !c.Regexp && withExpect < 1 {
			t.Fatalf("text expect %q not found in an output that ends with it", c.Expect)
		}
		if progress == "" || !strings.Contains(progress, fmt.Sprintf("of %d", c.Count)) {
			t.Fatalf("progress %q", progress)
		}
	})
}
