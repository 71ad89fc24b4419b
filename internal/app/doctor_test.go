package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/models"
)

const doctorKey = "sk-doctor-secret-key"

// callsTools answers like a model with tool support: a tool call when offered a tool, text
// otherwise.
func callsTools(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if req.HasTools() {
		return fakeopenai.Calls(fakeopenai.ToolCall{Name: req.ToolNames()[0], Arguments: `{"status":"ok"}`}), true
	}
	return fakeopenai.Text("ready"), true
}

// fakeCLI is an executable named temporal: doctor only looks for the dev server's CLI.
func fakeCLI(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "temporal")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	return p
}

func doctorConfig(t *testing.T, gns3URL, modelURL string) Config {
	return Config{GNS3URL: gns3URL, GNS3Timeout: 5 * time.Second, DataDir: filepath.Join(t.TempDir(), "data"),
		TemporalCLI: fakeCLI(t), TemporalNamespace: "default",
		LLMProvider: "custom", LLMBaseURL: modelURL, LLMModel: "tool-model", LLMAPIKey: doctorKey}
}

func runDoctor(t *testing.T, cfg Config, login GNS3Login) (bool, string) {
	t.Helper()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	passed := Doctor(ctx, cfg, login, &out)
	return passed, out.String()
}

func TestDoctorPassesAgainstAWorkingSetupAndPrintsNoSecret(t *testing.T) {
	g := fakegns3.New(t)
	g.AddUser("teacher", "teacher-token", false)
	g.SetPassword("teacher", "teacher-password")
	m := fakeopenai.New(t)
	m.RequireAPIKey(doctorKey)
	m.SetHandler(callsTools)
	cfg := doctorConfig(t, g.URL, m.URL)

	passed, out := runDoctor(t, cfg, GNS3Login{User: "teacher", Password: "teacher-password"})
	require.True(t, passed, out)
	for _, want := range []string{
		"ok    GNS3 at " + g.URL + " is GNS3 3.0.6",
		"ok    GNS3 login with user teacher works (user teacher)",
		"does not exist yet; serve will create it",
		"ok    Temporal CLI at " + cfg.TemporalCLI,
		"skip  Redis: not configured",
		"skip  PostgreSQL: not configured",
		"answers a one-line prompt",
		"calls tools (it called report_status when asked)",
		"warn  outbound policy: the server default reaches 127.0.0.1, but users' own LLM configurations may not",
		"all 9 checks passed",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, doctorKey)
	require.NotContains(t, out, "teacher-password")
	_, err := os.Stat(cfg.DataDir)
	require.ErrorIs(t, err, os.ErrNotExist, "doctor must not create the data directory")
	// Two prompts: the one-line one without tools, then the one offering the trivial tool.
	reqs := m.Requests()
	require.Len(t, reqs, 2)
	require.False(t, reqs[0].HasTools())
	require.Equal(t, []string{"report_status"}, reqs[1].ToolNames())

	cfg.LLMAllowHosts = []string{"127.0.0.1"}
	passed, out = runDoctor(t, cfg, GNS3Login{Token: "teacher-token"})
	require.True(t, passed, out)
	require.Contains(t, out, "ok    GNS3 login with the token in GNS3_COPILOT_GNS3_TOKEN works (user teacher)")
	require.Contains(t, out, "ok    outbound policy allows 127.0.0.1")
	require.NotContains(t, out, "teacher-token")
}

// Issue 26: the most common local-model failure, a model that answers in text when offered a
// tool, is said by name.
func TestDoctorNamesAModelThatCannotCallTools(t *testing.T) {
	g := fakegns3.New(t)
	m := fakeopenai.New(t)
	m.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) { return fakeopenai.Text("I would report ok."), true })
	passed, out := runDoctor(t, doctorConfig(t, g.URL, m.URL), GNS3Login{})
	require.False(t, passed, out)
	require.Contains(t, out, "answers a one-line prompt")
	require.Contains(t, out, "FAIL  model tool-model at "+m.URL+" cannot call tools: offered one and asked to call it, it answered in text")
	require.Contains(t, out, "fix: the copilot works only through tool calls")
	require.Contains(t, out, "1 of 9 checks failed")

	// Ollama refuses a request with tools for a model without the capability.
	m.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if req.HasTools() {
			return fakeopenai.Reply{Error: fakeopenai.BadRequest("registry.ollama.ai/library/gemma:2b does not support tools", "tools")}, true
		}
		return fakeopenai.Text("ready"), true
	})
	passed, out = runDoctor(t, doctorConfig(t, g.URL, m.URL), GNS3Login{})
	require.False(t, passed, out)
	require.Contains(t, out, "cannot call tools: offered one, it refused the request (HTTP 400: registry.ollama.ai/library/gemma:2b does not support tools)")
}

func TestDoctorTellsAGNS3v2FromAWrongURL(t *testing.T) {
	m := fakeopenai.New(t)
	m.SetHandler(callsTools)

	// A GNS3 2.2 server has no /v3 routes at all.
	v2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/version" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"local": false, "version": "2.2.54"}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer v2.Close()
	passed, out := runDoctor(t, doctorConfig(t, v2.URL, m.URL), GNS3Login{})
	require.False(t, passed, out)
	require.Contains(t, out, "FAIL  GNS3 at "+v2.URL+" is GNS3 2.2.54, which has no v3 API")
	require.Contains(t, out, "fix: the copilot needs GNS3 v3")

	// One that reports a 2.x version on the v3 route is just as old.
	old := fakegns3.New(t, fakegns3.WithVersion("2.2.44"))
	passed, out = runDoctor(t, doctorConfig(t, old.URL, m.URL), GNS3Login{})
	require.False(t, passed, out)
	require.Contains(t, out, "is GNS3 2.2.44; the copilot needs v3")

	// Something else entirely.
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	_, out = runDoctor(t, doctorConfig(t, web.URL, m.URL), GNS3Login{})
	require.Contains(t, out, "answers 404 for /v3/version: not a GNS3 v3 controller")
}

func TestDoctorSaysWhatToFixAndHidesPasswords(t *testing.T) {
	g := fakegns3.New(t)
	m := fakeopenai.New(t)
	m.RequireAPIKey("sk-the-right-one")
	m.SetHandler(callsTools)
	cfg := doctorConfig(t, g.URL, m.URL)
	cfg.TemporalCLI = filepath.Join(t.TempDir(), "no-temporal-here")
	cfg.RedisURL = "redis://:redis-secret@127.0.0.1:1/0"
	cfg.DatabaseURL = "postgres://copilot:pg-secret@127.0.0.1:1/copilot?sslmode=disable"
	// A file where the directory should be fails for root too, who may write anywhere.
	notADir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))
	cfg.DataDir = notADir

	passed, out := runDoctor(t, cfg, GNS3Login{User: "nobody", Password: "wrong-password"})
	require.False(t, passed, out)
	for _, want := range []string{
		"FAIL  GNS3 login as user nobody:",
		"FAIL  Temporal CLI (serve starts its dev server):",
		"go install github.com/temporalio/cli/cmd/temporal@v",
		"FAIL  Redis at 127.0.0.1:1:",
		"FAIL  PostgreSQL at postgres://copilot:xxxxx@127.0.0.1:1/copilot:",
		"FAIL  data directory " + notADir + ": " + notADir + " is not a directory",
	} {
		require.Contains(t, out, want)
	}
	require.Contains(t, out, "failed a one-line prompt: HTTP 401")
	require.Contains(t, out, "fix: set the provider's key in GNS3_COPILOT_LLM_API_KEY")
	for _, secret := range []string{doctorKey, "redis-secret", "pg-secret", "wrong-password"} {
		require.NotContains(t, out, secret)
	}

	// Nothing listening for GNS3.
	cfg.GNS3URL = "http://127.0.0.1:1"
	_, out = runDoctor(t, cfg, GNS3Login{})
	require.Contains(t, out, "FAIL  GNS3 at http://127.0.0.1:1:")
	require.Contains(t, out, "fix: start gns3-server")
}

// A model id its provider has retired is named with what to use instead: the server default's
// as a failure, the stored configurations' as warnings for their owners.
func TestDoctorNamesRetiredModels(t *testing.T) {
	g := fakegns3.New(t)
	m := fakeopenai.New(t)
	m.SetHandler(callsTools)
	cfg := doctorConfig(t, g.URL, m.URL)
	cfg.LLMProvider, cfg.LLMModel = "deepseek", "deepseek-reasoner"
	passed, out := runDoctor(t, cfg, GNS3Login{})
	require.False(t, passed, out)
	require.Contains(t, out, "FAIL  server default model deepseek-reasoner was retired by deepseek on 2026-07-24")
	require.Contains(t, out, "fix: set --llm-model to deepseek-flash; see https://api-docs.deepseek.com/")

	// Configurations users saved, in the data directory's database.
	require.NoError(t, os.MkdirAll(cfg.DataDir, 0o700))
	db, err := models.Open("", cfg.DataDir)
	require.NoError(t, err)
	require.NoError(t, models.MigrateLLMConfigs(db))
	for i, model := range []string{"gemini-2.0-flash", "gpt-4o-mini", "gemini-3.8-flash"} {
		provider := map[bool]string{true: "google", false: "openai"}[model != "gpt-4o-mini"]
		require.NoError(t, db.Create(&models.LLMModelConfig{ID: fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), OwnerType: models.OwnerUser,
			OwnerID: "alice", Name: model, ModelType: "text", Provider: provider, BaseURL: "https://example.com/v1", Model: model,
			ContextLimit: 128, ContextStrategy: "balanced", CopilotMode: "teaching_assistant", Extra: "{}"}).Error)
	}
	sqlDB, _ := db.DB()
	require.NoError(t, sqlDB.Close())
	cfg.LLMModel = "deepseek-flash"
	_, out = runDoctor(t, cfg, GNS3Login{})
	require.Contains(t, out, `warn  LLM configuration "gemini-2.0-flash" of user alice uses gemini-2.0-flash, which was retired by google on 2026-06-01`)
	require.Contains(t, out, "fix: its owner sets its model to gemini-3.5-flash-lite or gemini-3.8-flash")
	require.Contains(t, out, `warn  LLM configuration "gpt-4o-mini" of user alice uses gpt-4o-mini, which is deprecated by openai and shuts down on 2027-01-14`)
	require.NotContains(t, out, `"gemini-3.8-flash"`)
	require.NotContains(t, out, "server default model deepseek-flash was retired")
}
