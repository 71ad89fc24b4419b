package api

import (
	"net/http"
	"strings"
	"testing"
)

// GNS3's web UI lets a user add custom fields to a profile and sends them as flat strings; the
// reference keeps them in the configuration, and so do we.
func TestLLMConfigsKeepCustomFields(t *testing.T) {
	forEachLLMAPIDB(t, func(t *testing.T, e *llmEnv) {
		tok := "tok-alice"
		body := openAIBody("with extras")
		body["top_p"] = "0.9"
		body["organization"] = "lab-42"
		created := e.expect(http.StatusCreated, tok, "POST", userPath(e.alice), body)
		id := created["config_id"].(string)
		cfg := created["config"].(map[string]any)
		if cfg["top_p"] != "0.9" || cfg["organization"] != "lab-42" || cfg["provider"] != "openai" {
			t.Fatalf("config after create: %v", cfg)
		}

		// An update merges: a new field is added, null removes one, the others stay; the response's
		// own fields sent back are not custom fields.
		upd := e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), map[string]any{
			"seed": "7", "organization": nil, "config_id": id, "source": "user", "version": 0})
		cfg = upd["config"].(map[string]any)
		if cfg["top_p"] != "0.9" || cfg["seed"] != "7" {
			t.Fatalf("config after update: %v", cfg)
		}
		for _, gone := range []string{"organization", "config_id", "source", "version"} {
			if _, ok := cfg[gone]; ok {
				t.Fatalf("config carries %q after the update: %v", gone, cfg)
			}
		}

		// Read back through the list the panel uses.
		list := e.expect(http.StatusOK, tok, "GET", userPath(e.alice), nil)
		first := list["configs"].([]any)[0].(map[string]any)["config"].(map[string]any)
		if first["seed"] != "7" || first["top_p"] != "0.9" {
			t.Fatalf("listed config: %v", first)
		}

		// A custom field never hides a real one.
		e.expect(http.StatusOK, tok, "PUT", userPath(e.alice, "/", id), map[string]any{"config": map[string]any{"model": "gpt-4.1"}})
		got := e.expect(http.StatusOK, tok, "GET", userPath(e.alice, "/", id), nil)
		if got["config"].(map[string]any)["model"] != "gpt-4.1" {
			t.Fatalf("model: %v", got["config"])
		}
	})
}

func TestLLMConfigsRefuseBadCustomFields(t *testing.T) {
	e := newLLMEnv(t, llmSQLite(t))
	tok := "tok-alice"
	for name, c := range map[string]struct {
		key   string
		value any
		want  string
	}{
		"bad name":   {"a b", "x", "custom field name"},
		"long value": {"notes", strings.Repeat("x", 3000), "at most 2048"},
	} {
		body := openAIBody(name)
		body[c.key] = c.value
		res := e.expect(http.StatusUnprocessableEntity, tok, "POST", userPath(e.alice), body)
		if msg := res["message"].(string); !strings.Contains(msg, c.want) {
			t.Fatalf("%s: message %q, want it to mention %q", name, msg, c.want)
		}
	}
	body := openAIBody("too many")
	for i := 0; i < 40; i++ {
		body["f"+strings.Repeat("x", i)] = "v"
	}
	res := e.expect(http.StatusUnprocessableEntity, tok, "POST", userPath(e.alice), body)
	if !strings.Contains(res["message"].(string), "at most 32 custom fields") {
		t.Fatalf("message: %v", res["message"])
	}
	if list := e.expect(http.StatusOK, tok, "GET", userPath(e.alice), nil); list["total"] != 0.0 {
		t.Fatalf("refused requests stored something: %v", list)
	}
}
