package skills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

// gns3Fixture copies testdata/gns3-layout (small files written in the layout of GNS3's
// skills repository) into a directory the test may change.
func gns3Fixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "gns3-layout")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestGNS3LayoutLoads(t *testing.T) {
	s, err := Open(gns3Fixture(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := s.Current()
	if set.Layout != LayoutGNS3 {
		t.Fatalf("layout %q", set.Layout)
	}
	if set.SystemPrompt(tools.TeachingAssistant) != "You are the course's tutor. Ask before you tell.\n" ||
		set.TitlePrompt() != "Name the conversation in at most five words." {
		t.Errorf("prompts: %q / %q", set.SystemPrompt(tools.TeachingAssistant), set.TitlePrompt())
	}
	if ok, _ := s.Policy().Check("clear ip ospf process"); ok {
		t.Error("config/forbidden_commands.txt must apply")
	}

	ids := make([]string, len(set.Scenarios))
	for i, sc := range set.Scenarios {
		ids[i] = sc.ID
	}
	if strings.Join(ids, " ") != "host_faults/wrong_gateway routing_faults/summary_on_ios routing_faults/timers_differ routing_faults/wrong_area" {
		t.Fatalf("scenarios: %v", ids)
	}
	if got := set.ByDifficulty(); got["beginner"] != 2 || got["intermediate"] != 1 || got["advanced"] != 1 || got["unspecified"] != 0 {
		t.Errorf("by difficulty: %v", got)
	}
	timers, _ := set.Scenario("routing_faults/timers_differ")
	if timers.Severity != "high" || len(timers.Hints) != 3 || timers.Hints[0] != "Compare the two routers' OSPF interface settings" ||
		!slices.Contains(timers.Platforms, "frr") || !slices.Contains(timers.Platforms, "cisco_ios") || slices.Contains(timers.Platforms, "vpcs") {
		t.Errorf("timers_differ: %+v", timers)
	}
	area, _ := set.Scenario("routing_faults/wrong_area")
	if len(area.Hints) != 1 || !slices.Contains(area.Platforms, "frr") {
		t.Errorf("wrong_area takes the file's protocols and its troubleshooting_hint: %+v", area)
	}
	ios, _ := set.Scenario("routing_faults/summary_on_ios")
	if !slices.Equal(ios.Platforms, []string{"cisco_ios"}) {
		t.Errorf("a scenario's own platforms: %v", ios.Platforms)
	}
	gw, _ := set.Scenario("host_faults/wrong_gateway")
	if !slices.Contains(gw.Platforms, "vpcs") || !slices.Contains(gw.Platforms, "frr") {
		t.Errorf("an addressing fault fits hosts and routers: %v", gw.Platforms)
	}

	frr := set.DeviceContext([]string{"frr"})
	for _, want := range []string{"### FRR (course notes) (frr_vtysh)", "The console lands in vtysh", "#### Topic ospf: OSPF on FRR", "syntax: show ip ospf neighbor"} {
		if !strings.Contains(frr, want) {
			t.Errorf("FRR context lacks %q:\n%s", want, frr)
		}
	}
	if set.DeviceContext([]string{"vyos"}) != "" || !strings.Contains(set.DeviceContext([]string{"vpcs", "frr"}), "VPCS is not a router") {
		t.Error("device context goes by platform")
	}
	if !slices.Equal(set.Unmatched, []string{"nokia_srlinux_cli"}) || len(set.Devices) != 2 {
		t.Errorf("devices %v, unmatched %v", set.Devices, set.Unmatched)
	}
	if len(set.Checks) != 1 || set.Checks[0].Name != "slow_hellos" || set.Checks[0].Source != "packet_analysis/ospf.yaml" || set.SkippedChecks != 2 {
		t.Errorf("checks %+v, skipped %d", set.Checks, set.SkippedChecks)
	}
}

func TestScenarioChoiceByPlatformDifficultyAndHistory(t *testing.T) {
	s, err := Open(gns3Fixture(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := s.Current()
	ids := func(c Choice) []string {
		var out []string
		for _, sc := range set.Choose(c) {
			out = append(out, sc.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(Choice{Platforms: []string{"vpcs"}}); !slices.Equal(got, []string{"host_faults/wrong_gateway"}) {
		t.Errorf("a VPCS-only lab: %v", got)
	}
	if got := ids(Choice{Platforms: []string{"frr", "vpcs"}, Difficulty: "beginner"}); !slices.Equal(got, []string{"host_faults/wrong_gateway", "routing_faults/timers_differ"}) {
		t.Errorf("beginner on FRR: %v", got)
	}
	if got := ids(Choice{Platforms: []string{"frr"}, Difficulty: "beginner", Had: []string{"routing_faults/timers_differ"}}); !slices.Equal(got, []string{"host_faults/wrong_gateway"}) {
		t.Errorf("never one the student had: %v", got)
	}
	if got := ids(Choice{Platforms: []string{"frr"}, Difficulty: "advanced"}); len(got) != 0 {
		t.Errorf("the advanced fault is for IOS only: %v", got)
	}
	a := set.Choose(Choice{Platforms: []string{"frr", "cisco_ios"}, Seed: "turn-1"})
	b := set.Choose(Choice{Platforms: []string{"frr", "cisco_ios"}, Seed: "turn-1"})
	if len(a) != 4 || !slices.EqualFunc(a, b, func(x, y Scenario) bool { return x.ID == y.ID }) {
		t.Errorf("the same turn is offered the same order: %v / %v", a, b)
	}
	if one := set.Choose(Choice{Platforms: []string{"cisco_ios"}, Max: 1}); len(one) != 1 {
		t.Errorf("max: %v", one)
	}
	for msg, want := range map[string]string{"Inject 1 network fault(s) for troubleshooting practice": "", "an easy one please": "beginner",
		"Inject an ADVANCED fault": "advanced", "medium difficulty": "intermediate", "easy or hard, you choose": ""} {
		if got := RequestedDifficulty(msg); got != want {
			t.Errorf("%q: difficulty %q, want %q", msg, got, want)
		}
	}
}

// A broken file is named with its line; the active set stays until the directory loads, and
// then the new set replaces it whole.
func TestGNS3LayoutBrokenReloadKeepsThePreviousSet(t *testing.T) {
	dir := gns3Fixture(t)
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Current()
	write(t, dir, "injection/routing_faults.yaml", "name: x\ndescription: y\nissues:\n  a:\n    name: [unclosed\n")
	write(t, dir, "injection/host_faults.yaml", "name: Host faults\ndescription: d\nissues:\n  no_description:\n    name: N\n    difficulty: expert\n")
	write(t, dir, "device/frr/ospf.yaml", "device_type: frr_vtysh\nname: OSPF\ncategory: device\n")
	write(t, dir, "packet_analysis/ospf.yaml", "name: OSPF\nprotocol_key: ospf\nchecks:\n- severity: major\n")
	_, err = s.Reload()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("broken reload: %v", err)
	}
	for _, want := range []string{
		"injection/routing_faults.yaml: does not parse as YAML: line 5:",
		"injection/host_faults.yaml: line 4: issue no_description has no description",
		"injection/host_faults.yaml: line 6: issue no_description: difficulty must be one of beginner, intermediate, advanced",
		"device/frr/ospf.yaml: line 3: a topic file must not define category",
		"device/frr/ospf.yaml: line 1: the file has no topic",
		"packet_analysis/ospf.yaml: line 4: a check has no name",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if s.Current() != before {
		t.Fatal("a refused reload replaced the active skills")
	}

	// Fixed, and one scenario more: the reload swaps the whole set in.
	fixed := gns3Fixture(t)
	for _, rel := range []string{"injection/routing_faults.yaml", "device/frr/ospf.yaml", "packet_analysis/ospf.yaml"} {
		b, _ := os.ReadFile(filepath.Join(fixed, rel))
		write(t, dir, rel, string(b))
	}
	write(t, dir, "injection/host_faults.yaml", "name: Host faults\ndescription: d\nissues:\n  wrong_mask:\n    name: Wrong mask\n    description: A /30 instead of a /24\n    difficulty: beginner\n    protocols: [ip]\n")
	next, err := s.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if s.Current() != next || next == before {
		t.Fatal("the reload did not swap")
	}
	if _, ok := next.Scenario("host_faults/wrong_mask"); !ok || len(next.Scenarios) != 4 {
		t.Errorf("scenarios after the reload: %+v", next.Scenarios)
	}
	if _, ok := next.Scenario("host_faults/wrong_gateway"); ok {
		t.Error("the old set's scenario is still there")
	}
}

// A directory in this copilot's own layout is read as before: the injection/ folder is what
// tells GNS3's layout.
func TestOwnLayoutIsNotTakenForGNS3s(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "injection_recipes.json", recipes)
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Current().Layout != LayoutCopilot || len(s.Current().Recipes) != 1 {
		t.Fatalf("own layout: %+v", s.Current())
	}
	b, _ := Open("", nil)
	if b.Current().Layout != LayoutBuiltIn {
		t.Errorf("built-in layout: %q", b.Current().Layout)
	}
}
