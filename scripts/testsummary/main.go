// Command testsummary reads `go test -json` on stdin, prints what `go test` would print (the
// package lines, and the whole output of failing tests), and ends with one line saying how
// many tests were skipped and why. `make test` pipes through it outside CI, where a missing
// PostgreSQL, Redis or Temporal CLI skips tests that CI would fail.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// summary is what the run showed.
type summary struct {
	skipped map[string]int // reason -> tests
	failed  int
}

func main() {
	s, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if s.failed > 0 {
		os.Exit(1)
	}
}

func summarize(in io.Reader, out io.Writer) (summary, error) {
	s := summary{skipped: map[string]int{}}
	// The output of each running test, kept until it ends: shown if it fails, searched for the
	// reason if it is skipped.
	pending := map[string][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (a build error printed by go itself): pass it on.
			fmt.Fprintln(out, string(line))
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if e.Test == "" {
				fmt.Fprint(out, e.Output) // ok/FAIL lines, build failures, package-level output
				continue
			}
			pending[key] = append(pending[key], e.Output)
		case "skip":
			if e.Test != "" {
				s.skipped[skipReason(pending[key])]++
			}
			delete(pending, key)
		case "fail":
			if e.Test != "" {
				s.failed++
				fmt.Fprint(out, strings.Join(pending[key], ""))
			}
			delete(pending, key)
		case "pass":
			delete(pending, key)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	fmt.Fprintln(out, s.line())
	return s, nil
}

// skipReason is the message the test gave t.Skip, without the file:line prefix.
func skipReason(output []string) string {
	for i := len(output) - 1; i >= 0; i-- {
		l := strings.TrimSpace(output[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		if _, rest, ok := strings.Cut(l, ".go:"); ok {
			if _, msg, ok := strings.Cut(rest, ": "); ok {
				l = msg
			}
		}
		return strings.TrimPrefix(l, "skipping: ")
	}
	return "no reason given"
}

func (s summary) line() string {
	total := 0
	for _, n := range s.skipped {
		total += n
	}
	if total == 0 {
		return "testsummary: no test was skipped"
	}
	reasons := make([]string, 0, len(s.skipped))
	for r := range s.skipped {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if s.skipped[reasons[i]] != s.skipped[reasons[j]] {
			return s.skipped[reasons[i]] > s.skipped[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d × %s", s.skipped[r], r)
	}
	return fmt.Sprintf("testsummary: %d tests skipped (CI=true would fail them instead): %s", total, strings.Join(parts, "; "))
}
