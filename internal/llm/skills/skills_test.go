package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

func write(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const recipes = `[{"name": "wrong-mask", "description": "PC gets a /30 instead of a /24", "platforms": ["vpcs"],
  "commands": ["ip 10.0.0.1/30 10.0.0.254"], "verify": {"command": "show ip", "expect": "10.0.0.1/24"}}]`

func TestBuiltInsWithoutADirectory(t *testing.T) {
	s, err := Open("", nil)
	if err != nil {
		t.Fatal(err)
	}
	set := s.Current()
	if set.Source != "built-in" || set.SystemPrompt(tools.LabAutomation) != tools.SystemPrompt(tools.LabAutomation) || set.TitlePrompt() != BuiltinTitlePrompt {
		t.Fatalf("built-in set: %+v", set)
	}
	if ok, _ := s.Policy().Check("debug all"); ok {
		t.Error("the built-in forbidden list must apply")
	}
	if _, err := s.Reload(); !errors.Is(err, ErrNoDir) {
		t.Errorf("reload without a directory: %v", err)
	}
	var nilStore *Store
	if nilStore.Current().SystemPrompt(tools.TeachingAssistant) != tools.SystemPrompt(tools.TeachingAssistant) {
		t.Error("a nil store means the built-in skills")
	}
}

func TestDirectoryOverridesAndABrokenReloadKeepsThePreviousSkills(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "prompts/teaching_assistant.md", "You are the lab's patient tutor.")
	write(t, dir, "title_prompt.md", "Title it in French.\n")
	write(t, dir, "forbidden_commands.txt", "# lab rules\nshow running-config\n\n")
	write(t, dir, "injection_recipes.json", recipes)
	base, err := devices.LoadPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, base.Extend([]string{"write memory"}))
	if err != nil {
		t.Fatal(err)
	}
	set := s.Current()
	if set.SystemPrompt(tools.TeachingAssistant) != "You are the lab's patient tutor." ||
		set.SystemPrompt(tools.LabAutomation) != tools.SystemPrompt(tools.LabAutomation) || set.TitlePrompt() != "Title it in French." {
		t.Fatalf("overrides: %+v", set)
	}
	if len(set.Recipes) != 1 || set.Recipes[0].Verify.Expect != "10.0.0.1/24" || strings.Join(set.Files, ",") != "forbidden_commands.txt,injection_recipes.json,prompts/teaching_assistant.md,title_prompt.md" {
		t.Fatalf("recipes/files: %+v %v", set.Recipes, set.Files)
	}
	policy := s.Policy()
	for cmd, allowed := range map[string]bool{"show running-config": false, "write memory": false, "debug all": false, "show ip route": true} {
		if ok, _ := policy.Check(cmd); ok != allowed {
			t.Errorf("%q allowed=%v, want %v", cmd, ok, allowed)
		}
	}

	// Break three files at once: every problem is reported, nothing changes.
	write(t, dir, "prompts/teaching_assistant.md", "   \n")
	write(t, dir, "prompts/troubleshooter.md", "x")
	write(t, dir, "injection_recipes.json", `[{"name": "no-verify", "platforms": ["amiga"], "commands": ["shutdown"]}]`)
	write(t, dir, "forbidden_commands.txt", "show running-config\nshow version\n")
	_, err = s.Reload()
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != 4 {
		t.Fatalf("broken reload: %v", err)
	}
	for _, want := range []string{"prompts/teaching_assistant.md: is empty", "prompts/troubleshooter.md: is not a prompt of a mode",
		`unknown platform "amiga"`, "needs verify.command and verify.expect"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if s.Current() != set {
		t.Fatal("a refused reload replaced the active skills")
	}
	if ok, _ := policy.Check("show version"); !ok {
		t.Error("a refused reload changed the forbidden commands")
	}

	// Fixed: the new set replaces the old one as a whole, the policy in place.
	os.Remove(filepath.Join(dir, "prompts/troubleshooter.md"))
	os.Remove(filepath.Join(dir, "prompts/teaching_assistant.md"))
	write(t, dir, "injection_recipes.json", recipes)
	next, err := s.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if s.Current() != next || next.SystemPrompt(tools.TeachingAssistant) != tools.SystemPrompt(tools.TeachingAssistant) {
		t.Fatal("reload did not take")
	}
	for cmd, allowed := range map[string]bool{"show running-config": false, "show version": false, "write memory": false, "show ip route": true} {
		if ok, _ := policy.Check(cmd); ok != allowed {
			t.Errorf("after reload %q allowed=%v, want %v", cmd, ok, allowed)
		}
	}
}

func TestABrokenDirectoryIsRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "title_prompt.md", string([]byte{0xff, 0xfe, 'x'}))
	if _, err := Open(dir, nil); err == nil || !strings.Contains(err.Error(), "title_prompt.md: is not UTF-8 text") {
		t.Fatalf("broken dir: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing"), nil); err == nil {
		t.Fatal("a missing directory must be refused")
	}
}
