package api

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestSkillsReloadIsForSuperadminsAndKeepsWorkingSkills(t *testing.T) {
	dir := t.TempDir()
	prompt := filepath.Join(dir, "prompts", "teaching_assistant.md")
	if err := os.MkdirAll(filepath.Dir(prompt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prompt, []byte("first prompt"), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := skills.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakegns3.New(t)
	fake.AddUser("alice", "tok-alice", false)
	events := relay.NewMemory(relay.MemoryOptions{})
	h := newTestServer(Deps{GNS3: gns3At(fake.URL), Events: events, Skills: store}).Handler()
	call := func(token, method, path string) (int, string) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}

	if code, body := call("tok-alice", "POST", "/v3/copilot/reload/skills"); code != http.StatusForbidden || !strings.Contains(body, "Only a superadmin") {
		t.Fatalf("regular user: %d %s", code, body)
	}
	if code, _ := call("tok-alice", "GET", "/v3/copilot/skills"); code != http.StatusForbidden {
		t.Fatalf("regular user read: %d", code)
	}

	if err := os.WriteFile(prompt, []byte("second prompt"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := call(fakegns3.AdminToken, "POST", "/v3/copilot/reload/skills")
	if code != http.StatusOK || !strings.Contains(body, `"status":"ok"`) || !strings.Contains(body, `"prompts":["teaching_assistant"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	if store.Current().SystemPrompt(tools.TeachingAssistant) != "second prompt" {
		t.Fatal("reload did not take")
	}
	if evs, _ := events.Range(t.Context(), relay.SkillsStream, "", 0); len(evs) != 1 || evs[0].Type != relay.TypeSkillsReload {
		t.Fatalf("the reload was not announced to the workers: %+v", evs)
	}

	if err := os.WriteFile(prompt, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, body = call(fakegns3.AdminToken, "POST", "/v3/copilot/reload/skills")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "previous ones stay active") || !strings.Contains(body, "prompts/teaching_assistant.md: is empty") {
		t.Fatalf("broken reload: %d %s", code, body)
	}
	if store.Current().SystemPrompt(tools.TeachingAssistant) != "second prompt" {
		t.Fatal("a broken reload changed the active skills")
	}
	if code, body := call(fakegns3.AdminToken, "GET", "/v3/copilot/skills"); code != http.StatusOK || !strings.Contains(body, `"source":"`+dir) {
		t.Fatalf("read: %d %s", code, body)
	}

	builtIn, _ := skills.Open("", nil)
	h = newTestServer(Deps{GNS3: gns3At(fake.URL), Skills: builtIn}).Handler()
	if code, body := call(fakegns3.AdminToken, "POST", "/v3/copilot/reload/skills"); code != http.StatusConflict || !strings.Contains(body, "--skills-dir") {
		t.Fatalf("no directory: %d %s", code, body)
	}
}

// A directory in GNS3's skills layout: GET says so and counts its scenarios by difficulty; a
// reload with a broken file answers 422 naming the file and its line.
func TestSkillsInGNS3LayoutAreDescribed(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{
		"injection/faults.yaml": "name: Faults\ndescription: d\nissues:\n  a:\n    name: A\n    description: d\n    difficulty: beginner\n    protocols: [ip]\n" +
			"  b:\n    name: B\n    description: d\n    difficulty: advanced\n    protocols: [ospf]\n",
		"device/vpcs.yaml": "name: VPCS\ndescription: d\ndevice_type: gns3_vpcs_telnet\nnotes: [not a router]\n",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := skills.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakegns3.New(t)
	h := newTestServer(Deps{GNS3: gns3At(fake.URL), Skills: store}).Handler()
	call := func(method, path string) (int, string) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+fakegns3.AdminToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	code, body := call("GET", "/v3/copilot/skills")
	for _, want := range []string{`"layout":"gns3-skills"`, `"scenarios":{"by_difficulty":{"advanced":1,"beginner":1,"intermediate":0,"unspecified":0},"total":2}`,
		`"device_skills":[{"device_type":"gns3_vpcs_telnet","name":"VPCS","platform":"vpcs","topics":[]}]`, `"analysis_checks":{"skipped":0,"usable":0}`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET lacks %s: %d %s", want, code, body)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "injection", "faults.yaml"), []byte("name: Faults\ndescription: d\nissues:\n  a: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body = call("POST", "/v3/copilot/reload/skills")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "injection/faults.yaml: does not parse as YAML: line 5:") {
		t.Fatalf("broken reload: %d %s", code, body)
	}
	if len(store.Current().Scenarios) != 2 {
		t.Fatal("a broken reload changed the active skills")
	}
}
