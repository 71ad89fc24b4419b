package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Limits of a GNS3-layout directory: GNS3's own repository holds about 50 injection files, 815
// scenarios and 61 packet-analysis files, well within them.
const (
	maxYAMLBytes = 1 << 20
	maxYAMLFiles = 500
	maxScenarios = 5000
)

// gns3Folders are the folders that make a directory one in GNS3's layout.
var gns3Folders = []string{"injection", "device", "packet_analysis"}

func isGNS3Layout(dir string) bool {
	for _, f := range gns3Folders {
		if info, err := os.Stat(filepath.Join(dir, f)); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}

// loadGNS3 reads a directory in GNS3's skills layout.
func (l *loader) loadGNS3() {
	l.prompts("title.md")
	l.forbidden(filepath.ToSlash(filepath.Join("config", "forbidden_commands.txt")))
	for _, rel := range l.yamlFiles("injection") {
		if root, ok := l.yaml(rel); ok {
			l.injectionFile(rel, root)
		}
	}
	if len(l.set.Scenarios) > maxScenarios {
		l.bad("injection", "holds %d scenarios; at most %d", len(l.set.Scenarios), maxScenarios)
	}
	l.deviceFiles()
	for _, rel := range l.yamlFiles("packet_analysis") {
		if root, ok := l.yaml(rel); ok {
			l.analysisFile(rel, root)
		}
	}
	sort.Slice(l.set.Scenarios, func(i, j int) bool { return l.set.Scenarios[i].ID < l.set.Scenarios[j].ID })
}

// yamlFiles lists the .yaml and .yml files of a folder and its subfolders, relative to the
// directory; a missing folder has none.
func (l *loader) yamlFiles(folder string) []string {
	var out []string
	root := filepath.Join(l.dir, folder)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		ext := filepath.Ext(d.Name())
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		rel, _ := filepath.Rel(l.dir, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.bad(folder, "%v", err)
	}
	if len(out) > maxYAMLFiles {
		l.bad(folder, "holds %d YAML files; at most %d", len(out), maxYAMLFiles)
		out = out[:maxYAMLFiles]
	}
	sort.Strings(out)
	return out
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yaml parses a file into its document's root mapping; a file that does not parse is named
// with the line the parser stopped at.
func (l *loader) yaml(rel string) (*yaml.Node, bool) {
	text, ok := l.read(rel, maxYAMLBytes)
	if !ok {
		return nil, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			// The parser (not the scanner) counts the line of the construct it was reading
			// from 0: "did not find expected ']'" is about the "[" on the next line.
			if strings.HasPrefix(m[2], "did not find expected") {
				line++
			}
			msg = fmt.Sprintf("line %d: %s", line, m[2])
		}
		l.bad(rel, "does not parse as YAML: %s", strings.TrimPrefix(msg, "yaml: "))
		return nil, false
	}
	if len(doc.Content) == 0 {
		l.bad(rel, "is empty")
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.bad(rel, "line %d: the file must be a mapping (name: …, description: …)", root.Line)
		return nil, false
	}
	return root, true
}

// badAt notes a problem at a line of a file.
func (l *loader) badAt(rel string, n *yaml.Node, format string, args ...any) {
	l.bad(rel, "line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

// field returns a mapping's value for key, nil when it has none.
func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// text is a scalar field's value; ok is false when the field is there but is not a scalar.
func text(m *yaml.Node, key string) (string, bool) {
	n := field(m, key)
	if n == nil || n.Tag == "!!null" {
		return "", true
	}
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}

// strings reads a list of scalars; ok is false when the field is not one.
func stringList(m *yaml.Node, key string) ([]string, bool) {
	n := field(m, key)
	if n == nil || n.Tag == "!!null" {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	var out []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, false
		}
		if v := strings.TrimSpace(c.Value); v != "" {
			out = append(out, v)
		}
	}
	return out, true
}

// required checks that a mapping has the scalar fields it must have; a missing one is named at
// the line of at (the mapping's key, or the mapping itself).
func (l *loader) required(rel string, m, at *yaml.Node, what string, keys ...string) bool {
	ok := true
	for _, k := range keys {
		v, scalar := text(m, k)
		switch {
		case !scalar:
			l.badAt(rel, field(m, k), "%s: %s must be text", what, k)
			ok = false
		case v == "":
			l.badAt(rel, at, "%s has no %s", what, k)
			ok = false
		}
	}
	return ok
}
