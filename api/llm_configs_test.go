package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
)

const (
	llmSecret       = "sk-proj-PLAINTEXTSECRET-0123456789-wxyz"
	llmServerSecret = "sk-server-PLAINTEXT-default-key-0000"
	llmAdminID      = "b5b8aa17-e6a8-4680-b5c4-b8d3ad5afb7d" // fakegns3's built-in admin
)

type llmEnv struct {
	t                *testing.T
	fake             *fakegns3.Server
	db               *gorm.DB
	store            *llmconfig.Store
	handler          http.Handler
	alice, bob       string
	labGroup, noneOf string
}

func llmSQLite(t *testing.T) *gorm.DB   { return testdb.SQLiteWith(t, models.Open) }
func llmPostgres(t *testing.T) *gorm.DB { return testdb.PostgresWith(t, models.Open) }

func newLLMEnv(t *testing.T, db *gorm.DB) *llmEnv {
	t.Helper()
	if err := models.MigrateLLMConfigs(db); err != nil {
		t.Fatal(err)
	}
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, credentials.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakegns3.New(t)
	e := &llmEnv{t: t, fake: fake, db: db}
	e.alice = fake.AddUser("alice", "tok-alice", false)
	e.bob = fake.AddUser("bob", "tok-bob", false)
	e.labGroup = fake.AddGroup("alice", "lab")
	e.noneOf = fake.AddGroup("bob", "other")
	e.store = llmconfig.NewStore(db, sealer, &llmconfig.Settings{Provider: "openai", BaseURL: "https://api.openai.com/v1",
		Model: "gpt-4o-mini", APIKey: llmServerSecret})
	s := newTestServer(Deps{GNS3: gns3At(fake.URL), LLMConfigs: e.store})
	e.handler = s.Handler()
	return e
}

// do sends a request and checks what every answer must satisfy: JSON errors with a message,
// and never a plaintext key.
func (e *llmEnv) do(token, method, path string, body any) (int, map[string]any, string) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, req)
	text := w.Body.String()
	if strings.Contains(text, llmSecret) || strings.Contains(text, llmServerSecret) || strings.Contains(text, "PLAINTEXT") {
		e.t.Fatalf("%s %s answered with a plaintext key: %s", method, path, text)
	}
	var obj map[string]any
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			e.t.Fatalf("%s %s: bad JSON %q", method, path, text)
		}
	}
	if w.Code >= 400 {
		if msg, _ := obj["message"].(string); msg == "" {
			e.t.Fatalf("%s %s: %d without a message: %s", method, path, w.Code, text)
		}
	}
	return w.Code, obj, text
}

func (e *llmEnv) expect(want int, token, method, path string, body any) map[string]any {
	e.t.Helper()
	code, obj, text := e.do(token, method, path, body)
	if code != want {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, text)
	}
	return obj
}

func userPath(id string, rest ...string) string {
	return "/v3/access/users/" + id + "/llm-model-configs" + strings.Join(rest, "")
}

func groupPath(id string, rest ...string) string {
	return "/v3/access/groups/" + id + "/llm-model-configs" + strings.Join(rest, "")
}

func openAIBody(name string) map[string]any {
	return map[string]any{"name": name, "model_type": "text", "provider": "openai", "model": "gpt-4o-mini",
		"api_key": llmSecret, "context_limit": 128, "temperature": 0.2}
}

func forEachLLMAPIDB(t *testing.T, run func(t *testing.T, e *llmEnv)) {
	for name, open := range map[string]func(*testing.T) *gorm.DB{"sqlite": llmSQLite, "postgres": llmPostgres} {
		t.Run(name, func(t *testing.T) { run(t, newLLMEnv(t, open(t))) })
	}
}

func TestLLMConfigsUserLifecycle(t *testing.T) {
	forEachLLMAPIDB(t, func(t *testing.T, e *llmEnv) {
		tok := "tok-alice"
		created := e.expect(http.StatusCreated, tok, "POST", userPath(e.alice), openAIBody("work"))
		id := created["config_id"].(string)
		cfg := created["config"].(map[string]any)
		if cfg["api_key"] != nil || created["api_key_set"] != true || created["api_key_hint"] != "sk-…wxyz" {
			t.Fatalf("key fields: %v %v %v", cfg["api_key"], created["api_key_set"], created["api_key_hint"])
		}
		if cfg["base_url"] != "https://api.openai.com/v1" || cfg["copilot_mode"] != "teaching_assistant" ||
			cfg["context_strategy"] != "balanced" || cfg["max_tokens"] != nil || cfg["temperature"] != 0.2 {
			t.Fatalf("config: %v", cfg)
		}
		if created["user_id"] != e.alice || created["group_id"] != nil || created["is_default"] != true || created["version"] != 0.0 {
			t.Fatalf("owner fields: %v", created)
		}

		// The column holds only the sealed key.
		var sealed string
		e.db.Raw("SELECT api_key_sealed FROM llm_model_configs WHERE id = ?", id).Scan(&sealed)
		if sealed == "" || strings.Contains(sealed, llmSecret) || strings.Contains(sealed, "PLAINTEXTSECRET") {
			t.Fatalf("stored key column: %q", sealed)
		}
		var everything string
		e.db.Raw("SELECT name || provider || base_url || model || api_key_hint || api_key_sealed FROM llm_model_configs WHERE id = ?", id).Scan(&everything)
		if strings.Contains(everything, "PLAINTEXT") {
			t.Fatal("the key is stored in plaintext somewhere in the row")
		}

		second := e.expect(http.StatusCreated, tok, "POST", userPath(e.alice), map[string]any{
			"name": "local", "provider": "custom", "base_url": "https://llm.lab.example/v1", "model": "qwen2.5:7b", "max_tokens": 1024,
			"copilot_mode": "lab_automation_assistant"})
		id2 := second["config_id"].(string)
		if second["is_default"] != false || second["api_key_set"] != false || second["api_key_hint"] != nil ||
			second["config"].(map[string]any)["max_tokens"] != 1024.0 {
			t.Fatalf("second: %v", second)
		}

		code, _, ownText := e.do(tok, "GET", userPath(e.alice, "/own"), nil)
		var ownList []map[string]any
		if err := json.Unmarshal([]byte(ownText), &ownList); err != nil || code != http.StatusOK || len(ownList) != 2 || ownList[0]["config_id"] != id {
			t.Fatalf("own list: %s", ownList)
		}
		got := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/", id2), nil)
		if got["name"] != "local" {
			t.Fatalf("get one: %v", got)
		}
		def := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/default"), nil)
		if def["config_id"] != id {
			t.Fatalf("default: %v", def)
		}

		// Optimistic locking.
		upd := e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"name": "work (gpt-4.1)", "model": "gpt-4.1", "expected_version": 0})
		if upd["version"] != 1.0 || upd["name"] != "work (gpt-4.1)" || upd["api_key_set"] != true {
			t.Fatalf("update: %v", upd)
		}
		stale := e.expect(http.StatusConflict, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"name": "lost", "expected_version": 0})
		if msg := stale["message"].(string); !strings.Contains(msg, "version 1") || !strings.Contains(msg, "reload") {
			t.Fatalf("409 message: %s", msg)
		}
		// Round-tripping the response (masked key, nested config) changes nothing it should not.
		upd["expected_version"] = 1
		upd["config"].(map[string]any)["temperature"] = 1.5
		round := e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), upd)
		if round["config"].(map[string]any)["temperature"] != 1.5 || round["api_key_hint"] != "sk-…wxyz" {
			t.Fatalf("round trip: %v", round)
		}
		if s, err := e.store.Load(t.Context(), id); err != nil || s.APIKey != llmSecret {
			t.Fatalf("the key survived the round trip: %v", err)
		}

		// Set default, then the list shows the new one.
		sd := e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/default/", id2), nil)
		if sd["is_default"] != true {
			t.Fatalf("set default: %v", sd)
		}
		if def := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/default"), nil); def["config_id"] != id2 {
			t.Fatal("default moved")
		}

		// Delete: stale version refused, then gone.
		e.expect(http.StatusConflict, tok, "DELETE", userPath(e.alice, "/", id, "?expected_version=0"), nil)
		e.expect(http.StatusUnprocessableEntity, tok, "DELETE", userPath(e.alice, "/", id, "?expected_version=x"), nil)
		e.expect(http.StatusNoContent, tok, "DELETE", userPath(e.alice, "/", id), nil)
		e.expect(http.StatusNotFound, tok, "GET", userPath(e.alice, "/", id), nil)
		e.expect(http.StatusNotFound, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"name": "x"})
		e.expect(http.StatusNotFound, tok, "DELETE", userPath(e.alice, "/", id), nil)
		e.expect(http.StatusNotFound, tok, "PUT", userPath(e.alice, "/default/", id), nil)
		e.expect(http.StatusNoContent, tok, "DELETE", userPath(e.alice, "/", id2), nil)
		e.expect(http.StatusNotFound, tok, "GET", userPath(e.alice, "/default"), nil)
	})
}

func TestLLMConfigsPermissions(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	mine := e.expect(http.StatusCreated, "tok-alice", "POST", userPath(e.alice), openAIBody("mine"))["config_id"].(string)
	routes := []struct{ method, path string }{
		{"GET", userPath(e.alice)}, {"GET", userPath(e.alice, "/own")}, {"GET", userPath(e.alice, "/default")},
		{"POST", userPath(e.alice)}, {"GET", userPath(e.alice, "/", mine)}, {"PUT", userPath(e.alice, "/", mine)},
		{"DELETE", userPath(e.alice, "/", mine)}, {"PUT", userPath(e.alice, "/default/", mine)},
	}
	for _, r := range routes {
		e.expect(http.StatusUnauthorized, "", r.method, r.path, openAIBody("x"))
		e.expect(http.StatusUnauthorized, "not-a-token", r.method, r.path, openAIBody("x"))
		if msg := e.expect(http.StatusForbidden, "tok-bob", r.method, r.path, openAIBody("x"))["message"].(string); !strings.Contains(msg, "your own") {
			t.Fatalf("403 message: %s", msg)
		}
	}
	// Bob's own path does not reach Alice's configuration.
	e.expect(http.StatusNotFound, "tok-bob", "GET", userPath(e.bob, "/", mine), nil)
	e.expect(http.StatusNotFound, "tok-bob", "PUT", userPath(e.bob, "/", mine), map[string]any{"name": "hijack"})
	e.expect(http.StatusNotFound, "tok-bob", "DELETE", userPath(e.bob, "/", mine), nil)
	e.expect(http.StatusNotFound, "tok-bob", "PUT", userPath(e.bob, "/default/", mine), nil)
	// Malformed ids.
	e.expect(http.StatusUnprocessableEntity, "tok-alice", "GET", userPath("not-a-uuid"), nil)
	e.expect(http.StatusUnprocessableEntity, "tok-alice", "GET", userPath(e.alice, "/nope"), nil)
	e.expect(http.StatusUnprocessableEntity, "tok-alice", "GET", groupPath("nope"), nil)

	// A superadmin manages anyone's.
	admin := fakegns3.AdminToken
	e.expect(http.StatusOK, admin, "GET", userPath(e.alice, "/", mine), nil)
	made := e.expect(http.StatusCreated, admin, "POST", userPath(e.bob), openAIBody("for bob"))
	if made["user_id"] != e.bob {
		t.Fatalf("created for %v", made["user_id"])
	}
	e.expect(http.StatusOK, admin, "PUT", userPath(e.alice, "/", mine), map[string]any{"name": "fixed by admin"})
	e.expect(http.StatusNotFound, admin, "POST", userPath(uuid.NewString()), openAIBody("nobody"))
	e.expect(http.StatusNotFound, admin, "GET", userPath(uuid.NewString()), nil)
	e.expect(http.StatusNoContent, admin, "DELETE", userPath(e.alice, "/", mine), nil)
}

func TestLLMConfigsGroups(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	admin := fakegns3.AdminToken
	// Only a superadmin writes a group's configurations.
	for _, tok := range []string{"tok-alice", "tok-bob"} {
		e.expect(http.StatusForbidden, tok, "POST", groupPath(e.labGroup), openAIBody("x"))
	}
	g := e.expect(http.StatusCreated, admin, "POST", groupPath(e.labGroup), map[string]any{
		"name": "lab vLLM", "provider": "vllm", "model": "Qwen/Qwen2.5-7B-Instruct", "context_limit": 32})
	gid := g["config_id"].(string)
	if g["group_id"] != e.labGroup || g["user_id"] != nil || g["is_default"] != true {
		t.Fatalf("group config: %v", g)
	}
	for _, r := range []struct{ method, path string }{
		{"PUT", groupPath(e.labGroup, "/", gid)}, {"DELETE", groupPath(e.labGroup, "/", gid)}, {"PUT", groupPath(e.labGroup, "/default/", gid)},
	} {
		e.expect(http.StatusForbidden, "tok-alice", r.method, r.path, map[string]any{"name": "x"})
	}

	// Members read; others do not.
	list := e.expect(http.StatusOK, "tok-alice", "GET", groupPath(e.labGroup), nil)
	if list["total"] != 1.0 || list["default_config"].(map[string]any)["config_id"] != gid {
		t.Fatalf("group list: %v", list)
	}
	e.expect(http.StatusOK, "tok-alice", "GET", groupPath(e.labGroup, "/default"), nil)
	e.expect(http.StatusOK, "tok-alice", "GET", groupPath(e.labGroup, "/", gid), nil)
	e.expect(http.StatusForbidden, "tok-bob", "GET", groupPath(e.labGroup), nil)
	e.expect(http.StatusForbidden, "tok-bob", "GET", groupPath(e.labGroup, "/", gid), nil)
	e.expect(http.StatusNotFound, admin, "GET", groupPath(e.noneOf, "/default"), nil)
	e.expect(http.StatusNotFound, admin, "GET", groupPath(e.noneOf, "/", gid), nil)
	e.fake.FailNext(fakegns3.OpUserGroups, "", http.StatusForbidden, "Permission denied (privilege Group.Audit is required)")
	e.expect(http.StatusForbidden, "tok-alice", "GET", groupPath(e.labGroup), nil)

	// Alice inherits the group's default until she has her own.
	inh := e.expect(http.StatusOK, "tok-alice", "GET", userPath(e.alice), nil)
	configs := inh["configs"].([]any)
	if inh["total"] != 1.0 || len(configs) != 1 || inh["groups_visible"] != true {
		t.Fatalf("inherited: %v", inh)
	}
	first := configs[0].(map[string]any)
	if first["source"] != "group" || first["group_name"] != "lab" || inh["default_config"].(map[string]any)["config_id"] != gid {
		t.Fatalf("inherited entry: %v", first)
	}
	if sd := inh["server_default"].(map[string]any); sd["model"] != "gpt-4o-mini" || sd["api_key"] != nil {
		t.Fatalf("server default: %v", sd)
	}
	if s, err := e.store.Choose(t.Context(), e.alice, gns3At(e.fake.URL).WithToken("tok-alice")); err != nil || s.ConfigID != gid {
		t.Fatalf("chooser disagrees with the list: %+v %v", s, err)
	}
	own := e.expect(http.StatusCreated, "tok-alice", "POST", userPath(e.alice), openAIBody("mine"))
	inh = e.expect(http.StatusOK, "tok-alice", "GET", userPath(e.alice), nil)
	if inh["total"] != 2.0 || inh["default_config"].(map[string]any)["config_id"] != own["config_id"] ||
		inh["configs"].([]any)[0].(map[string]any)["source"] != "user" || inh["configs"].([]any)[0].(map[string]any)["group_name"] != nil {
		t.Fatalf("own default first: %v", inh)
	}
	// A GNS3 that hides memberships: own configurations only, and it says so.
	e.fake.FailNext(fakegns3.OpUserGroups, "", http.StatusForbidden, "Permission denied")
	inh = e.expect(http.StatusOK, "tok-alice", "GET", userPath(e.alice), nil)
	if inh["total"] != 1.0 || inh["groups_visible"] != false {
		t.Fatalf("hidden groups: %v", inh)
	}
	e.fake.FailNext(fakegns3.OpUserGroups, "", http.StatusInternalServerError, "boom")
	e.expect(http.StatusBadGateway, "tok-alice", "GET", userPath(e.alice), nil)

	e.expect(http.StatusOK, admin, "PUT", groupPath(e.labGroup, "/", gid), map[string]any{"temperature": 0, "expected_version": 0})
	e.expect(http.StatusConflict, admin, "PUT", groupPath(e.labGroup, "/", gid), map[string]any{"temperature": 1, "expected_version": 0})
	e.expect(http.StatusOK, admin, "PUT", groupPath(e.labGroup, "/default/", gid), nil)
	e.expect(http.StatusNoContent, admin, "DELETE", groupPath(e.labGroup, "/", gid), nil)
	e.expect(http.StatusNotFound, "tok-alice", "GET", groupPath(e.labGroup, "/default"), nil)
}

func TestLLMConfigsRequestValidation(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	tok := "tok-alice"
	p := userPath(e.alice)
	msg := func(code int, body any) string {
		t.Helper()
		return e.expect(code, tok, "POST", p, body)["message"].(string)
	}
	if m := msg(http.StatusBadRequest, `{"name": `); !strings.Contains(m, "not valid JSON") {
		t.Fatalf("bad JSON: %s", m)
	}
	msg(http.StatusBadRequest, "")
	if m := msg(http.StatusUnprocessableEntity, `[1,2]`); !strings.Contains(m, "JSON object") {
		t.Fatalf("array body: %s", m)
	}
	if m := msg(http.StatusRequestEntityTooLarge, map[string]any{"name": strings.Repeat("x", 70000)}); !strings.Contains(m, "larger than") {
		t.Fatalf("big body: %s", m)
	}
	wrong := map[string]any{"name": 5, "temperature": "hot", "is_default": "yes", "context_limit": 1.5, "max_tokens": 0, "api_key": 12}
	m := msg(http.StatusUnprocessableEntity, wrong)
	for _, want := range []string{"name must be a string", "temperature must be a number", "is_default must be true or false",
		"context_limit must be a whole number", "max_tokens must be at least 1", "api_key must be a string"} {
		if !strings.Contains(m, want) {
			t.Errorf("%q does not say %q", m, want)
		}
	}
	m = msg(http.StatusUnprocessableEntity, map[string]any{"name": strings.Repeat("n", 101), "provider": "openai", "model": "gpt-4o",
		"api_key": llmSecret, "temperature": 3, "copilot_mode": "chaos", "context_strategy": "max"})
	for _, want := range []string{"at most 100", "temperature must be between 0 and 2", "copilot_mode", "context_strategy"} {
		if !strings.Contains(m, want) {
			t.Errorf("%q does not say %q", m, want)
		}
	}
	if strings.Contains(m, llmSecret) {
		t.Fatal("key echoed in an error")
	}
	// Exactly 100 characters and the limits of temperature pass.
	ok := openAIBody(strings.Repeat("n", 100))
	ok["temperature"] = 2
	made := e.expect(http.StatusCreated, tok, "POST", p, ok)
	id := made["config_id"].(string)
	// The reference's nested shape and its ways of saying "no max_tokens".
	nested := e.expect(http.StatusCreated, tok, "POST", p, map[string]any{"name": "nested", "config": map[string]any{
		"provider": "custom", "base_url": "http://203.0.113.5:8080/v1/", "model": "my-model", "max_tokens": 512}})
	nc := nested["config"].(map[string]any)
	if nc["base_url"] != "http://203.0.113.5:8080/v1" || nc["max_tokens"] != 512.0 {
		t.Fatalf("nested: %v", nc)
	}
	nid := nested["config_id"].(string)
	for _, none := range []any{nil, "", "null"} {
		e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", nid), map[string]any{"max_tokens": 512})
		got := e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", nid), map[string]any{"max_tokens": none})
		if got["config"].(map[string]any)["max_tokens"] != nil {
			t.Fatalf("max_tokens %v did not remove the limit", none)
		}
	}
	// A key entered for one server does not silently follow the configuration to another.
	m = e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"base_url": "https://elsewhere.example.com/v1"})["message"].(string)
	if !strings.Contains(m, "send the api_key") {
		t.Fatalf("host change: %s", m)
	}
	e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"expected_version": "one"})
	e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"temperature": -1})
	if got := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/", id), nil); got["version"] != 0.0 {
		t.Fatal("a refused update changed the configuration")
	}
}

func TestLLMProviders(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	e.expect(http.StatusUnauthorized, "", "GET", "/v3/access/llm-providers", nil)
	got := e.expect(http.StatusOK, "tok-bob", "GET", "/v3/access/llm-providers", nil)
	ids := map[string]map[string]any{}
	for _, p := range got["providers"].([]any) {
		pm := p.(map[string]any)
		ids[pm["id"].(string)] = pm
	}
	for _, want := range []string{"openai", "anthropic", "google", "aws", "xai", "azure", "deepseek", "openrouter", "ollama", "lmstudio", "vllm", "litellm", "custom"} {
		if ids[want] == nil {
			t.Errorf("provider %s missing", want)
		}
	}
	if ids["ollama"]["base_url"] != "http://localhost:11434/v1" || ids["custom"]["base_url_required"] != true || ids["openai"]["api_key_required"] != true {
		t.Fatalf("presets: %v", ids)
	}
	if len(got["context_strategies"].([]any)) != 3 || len(got["copilot_modes"].([]any)) != 2 {
		t.Fatalf("enums: %v", got)
	}
}

func TestLLMConfigsRegularUsersReachOnlyPublicAddresses(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	for _, url := range []string{"http://127.0.0.1:45425/v1", "http://10.20.30.40/v1", "http://169.254.169.254/latest", "http://localhost:11434/v1"} {
		m := e.expect(http.StatusUnprocessableEntity, "tok-alice", "POST", userPath(e.alice), map[string]any{
			"name": "internal", "provider": "custom", "base_url": url, "model": "m"})["message"].(string)
		if !strings.Contains(m, "may only reach public addresses") {
			t.Errorf("%s: %s", url, m)
		}
	}
	if list := e.expect(http.StatusOK, "tok-alice", "GET", userPath(e.alice), nil); list["total"] != 0.0 {
		t.Fatalf("a refused configuration was stored: %v", list)
	}
	// The preset of a local server is the server's own loopback too.
	e.expect(http.StatusUnprocessableEntity, "tok-alice", "POST", userPath(e.alice), map[string]any{
		"name": "ollama", "provider": "ollama", "model": "qwen2.5:7b"})
	// A superadmin may save it, for her or for the user.
	e.expect(http.StatusCreated, fakegns3.AdminToken, "POST", userPath(e.alice), map[string]any{
		"name": "lab ollama", "provider": "ollama", "model": "qwen2.5:7b"})
	e.expect(http.StatusCreated, fakegns3.AdminToken, "POST", groupPath(e.labGroup), map[string]any{
		"name": "lab vLLM", "provider": "vllm", "model": "m"})
}

// A configuration's reasoning effort is stored and read back in the copilot's words; one that
// is none of them, or that the provider and model cannot take, is a 422 naming the allowed ones
// and changes nothing; "" (or "default") returns to the provider's default.
func TestLLMConfigsReasoningEffort(t *testing.T) {
	forEachLLMAPIDB(t, func(t *testing.T, e *llmEnv) {
		tok := "tok-alice"
		body := map[string]any{"name": "DeepSeek", "provider": "deepseek", "model": "deepseek-flash", "api_key": llmSecret,
			"context_limit": 1000, "reasoning_effort": "High"}
		made := e.expect(http.StatusCreated, tok, "POST", userPath(e.alice), body)
		id := made["config_id"].(string)
		if got := made["config"].(map[string]any)["reasoning_effort"]; got != "high" {
			t.Fatalf("stored effort: %v", got)
		}
		m := e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"reasoning_effort": "ultra"})["message"].(string)
		if !strings.Contains(m, `reasoning_effort "ultra" is not one of off, low, medium, high, max`) {
			t.Fatalf("unknown effort: %s", m)
		}
		// A model that cannot stop thinking refuses off, and says what it takes.
		m = e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{
			"provider": "google", "model": "gemini-3.1-pro-preview", "api_key": llmSecret, "reasoning_effort": "off"})["message"].(string)
		if !strings.Contains(m, "cannot stop thinking") || !strings.Contains(m, "Allowed: low, medium, high, max") {
			t.Fatalf("off for a model that cannot stop: %s", m)
		}
		// An effort the new model cannot take stops a change of model, too.
		m = e.expect(http.StatusUnprocessableEntity, tok, "PUT", userPath(e.alice, "/", id), map[string]any{
			"provider": "openai", "model": "gpt-5.5", "api_key": llmSecret})["message"].(string)
		if !strings.Contains(m, "Allowed: off") {
			t.Fatalf("a model change that the stored effort does not fit: %s", m)
		}
		got := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/", id), nil)
		if got["version"] != 0.0 || got["config"].(map[string]any)["reasoning_effort"] != "high" {
			t.Fatalf("a refused change changed the configuration: %v", got)
		}
		got = e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"reasoning_effort": "off"})
		if got["config"].(map[string]any)["reasoning_effort"] != "off" {
			t.Fatalf("off: %v", got)
		}
		got = e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"reasoning_effort": "default"})
		if got["config"].(map[string]any)["reasoning_effort"] != nil {
			t.Fatalf("back to the provider's default: %v", got)
		}
		providers := e.expect(http.StatusOK, tok, "GET", "/v3/access/llm-providers", nil)
		if fmt.Sprint(providers["reasoning_efforts"]) != "[off low medium high max]" {
			t.Fatalf("the efforts offered: %v", providers["reasoning_efforts"])
		}
	})
}
