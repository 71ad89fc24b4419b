package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestDeviceToolsAcceptTheSeedsDeviceNamesForm(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", Status: "started", X: 300})
	plan := func(args string) (DevicePlan, *Result) {
		raw, err := NormalizeArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		return PlanDevices(context.Background(), l.env, ShowCommandsTool, raw, nil)
	}
	byNames, fail := plan(`{"device_names": ["PC1", "PC2"], "commands": ["show ip", "show arp"]}`)
	if fail != nil {
		t.Fatalf("device_names form refused: %s", fail.JSON())
	}
	byConfigs, fail := plan(`{"device_configs": [{"device_name": "PC1", "commands": ["show ip", "show arp"]}, {"device_name": "PC2", "commands": ["show ip", "show arp"]}]}`)
	if fail != nil {
		t.Fatal(fail.JSON())
	}
	a, _ := json.Marshal(byNames)
	b, _ := json.Marshal(byConfigs)
	if string(a) != string(b) || len(byNames.Jobs) != 2 || fmt.Sprint(byNames.Jobs[1].Commands) != "[show ip show arp]" {
		t.Fatalf("the two forms plan differently:\n%s\n%s", a, b)
	}
	// As a JSON string inside tool_input too, as the reference's models send it.
	if p, fail := plan(`{"tool_input": "{\"device_names\": [\"PC2\"], \"commands\": [\"show ip\"]}"}`); fail != nil || len(p.Jobs) != 1 || p.Jobs[0].Name != "PC2" {
		t.Fatalf("wrapped: %+v %v", p, fail)
	}
	for args, want := range map[string]string{
		`{"device_names": ["PC1"]}`:                                                   "commands must list at least one command",
		`{"device_names": [], "commands": ["show ip"]}`:                               "device_names must list at least one device",
		`{"commands": ["show ip"]}`:                                                   "device_names must list at least one device",
		`{"device_names": ["PC1"], "commands": ["show ip"], "device_configs": []}`:    "not both",
		`{"device_names": ["PC1"], "commands": ["show ip"], "verbose": true}`:         `unknown field "verbose"`,
		`{"device_names": "PC1", "commands": ["show ip"]}`:                            `"device_names" must be an array`,
		`{"device_names": ["PC1"], "commands": ["show ip"], "project_id": "other-1"}`: "this chat is bound to project",
	} {
		_, fail := plan(args)
		if fail == nil || !strings.Contains(fail.Error, want) {
			t.Errorf("%s: want a failure containing %q, got %+v", args, want, fail)
		}
	}
}

func TestDevicePlanTellsFRRFromTemplateAndImage(t *testing.T) {
	l := newLab(t) // the fake is a v3.0.6 server, whose nodes carry no tags
	tpl := l.fake.AddFRRTemplate()
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: tpl, Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started", X: 300})
	args := json.RawMessage(`{"device_configs": [{"device_name": "R1", "commands": ["interface eth0", "ip address 10.1.0.1/24"]}]}`)
	l.fake.ResetCounts()
	plan, fail := PlanDevices(context.Background(), l.env, ConfigCommandsTool, args, nil)
	if fail != nil {
		t.Fatal(fail.JSON())
	}
	job := plan.Jobs[0]
	if job.Name != r1.Name || job.Platform != "frr" || job.Target.TemplateName != "FRR" || !strings.Contains(job.Target.Image, fakegns3.FRRImage) {
		t.Fatalf("%+v", job)
	}
	if n := l.fake.Count(fakegns3.OpListTemplates); n != 1 {
		t.Fatalf("templates read %d times for one plan", n)
	}
	// A tagged node (GNS3 3.1 tags VPCS nodes) needs no template lookup.
	l2 := newLab(t, fakegns3.WithVersion("3.1.0a2"))
	l2.fake.AddNode(l2.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	plan, fail = PlanDevices(context.Background(), l2.env, ShowCommandsTool, json.RawMessage(`{"device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`), nil)
	if fail != nil || plan.Jobs[0].Platform != "vpcs" {
		t.Fatalf("%+v %v", plan, fail)
	}
	if n := l2.fake.Count(fakegns3.OpListTemplates); n != 0 {
		t.Fatalf("templates read %d times for a tagged node", n)
	}
	// Untagged (v3.0.6) VPCS, whose node type decides, and a stopped router the plan refuses:
	// no template lookup either, so such calls make no GNS3 request with the live topology.
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: tpl, Name: "R9", Status: "stopped", X: 600})
	for _, args := range []string{`{"device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`,
		`{"device_configs": [{"device_name": "R9", "commands": ["show version"]}]}`} {
		l.fake.ResetCounts()
		_, _ = PlanDevices(context.Background(), l.env, ShowCommandsTool, json.RawMessage(args), nil)
		if n := l.fake.Count(fakegns3.OpListTemplates); n != 0 {
			t.Fatalf("%s: templates read %d times", args, n)
		}
	}
}

func TestATemplateIsRenderedPerDeviceIntoThePlan(t *testing.T) {
	l := newLab(t)
	for i, n := range []string{"PC1", "PC2", "PC3"} {
		l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: n, Status: "started", X: i * 200})
	}
	plan := func(args string) (DevicePlan, *Result) {
		raw, err := NormalizeArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		return PlanDevices(context.Background(), l.env, VPCSCommandsTool, raw, nil)
	}
	p, fail := plan(`{"template": "ip {{.ip}}/24 {{.gw}}\n\nset pcname {{.device_name}}-lab", "devices": [` +
		`{"device_name": "PC1", "vars": {"ip": "10.0.0.1", "gw": "10.0.0.254"}},` +
		`{"device_name": "PC2", "vars": {"ip": "10.0.0.2", "gw": "10.0.0.254"}},` +
		`{"device_name": "PC3", "vars": {"ip": "10.0.0.3", "gw": "10.0.0.254", "device_name": "pc-three"}}]}`)
	if fail != nil {
		t.Fatal(fail.JSON())
	}
	var got []string
	for _, j := range p.Jobs {
		got = append(got, j.Name+": "+strings.Join(j.Commands, " | "))
	}
	want := []string{
		"PC1: ip 10.0.0.1/24 10.0.0.254 | set pcname PC1-lab",
		"PC2: ip 10.0.0.2/24 10.0.0.254 | set pcname PC2-lab",
		"PC3: ip 10.0.0.3/24 10.0.0.254 | set pcname pc-three-lab",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(p.Failed) != 0 {
		t.Fatalf("rendered plan:\n%s\nwant\n%s\nfailed %v", strings.Join(got, "\n"), strings.Join(want, "\n"), p.Failed)
	}

	for args, want := range map[string]string{
		`{"template": "ip {{.ip}}/24 {{.gw}}", "devices": [{"device_name": "PC1", "vars": {"ip": "10.0.0.1", "gw": "g"}}, {"device_name": "PC2", "vars": {"ip": "10.0.0.2"}}]}`: "device PC2: the template uses {{.gw}}, which its vars do not set; nothing was applied to any device",
		`{"template": "ip {{.ip}", "devices": [{"device_name": "PC1"}]}`:                     "the template does not parse",
		`{"template": "  ", "devices": [{"device_name": "PC1"}]}`:                            "template must be a non-empty Go text/template",
		`{"template": "show ip"}`:                                                            "devices must list at least one",
		`{"devices": [{"device_name": "PC1"}]}`:                                              "template must be a non-empty",
		`{"template": "show ip", "devices": [{"device_name": ""}]}`:                          "devices[0]: device_name is empty",
		`{"template": "show ip", "devices": [{"device_name": "PC1", "extra": 1}]}`:           `unknown field "extra"`,
		`{"template": "show ip", "devices": [{"device_name": "PC1"}], "device_configs": []}`: "not both",
		`{"template": "{{range .n}}{{range $.n}}{{range $.n}}xxxxxxxxxxxxxxxx{{end}}{{end}}{{end}}", "devices": [{"device_name": "PC1", "vars": {"n": [` + strings.TrimSuffix(strings.Repeat("1,", 100), ",") + `]}}]}`: "longer than 256 KiB",
	} {
		_, fail := plan(args)
		if fail == nil || !strings.Contains(fail.Error, want) {
			t.Errorf("%.80s: want a failure containing %q, got %+v", args, want, fail)
		}
	}
}

func TestTheDeviceToolsAdvertiseTheTemplateForm(t *testing.T) {
	for _, tl := range newDeviceTools() { // the undo tool names a job, not commands
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.Parameters(), &s); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"device_configs", "template", "devices"} {
			if _, ok := s.Properties[k]; !ok {
				t.Errorf("%s: no %s in its schema", tl.Name(), k)
			}
		}
		if len(s.Required) != 0 {
			t.Errorf("%s: %v is required, though either form may be given", tl.Name(), s.Required)
		}
	}
}
