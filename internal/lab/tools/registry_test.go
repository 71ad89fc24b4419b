package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": TeachingAssistant, "teaching_assistant": TeachingAssistant, " Lab_Automation_Assistant ": LabAutomation} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("god_mode"); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestNormalizeArgs(t *testing.T) {
	cases := map[string]string{
		``:                     `{}`,
		`null`:                 `{}`,
		`  {"a": 1}  `:         `{"a":1}`,
		`"{\"a\": 1}"`:         `{"a":1}`,
		`"\"{\\\"a\\\": 1}\""`: `{"a":1}`,
		`{"tool_input": "{\"node_ids\":[\"x\"]}"}`: `{"node_ids":["x"]}`,
		`{"tool_input": {"b": true}}`:              `{"b":true}`,
	}
	for in, want := range cases {
		got, err := NormalizeArgs(in)
		if err != nil || string(got) != want {
			t.Errorf("NormalizeArgs(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`[1,2]`, `{"a":`, `"not json"`, `42`, `{"a":1} {"b":2}`} {
		if _, err := NormalizeArgs(bad); err == nil {
			t.Errorf("NormalizeArgs(%s) accepted", bad)
		}
	}
}

type panicky struct{ spec }

func (panicky) Run(context.Context, Env, json.RawMessage) Result { panic("kaboom") }

func TestExecuteGuards(t *testing.T) {
	l := newLab(t)
	l.reg.Register(&panicky{spec{name: "explode", schema: `{"type":"object"}`, modes: bothModes}})

	mustFailWhole(t, l.run(t, "no_such_tool", map[string]any{}), `unknown tool "no_such_tool"`)
	if r := l.reg.Execute(context.Background(), l.env, "", "stop_gns3_node", `{"node_ids":["x"]}`); !strings.Contains(r.Error, "not available in teaching_assistant mode") {
		t.Fatalf("empty mode must mean teaching_assistant: %s", r.JSON())
	}
	r := l.run(t, "explode", map[string]any{})
	mustFailWhole(t, r, "internal error in tool explode: kaboom")

	// Device tools run through the device activities only; a call that reaches Execute is
	// answered, and no console is touched.
	for _, tl := range DeviceTools() {
		l.reg.Register(tl)
	}
	mustFailWhole(t, l.run(t, ShowCommandsTool, map[string]any{"device_configs": []any{}}), "through the device activities")

	mustFailWhole(t, l.run(t, "get_gns3_topology", `[1]`), "must be a JSON object")
	mustFailWhole(t, l.run(t, "get_gns3_topology", map[string]any{"verbose": true}), `unknown field "verbose"`)
	mustFailWhole(t, l.run(t, "get_gns3_topology", map[string]any{"project_id": "00000000-0000-0000-0000-000000000001"}), "this chat is bound to project")

	env := l.env
	env.GNS3 = nil
	r = l.reg.Execute(context.Background(), env, LabAutomation, "get_gns3_topology", "{}")
	mustFailWhole(t, r, "not connected to the GNS3 server")
}

func TestModeEnforcement(t *testing.T) {
	l := newLab(t)
	full := NewRegistry(LabTools()...)
	ta := map[string]bool{}
	for _, tool := range full.For(TeachingAssistant) {
		ta[tool.Name()] = true
	}
	la := map[string]bool{}
	for _, tool := range full.For(LabAutomation) {
		la[tool.Name()] = true
	}
	for _, tool := range full.All() {
		if !la[tool.Name()] {
			t.Errorf("%s is not offered in lab automation mode", tool.Name())
		}
		destructive := strings.HasPrefix(tool.Name(), "delete_") || strings.HasPrefix(tool.Name(), "stop_") ||
			strings.HasPrefix(tool.Name(), "suspend_") || strings.HasPrefix(tool.Name(), "reload_")
		if destructive && ta[tool.Name()] {
			t.Errorf("destructive %s offered in teaching mode", tool.Name())
		}
		if destructive {
			n := l.fake.AddNode(l.pid, fakegns3.NodeSpec{X: 1000 * len(l.fake.Nodes(l.pid))})
			r := l.runMode(t, TeachingAssistant, tool.Name(), map[string]any{"node_ids": []string{n.ID}})
			mustFailWhole(t, r, "not available in teaching_assistant mode")
		}
	}
	if len(l.fake.Nodes(l.pid)) == 0 || l.fake.Count("DELETE /v3/projects/{project_id}/nodes/{node_id}") != 0 {
		t.Fatal("a refused tool must not reach GNS3")
	}
}

func TestSchemas(t *testing.T) {
	for _, tool := range LabTools() {
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.Parameters(), &s); err != nil {
			t.Errorf("%s: schema is not JSON: %v", tool.Name(), err)
			continue
		}
		if s.Type != "object" || s.Properties == nil || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema must be a closed object: %s", tool.Name(), tool.Parameters())
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name(), r)
			}
		}
		if tool.Description() == "" || len(tool.Modes()) == 0 {
			t.Errorf("%s: no description or modes", tool.Name())
		}
	}
}

func TestSystemPrompts(t *testing.T) {
	names := map[string]bool{}
	for _, tool := range LabTools() {
		names[tool.Name()] = true
	}
	for _, m := range Modes {
		p := SystemPrompt(m)
		if len(p) < 500 {
			t.Fatalf("%s prompt too short", m)
		}
		// Every tool-like name in backquotes must be one of ours or a device tool.
		for _, part := range strings.Split(p, "`")[1:] {
			if strings.HasSuffix(part, "_node") || strings.HasSuffix(part, "_link") || strings.HasPrefix(part, "get_gns3") {
				if !names[part] {
					t.Errorf("%s prompt names unknown tool %q", m, part)
				}
			}
		}
	}
	if SystemPrompt("") != SystemPrompt(TeachingAssistant) {
		t.Error("default prompt")
	}
}

func TestResultJSON(t *testing.T) {
	r := Collect([]Item{ok("l1", "PC1 e0 <-> PC2 e0", "linked & up")})
	if s := r.JSON(); !strings.Contains(s, "PC1 e0 <-> PC2 e0") || !strings.Contains(s, "linked & up") || !strings.Contains(s, `"metadata":{}`) {
		t.Fatalf("JSON: %s", s)
	}
	empty, _ := json.Marshal(Result{})
	if !strings.Contains(string(empty), `"data":[]`) || !strings.Contains(string(empty), `"metadata":{}`) {
		t.Fatalf("zero result: %s", empty)
	}
	all := Collect([]Item{failed("a", "A", "x")})
	if all.Success || all.Error == "" {
		t.Fatalf("all failed: %+v", all)
	}
}

// Every tool's schema says each thing once: no two of its descriptions are the same text, so a
// model is not sent the same words twice in one tool (issue 49: the device tools described
// wait_for once per device and once for all devices, 1 KB each).
func TestSchemasSayEachThingOnce(t *testing.T) {
	for _, tool := range AllTools() {
		var schema any
		require.NoError(t, json.Unmarshal(tool.Parameters(), &schema), tool.Name())
		seen := map[string]string{}
		var walk func(path string, node any)
		walk = func(path string, node any) {
			switch n := node.(type) {
			case map[string]any:
				if d, ok := n["description"].(string); ok {
					if prev, dup := seen[d]; dup {
						t.Errorf("%s: %s says what %s says: %q", tool.Name(), path, prev, d)
					}
					seen[d] = path
				}
				for k, v := range n {
					walk(path+"."+k, v)
				}
			case []any:
				for i, v := range n {
					walk(fmt.Sprintf("%s[%d]", path, i), v)
				}
			}
		}
		walk(tool.Name(), schema)
	}
}
