package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestWaitForIsPlannedPerDeviceAndForAll(t *testing.T) {
	l := newLab(t)
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", Status: "started", X: 300})
	plan := func(tool, args string) (DevicePlan, *Result) {
		t.Helper()
		raw, err := NormalizeArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		return PlanDevices(context.Background(), l.env, tool, raw, nil)
	}
	p, fail := plan(ShowCommandsTool, `{"wait_for": [{"command": "show ip", "expect": "10.0.0"}],
		"device_configs": [{"device_name": "PC1", "commands": ["show ip"], "wait_for": [{"command": "show arp", "expect": "/10\\.0\\.0\\.[0-9]+/", "count": 2, "timeout_seconds": 30}]},
		{"device_name": "PC2", "commands": ["show ip"]}]}`)
	if fail != nil {
		t.Fatal(fail.JSON())
	}
	all := domain.WaitCheck{Command: "show ip", Expect: "10.0.0", Count: 1, TimeoutSeconds: domain.DefaultWaitSeconds}
	own := domain.WaitCheck{Command: "show arp", Expect: `/10\.0\.0\.[0-9]+/`, Regexp: true, Count: 2, TimeoutSeconds: 30}
	if len(p.Jobs) != 2 || len(p.Jobs[0].Wait) != 2 || p.Jobs[0].Wait[0] != all || p.Jobs[0].Wait[1] != own || len(p.Jobs[1].Wait) != 1 || p.Jobs[1].Wait[0] != all {
		t.Fatalf("plan: %+v", p.Jobs)
	}
	// The device_names form keeps its wait_for.
	p, fail = plan(ShowCommandsTool, `{"device_names": ["PC1"], "commands": ["show ip"], "wait_for": [{"command": "show ip", "expect": "x", "count": 3}]}`)
	if fail != nil || len(p.Jobs) != 1 || len(p.Jobs[0].Wait) != 1 || p.Jobs[0].Wait[0].Count != 3 {
		t.Fatalf("device_names form: %+v %v", p, fail)
	}
	// So does the template form, for every rendered device.
	p, fail = plan(ShowCommandsTool, `{"template": "show {{.what}}", "devices": [{"device_name": "PC1", "vars": {"what": "ip"}}, {"device_name": "PC2", "vars": {"what": "arp"}}], "wait_for": [{"command": "show ip", "expect": "y", "count": 2}]}`)
	if fail != nil || len(p.Jobs) != 2 || len(p.Jobs[1].Wait) != 1 || p.Jobs[1].Wait[0].Count != 2 || p.Jobs[1].Commands[0] != "show arp" {
		t.Fatalf("template form: %+v %v", p, fail)
	}

	// Bad checks refuse the whole call, before anything runs.
	for args, want := range map[string]string{
		`{"wait_for": [{"command": "", "expect": "x"}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:                                "wait_for[0]: command is empty",
		`{"wait_for": [{"command": "show ip", "expect": " "}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:                         "expect is empty",
		`{"wait_for": [{"command": "show ip", "expect": "x", "count": 0}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:             "count must be at least 1 (got 0)",
		`{"wait_for": [{"command": "show ip", "expect": "x", "timeout_seconds": 301}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`: "timeout_seconds must be 1 to 300 (got 301)",
		`{"wait_for": [{"command": "show ip", "expect": "x", "timeout_seconds": 0}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:   "timeout_seconds must be 1 to 300 (got 0)",
		`{"device_configs": [{"device_name": "PC1", "commands": ["show ip"], "wait_for": [{"command": "show ip", "expect": "/(unclosed/"}]}]}`:               "wait_for of PC1[0]: expect /(unclosed/ is not a valid regular expression",
		`{"wait_for": [{"command": "configure terminal", "expect": "x"}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:              "enters configuration mode",
		`{"wait_for": [{"command": "debug all", "expect": "x"}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:                       "is not allowed",
		`{"wait_for": [{"command": "show ip", "expect": "x", "every": 3}], "device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`:             `unknown field "every"`,
	} {
		_, fail := plan(ShowCommandsTool, args)
		if fail == nil || !strings.Contains(fail.Error, want) {
			t.Errorf("%s: want a failure containing %q, got %+v", args, want, fail)
		}
	}
}

func TestWaitMatchesAndProgress(t *testing.T) {
	out := "Neighbor ID     Pri State           Dead Time Address\n2.2.2.2           1 Full/DR           3.2s 10.1.0.2\n3.3.3.3           1 Init/DROther      3.9s 10.1.0.3\n"
	sub := domain.WaitCheck{Expect: "full", Count: 2}
	re := domain.WaitCheck{Expect: `/\d+\.\d+\.\d+\.\d+ +1 +(Full|Init)/`, Regexp: true, Count: 2}
	if n := WaitMatches(sub, out); n != 1 {
		t.Errorf("substring matches %d", n)
	}
	if n := WaitMatches(re, out); n != 2 {
		t.Errorf("regexp matches %d", n)
	}
	if got := WaitProgress(domain.WaitCheck{Expect: "Full", Count: 2}, 1, 9.2); got != "1 of 2 Full, 9 s" {
		t.Errorf("progress %q", got)
	}
}
