package workflows_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The workflows stay a leaf, so what a history replays on never changes with another package:
// of ours they import only package domain (the words packages share), which imports only the standard library. Beyond the
// standard library they use the Temporal SDK, and uuid for the approvals' derived ids.
func TestWorkflowsImportOnlyTheSDKAndTheDomainWords(t *testing.T) {
	allowed := func(path string) bool {
		first, _, _ := strings.Cut(path, "/")
		return !strings.Contains(first, ".") || // the standard library
			path == "github.com/gns3-copilot/gns3-copilot/internal/domain" ||
			path == "go.temporal.io/sdk" || strings.HasPrefix(path, "go.temporal.io/sdk/") ||
			path == "github.com/google/uuid"
	}
	checkImports(t, ".", allowed)
	checkImports(t, "../internal/domain", func(path string) bool {
		first, _, _ := strings.Cut(path, "/")
		return !strings.Contains(first, ".")
	})
}

func checkImports(t *testing.T, dir string, allowed func(string) bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed(path) {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
