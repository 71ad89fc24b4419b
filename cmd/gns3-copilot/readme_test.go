package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var envInUsage = regexp.MustCompile(`\(env ([A-Z0-9_]+)\)$`)

// configDoc is the configuration reference; its first table lists every flag.
const configDoc = "../../docs/configuration.md"

// readmeRow is one row of the configuration reference's flag table.
type readmeRow struct{ flag, env, def string }

func readmeConfigTable(t *testing.T) map[string]readmeRow {
	t.Helper()
	b, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "# Configuration\n")
	if !ok {
		t.Fatal(configDoc + " has no \"# Configuration\" heading")
	}
	rows := map[string]readmeRow{}
	inTable := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			continue
		}
		cell := func(i int) string { return strings.Trim(strings.TrimSpace(cells[i]), "`") }
		r := readmeRow{flag: cell(0), env: cell(1), def: cell(2)}
		if r.flag == "flag" || strings.HasPrefix(r.flag, "---") {
			continue
		}
		key := r.flag
		if key == "—" {
			key = r.env
		}
		rows[key] = r
	}
	return rows
}

// clearEnv unsets every variable of ours for the test, so defaults are the code's own.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GNS3_COPILOT_") {
			t.Setenv(name, "") // restores the value when the test ends
			os.Unsetenv(name)
		}
	}
}

// Issue 15 point 9 (the table moved to docs/configuration.md with issue 26): the configuration
// table lists every flag with its environment
// variable and default, and nothing that is not a flag. A flag added without its row fails
// here with the row to paste.
func TestREADMEConfigTableMatchesTheFlags(t *testing.T) {
	clearEnv(t)
	rows := readmeConfigTable(t)
	fs, _, _ := newFlagSet("serve")
	var missing []string
	seen := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		seen[name] = true
		m := envInUsage.FindStringSubmatch(f.Usage)
		if m == nil {
			t.Errorf("%s: its help does not end with (env NAME)", name)
			return
		}
		env := m[1]
		def := "`" + f.DefValue + "`"
		if f.DefValue == "" {
			def = "—"
		}
		r, ok := rows[name]
		if !ok {
			missing = append(missing, fmt.Sprintf("| `%s` | `%s` | %s | %s |", name, env, def, strings.TrimSpace(envInUsage.ReplaceAllString(f.Usage, ""))))
			return
		}
		if r.env != env {
			t.Errorf(configDoc+": %s reads %s, not %s", name, env, r.env)
		}
		if f.DefValue == "" {
			if r.def != "—" {
				t.Errorf(configDoc+": %s has no default, the table says %q", name, r.def)
			}
			return
		}
		// The same value written another way (1h for 1h0m0s) is the same default.
		fresh, _, _ := newFlagSet("serve")
		g := fresh.Lookup(f.Name)
		if err := g.Value.Set(r.def); err != nil || g.Value.String() != f.DefValue {
			t.Errorf(configDoc+": %s defaults to %s, the table says %q", name, f.DefValue, r.def)
		}
	})
	for key := range rows {
		if strings.HasPrefix(key, "--") && !seen[key] {
			t.Errorf(configDoc+" lists %s, which is not a flag", key)
		}
	}
	if len(missing) > 0 {
		t.Errorf(configDoc+"'s table lacks these flags; add the rows:\n%s", strings.Join(missing, "\n"))
	}
}
