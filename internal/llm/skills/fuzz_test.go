package skills

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/capture"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fuzzcheck"
)

// Bounds of one fuzz input: a directory of a few files loads in a millisecond; the memory is
// the files' own limits, well above what a fuzz input holds.
const (
	fuzzDeadline = 10 * time.Second
	fuzzMemory   = 64 << 20
	// fuzzMaxFiles keeps one input's directory small: the loader's own limit on files is
	// checked by the unit tests, not worth thousands of writes per input here.
	fuzzMaxFiles = 32
)

// A skills directory travels in a fuzz input as a txtar archive: "-- path --" lines, each
// followed by the file's text.
func packDir(f *testing.F, dir string) []byte {
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString("-- " + filepath.ToSlash(rel) + " --\n")
		b.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			b.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

func pack(files ...string) []byte {
	var b bytes.Buffer
	for i := 0; i+1 < len(files); i += 2 {
		b.WriteString("-- " + files[i] + " --\n" + files[i+1] + "\n")
	}
	return b.Bytes()
}

// unpack writes an archive's files under dir. Names that would leave dir, or that are not a
// plain relative path, are left out: the loader reads a directory someone checked out, not
// paths of the input's choosing.
func unpack(dir string, archive []byte) {
	var name string
	var text []byte
	files := 0
	flush := func() {
		if name == "" || files >= fuzzMaxFiles {
			return
		}
		clean := path.Clean(name)
		if clean == "." || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsAny(clean, "\x00\\:") {
			return
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return // a file where a folder was asked for: the input's own contradiction
		}
		if err := os.WriteFile(p, text, 0o644); err == nil {
			files++
		}
	}
	for _, line := range bytes.SplitAfter(archive, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\n")
		if n, ok := bytes.CutPrefix(trimmed, []byte("-- ")); ok {
			if n, ok := bytes.CutSuffix(n, []byte(" --")); ok {
				flush()
				name, text = string(n), nil
				continue
			}
		}
		text = append(text, line...)
	}
	flush()
}

// labPlatforms are the platforms of the lab FuzzSkills chooses scenarios for.
var labPlatforms = []string{"vpcs", "frr", "cisco_ios"}

// FuzzSkills loads a skills directory built from the input, in either layout: GNS3's (the
// testdata checkout: injection, device and packet-analysis YAML) or ours (prompts, recipes
// JSON, forbidden commands). Loading must not panic, hang or allocate without bound, whatever
// the YAML nests or aliases. A set that loads is usable: every prompt and device context reads
// within its bound, every scenario is found by its ID and chosen only for its platforms, the
// checks compile for the capture analysis, and the recipes survive their JSON round trip.
func FuzzSkills(f *testing.F) {
	f.Add(packDir(f, filepath.Join("testdata", "gns3-layout")))
	f.Add(pack("prompts/teaching_assistant.md", "You are the lab's patient tutor.", "title_prompt.md", "Title it in French.",
		"forbidden_commands.txt", "# lab rules\nshow running-config\n", "injection_recipes.json", recipes))
	f.Add(pack("injection_recipes.json", `[{"name": "no-verify", "platforms": ["amiga"], "commands": ["shutdown"]}]`,
		"prompts/troubleshooter.md", "x"))
	f.Add(pack("device/ios.yaml", "name: &n IOS\ndescription: an alias and nested mappings\ndevice_type: cisco_ios_telnet\nnotes: [*n, *n]\nconfig: {a: {b: {c: [1, {d: 2}]}}}"))
	f.Fuzz(func(t *testing.T, archive []byte) {
		dir := t.TempDir()
		unpack(dir, archive)
		var set *Set
		var err error
		var prompts []string
		var contexts map[string]string
		var chosen []Scenario
		var usable []capture.Check
		fuzzcheck.Bounded(t, fuzzDeadline, fuzzMemory+256*uint64(len(archive)), func() {
			if set, err = load(dir); err != nil {
				return
			}
			for _, m := range tools.Modes {
				prompts = append(prompts, set.SystemPrompt(m))
			}
			prompts = append(prompts, set.TitlePrompt())
			contexts = map[string]string{}
			for p := range set.Devices {
				contexts[p] = set.DeviceContext([]string{p})
			}
			chosen = set.Choose(Choice{Platforms: labPlatforms, Seed: "fuzz", Max: 5})
			usable, _ = capture.CompileChecks(set.Checks)
		})
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "%!") {
				t.Fatalf("a refusal that does not read: %q", msg)
			}
			return
		}
		for _, p := range prompts {
			if strings.TrimSpace(p) == "" {
				t.Fatal("an empty prompt")
			}
		}
		for p, ctx := range contexts {
			if ctx != set.Devices[p].Context {
				t.Fatalf("%s: DeviceContext is not the device's context", p)
			}
			// The bound of one platform's skill, and the line that says where it was cut.
			if len(ctx) > maxDeviceContext+len("… ( is cut here; the rest of its skill is not shown)\n")+len(set.Devices[p].DeviceType) {
				t.Fatalf("%s: a device context of %d bytes, beyond its bound of %d", p, len(ctx), maxDeviceContext)
			}
		}
		for _, sc := range set.Scenarios {
			if got, ok := set.Scenario(sc.ID); !ok || !reflect.DeepEqual(got, sc) {
				t.Fatalf("scenario %q is not found by its ID", sc.ID)
			}
		}
		for _, sc := range chosen {
			if !slices.ContainsFunc(sc.Platforms, func(p string) bool { return slices.Contains(labPlatforms, p) }) {
				t.Fatalf("chose %q, which runs on %v", sc.ID, sc.Platforms)
			}
		}
		if len(usable) != len(set.Checks) {
			t.Fatalf("%d checks loaded, %d of them usable by the capture analysis", len(set.Checks), len(usable))
		}
		if len(set.Recipes) > 0 {
			b, err := json.Marshal(set.Recipes)
			if err != nil {
				t.Fatal(err)
			}
			back := checkRecipes(string(b), func(string, string, ...any) {})
			if !reflect.DeepEqual(back, set.Recipes) {
				t.Fatalf("recipes round trip:\n%+v\n%+v", set.Recipes, back)
			}
		}
	})
}
