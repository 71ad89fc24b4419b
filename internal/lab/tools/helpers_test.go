package tools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

type lab struct {
	fake *fakegns3.Server
	env  Env
	pid  string
	reg  *Registry

	mu       sync.Mutex
	progress []Progress
}

func newLab(t *testing.T, opts ...fakegns3.Option) *lab {
	t.Helper()
	fake := fakegns3.New(t, opts...)
	pid := fake.AddProject("lab")
	l := &lab{fake: fake, pid: pid, reg: NewRegistry(LabTools()...)}
	l.reg.Register(fastStart())
	l.env = Env{
		ProjectID: pid,
		GNS3:      gns3.NewServer(fake.URL, 2*time.Second).WithToken(fakegns3.AdminToken),
		Attempt:   1,
		Progress: func(p Progress) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.progress = append(l.progress, p)
		},
	}
	return l
}

func (l *lab) progressFor(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.progress {
		if p.ItemName == name {
			out = append(out, p.Status)
		}
	}
	return out
}

// run executes a tool through the registry in lab automation mode with
// object arguments.
func (l *lab) run(t *testing.T, name string, args any) Result {
	t.Helper()
	return l.runMode(t, LabAutomation, name, args)
}

func (l *lab) runMode(t *testing.T, mode Mode, name string, args any) Result {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	r := l.reg.Execute(context.Background(), l.env, mode, name, raw)
	// Every result must survive a JSON round trip in the standard shape.
	var back map[string]any
	if err := json.Unmarshal([]byte(r.JSON()), &back); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	for _, k := range []string{"success", "total", "successful", "failed", "data", "metadata"} {
		if _, ok := back[k]; !ok {
			t.Fatalf("result lacks %q: %s", k, r.JSON())
		}
	}
	if back["data"] == nil {
		t.Fatalf("data is null: %s", r.JSON())
	}
	if r.Metadata["tool_name"] != name || r.Metadata["version"] != FormatVersion {
		t.Fatalf("metadata: %v", r.Metadata)
	}
	if r.Total != r.Successful+r.Failed || r.Total != len(r.Data) || r.Success != (r.Failed == 0 && r.Error == "") {
		t.Fatalf("inconsistent counts: %s", r.JSON())
	}
	return r
}

func mustSucceed(t *testing.T, r Result) {
	t.Helper()
	if !r.Success {
		t.Fatalf("expected success: %s", r.JSON())
	}
}

func mustFailWhole(t *testing.T, r Result, contains string) {
	t.Helper()
	if r.Success || r.Error == "" || r.Total != 0 || !strings.Contains(r.Error, contains) {
		t.Fatalf("expected whole-call failure containing %q: %s", contains, r.JSON())
	}
}

func item(t *testing.T, r Result, name string) Item {
	t.Helper()
	for _, it := range r.Data {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("no item %q in %s", name, r.JSON())
	return Item{}
}

func newLabClient(fake *fakegns3.Server) *gns3.Client {
	return gns3.NewServer(fake.URL, 2*time.Second).WithToken(fakegns3.AdminToken)
}

// fastStart is start_gns3_node with polling shortened for tests.
func fastStart() *startTool {
	st := newStartTool()
	st.firstPoll, st.maxPoll, st.progressEvery = 2*time.Millisecond, 10*time.Millisecond, 20*time.Millisecond
	return st
}
