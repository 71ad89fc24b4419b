// Package skills holds what an operator may change about the copilot without rebuilding it:
// the system prompt of each mode, the title prompt, extra forbidden device commands, the
// faults an injection turn may choose, what the model should know of each platform, and
// protocol checks for the capture analysis. The built-in ones are the default; a skills
// directory overrides them file by file. A reload checks every file first and swaps the whole
// set at once, or refuses and keeps the set that was active.
//
// A directory has one of two layouts, told apart by its folders. This copilot's own:
//
//	prompts/<mode>.md          system prompt of a mode (teaching_assistant, lab_automation_assistant, …)
//	title_prompt.md            how a session's title is asked for
//	forbidden_commands.txt     one pattern a line, "#" comments; added to the built-in list
//	injection_recipes.json     faults an exercise may inject (see Recipe)
//
// or that of GNS3's skills repository (gns3-skills), recognised by an injection/, device/ or
// packet_analysis/ folder:
//
//	prompts/<mode>.md, prompts/title.md
//	config/forbidden_commands.txt
//	injection/*.yaml           fault scenarios (see Scenario)
//	device/*.yaml, device/<name>/{_base,<topic>}.yaml   what to know of a device type (see DeviceSkill)
//	packet_analysis/*.yaml     protocol checks in tshark's field names (see capture.Check)
package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/capture"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

// BuiltinTitlePrompt asks for a session's title when no skills directory replaces it.
const BuiltinTitlePrompt = `Write a short title (at most 6 words) for this conversation between a GNS3 lab user and their copilot. ` +
	`Answer with the title only: no quotes, no punctuation at the end.`

// Limits on skill files, so a mistaken path (a log file, an image) is refused, not fed to a model.
const (
	maxPromptBytes  = 64 << 10
	maxPatternBytes = 200
	maxRecipes      = 200
	maxRecipeBytes  = 1 << 20
)

// Recipe is one fault an exercise may inject: the commands that break the lab on the given
// platforms, and how to tell it is fixed (a show command and what its output must contain).
type Recipe struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Platforms   []string `json:"platforms"`
	Commands    []string `json:"commands"`
	Verify      struct {
		Command string `json:"command"`
		Expect  string `json:"expect"`
	} `json:"verify"`
}

// Layouts a skills directory may have.
const (
	LayoutBuiltIn = "built-in"
	// LayoutCopilot is this copilot's own: prompts/, title_prompt.md, forbidden_commands.txt,
	// injection_recipes.json.
	LayoutCopilot = "copilot"
	// LayoutGNS3 is GNS3's skills repository's (gns3-skills): injection/, device/,
	// packet_analysis/, prompts/ (with title.md) and config/forbidden_commands.txt.
	LayoutGNS3 = "gns3-skills"
)

// Set is one complete, checked set of skills.
type Set struct {
	// Source is "built-in" or the directory the set was read from.
	Source string
	// Layout is the directory's layout (LayoutCopilot, LayoutGNS3), or LayoutBuiltIn.
	Layout    string
	prompts   map[tools.Mode]string // only the modes the directory overrides
	title     string
	Forbidden []string // the directory's extra forbidden patterns
	Recipes   []Recipe
	// Scenarios are the faults of a GNS3 layout's injection files.
	Scenarios []Scenario
	// Devices are a GNS3 layout's device skills, by the platform (console profile) they
	// describe; Unmatched lists the device types no platform of ours runs.
	Devices   map[string]DeviceSkill
	Unmatched []string
	// Checks are the packet-analysis files' checks the capture analysis can evaluate;
	// SkippedChecks counts the others (fields it does not decode, no condition).
	Checks        []capture.Check
	SkippedChecks int
	// Files lists the files read from the directory, relative to it.
	Files []string
}

// SystemPrompt is the prompt of a mode: the directory's when it has one, else the built-in.
func (s *Set) SystemPrompt(mode tools.Mode) string {
	if s != nil {
		if m, err := tools.ParseMode(string(mode)); err == nil {
			if p, ok := s.prompts[m]; ok {
				return p
			}
		}
	}
	return tools.SystemPrompt(mode)
}

// TitlePrompt is the directory's title prompt, else the built-in.
func (s *Set) TitlePrompt() string {
	if s != nil && s.title != "" {
		return s.title
	}
	return BuiltinTitlePrompt
}

// Overridden lists the modes whose prompt comes from the directory.
func (s *Set) Overridden() []string {
	var out []string
	for m := range s.prompts {
		out = append(out, string(m))
	}
	sort.Strings(out)
	return out
}

// Store holds the active set. It is safe for concurrent use.
type Store struct {
	dir  string
	base *devices.Policy // built-in plus --forbidden-commands; never changed
	live *devices.Policy // what the device runs read; swapped on reload
	cur  atomic.Pointer[Set]
	mu   sync.Mutex // one reload at a time
}

// Open loads the skills of dir ("" means the built-in ones only) on top of the device policy
// base. A broken directory is an error: the copilot should not start with skills it cannot read.
func Open(dir string, base *devices.Policy) (*Store, error) {
	if base == nil {
		base = devices.DefaultPolicy()
	}
	s := &Store{dir: dir, base: base, live: base.Extend(nil)}
	if _, err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir is the skills directory ("" when only the built-in skills are used).
func (s *Store) Dir() string { return s.dir }

// Current is the active set.
func (s *Store) Current() *Set {
	if s == nil {
		return &Set{Source: "built-in", Layout: LayoutBuiltIn}
	}
	return s.cur.Load()
}

// Policy is the device policy to hand to device runs: built-in and operator patterns plus the
// active skills' ones, updated in place by every successful reload.
func (s *Store) Policy() *devices.Policy { return s.live }

// ErrNoDir is returned by Reload when no skills directory is configured.
var ErrNoDir = errors.New("no skills directory is configured (--skills-dir); the built-in skills are in use")

// Reload reads the directory again. On any problem it returns the problems and the active set
// stays as it was.
func (s *Store) Reload() (*Set, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := &Set{Source: "built-in", Layout: LayoutBuiltIn}
	if s.dir != "" {
		var err error
		if set, err = load(s.dir); err != nil {
			return nil, err
		}
	} else if s.cur.Load() != nil {
		return nil, ErrNoDir
	}
	s.live.Replace(s.base.Extend(set.Forbidden))
	s.cur.Store(set)
	return set, nil
}

// load reads and checks a skills directory in either layout, collecting every problem rather
// than the first.
func load(dir string) (*Set, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	l := &loader{dir: dir, set: &Set{Source: dir, Layout: LayoutCopilot, prompts: map[tools.Mode]string{}}}
	if isGNS3Layout(dir) {
		l.set.Layout = LayoutGNS3
		l.loadGNS3()
	} else {
		l.prompts("")
		l.titlePrompt("title_prompt.md")
		l.forbidden("forbidden_commands.txt")
		if text, ok := l.read("injection_recipes.json", maxRecipeBytes); ok {
			l.set.Recipes = checkRecipes(text, l.bad)
		}
	}
	if len(l.problems) > 0 {
		return nil, &LoadError{Dir: dir, Problems: l.problems}
	}
	sort.Strings(l.set.Files)
	return l.set, nil
}

func checkDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("skills directory: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("skills directory %s is not a directory", dir)
	}
	return nil
}

// loader reads one directory's files into a set and notes every problem on the way.
type loader struct {
	dir      string
	set      *Set
	problems []string
}

func (l *loader) bad(file, format string, args ...any) {
	l.problems = append(l.problems, file+": "+fmt.Sprintf(format, args...))
}

// read returns a file's text; false when it is absent or unusable (which is noted).
func (l *loader) read(rel string, limit int) (string, bool) {
	b, err := os.ReadFile(filepath.Join(l.dir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		l.bad(rel, "%v", err)
		return "", false
	}
	if len(b) > limit {
		l.bad(rel, "is %d bytes long; the limit is %d", len(b), limit)
		return "", false
	}
	if !utf8.Valid(b) {
		l.bad(rel, "is not UTF-8 text")
		return "", false
	}
	l.set.Files = append(l.set.Files, rel)
	return string(b), true
}

// prompts reads prompts/<mode>.md, and the title prompt when the layout keeps it there
// (titleName, "" when it does not); any other file there is a mistake worth naming.
func (l *loader) prompts(titleName string) {
	entries, err := os.ReadDir(filepath.Join(l.dir, "prompts"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.bad("prompts", "%v", err)
	}
	for _, e := range entries {
		rel := "prompts/" + e.Name()
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Name() == titleName {
			l.titlePrompt(rel)
			continue
		}
		name, ok := strings.CutSuffix(e.Name(), ".md")
		mode, err := tools.ParseMode(name)
		if !ok || err != nil || name == "" {
			l.bad(rel, "is not a prompt of a mode; name it after one: %s", modeFiles())
			continue
		}
		if text, ok := l.read(rel, maxPromptBytes); ok {
			if strings.TrimSpace(text) == "" {
				l.bad(rel, "is empty")
				continue
			}
			l.set.prompts[mode] = text
		}
	}
}

func (l *loader) titlePrompt(rel string) {
	if text, ok := l.read(rel, maxPromptBytes); ok {
		if strings.TrimSpace(text) == "" {
			l.bad(rel, "is empty")
		}
		l.set.title = strings.TrimSpace(text)
	}
}

func (l *loader) forbidden(rel string) {
	text, ok := l.read(rel, maxPromptBytes)
	if !ok {
		return
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) > maxPatternBytes {
			l.bad(rel, "line %d is longer than %d bytes", i+1, maxPatternBytes)
			continue
		}
		l.set.Forbidden = append(l.set.Forbidden, line)
	}
}

func modeFiles() string {
	names := make([]string, len(tools.Modes))
	for i, m := range tools.Modes {
		names[i] = string(m) + ".md"
	}
	return strings.Join(names, ", ")
}

func checkRecipes(text string, bad func(file, format string, args ...any)) []Recipe {
	const file = "injection_recipes.json"
	var recipes []Recipe
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&recipes); err != nil {
		bad(file, "is not a JSON array of recipes: %v", err)
		return nil
	}
	if len(recipes) > maxRecipes {
		bad(file, "holds %d recipes; at most %d", len(recipes), maxRecipes)
	}
	seen := map[string]bool{}
	for i, r := range recipes {
		at := fmt.Sprintf("recipe %d", i+1)
		if strings.TrimSpace(r.Name) == "" {
			bad(file, "%s has no name", at)
			continue
		}
		at = fmt.Sprintf("recipe %q", r.Name)
		if seen[r.Name] {
			bad(file, "%s is defined twice", at)
		}
		seen[r.Name] = true
		if len(r.Platforms) == 0 {
			bad(file, "%s names no platforms", at)
		}
		for _, p := range r.Platforms {
			if _, err := devices.ProfileByName(p); err != nil {
				bad(file, "%s: unknown platform %q", at, p)
			}
		}
		if len(r.Commands) == 0 {
			bad(file, "%s has no commands", at)
		}
		if strings.TrimSpace(r.Verify.Command) == "" || strings.TrimSpace(r.Verify.Expect) == "" {
			bad(file, "%s needs verify.command and verify.expect (how to tell the fault is fixed)", at)
		}
	}
	return recipes
}

// LoadError lists everything wrong with a skills directory.
type LoadError struct {
	Dir      string
	Problems []string
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("skills directory %s: %s", e.Dir, strings.Join(e.Problems, "; "))
}
