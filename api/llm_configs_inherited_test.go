package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// GNS3's web UI switches the model and the copilot mode by calling the user's routes with the
// id of the configuration picked, which may be one the user inherits from a group.
func TestLLMConfigsInheritedThroughUserRoute(t *testing.T) {
	forEachLLMAPIDB(t, func(t *testing.T, e *llmEnv) {
		alice := "tok-alice"
		g := e.expect(http.StatusCreated, fakegns3.AdminToken, "POST", groupPath(e.labGroup), map[string]any{
			"name": "lab model", "provider": "openai", "model": "gpt-4.1", "api_key": llmSecret, "context_limit": 128, "top_p": "0.5"})
		gid := g["config_id"].(string)

		got := e.expect(http.StatusOK, alice, "GET", userPath(e.alice, "/", gid), nil)
		if got["source"] != "group" || got["group_name"] != "lab" || got["group_id"] != e.labGroup {
			t.Fatalf("inherited read: %v", got)
		}
		// Another user, not in the group, does not see it.
		e.expect(http.StatusNotFound, "tok-bob", "GET", userPath(e.bob, "/", gid), nil)
		e.expect(http.StatusNotFound, "tok-bob", "PUT", userPath(e.bob, "/default/", gid), map[string]any{})

		// Make it the user's default, then switch its mode for this user.
		def := e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/default/", gid), map[string]any{})
		if def["config_id"] != gid || def["is_default"] != true {
			t.Fatalf("set default: %v", def)
		}
		mode := e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/", gid), map[string]any{"copilot_mode": "lab_automation_assistant"})
		if mode["config"].(map[string]any)["copilot_mode"] != "lab_automation_assistant" || mode["is_default"] != true {
			t.Fatalf("mode switch: %v", mode)
		}
		list := e.expect(http.StatusOK, alice, "GET", userPath(e.alice), nil)
		if list["default_config"].(map[string]any)["config_id"] != gid || list["total"] != 1.0 {
			t.Fatalf("list: %v", list)
		}
		if d := e.expect(http.StatusOK, alice, "GET", userPath(e.alice, "/default"), nil); d["config_id"] != gid {
			t.Fatalf("GET default: %v", d)
		}
		code, _, own := e.do(alice, "GET", userPath(e.alice, "/own"), nil)
		if code != http.StatusOK || strings.TrimSpace(own) != "[]" {
			t.Fatalf("own list shows the choice as a configuration: %s", own)
		}
		// The group's configuration itself is unchanged.
		if gg := e.expect(http.StatusOK, fakegns3.AdminToken, "GET", groupPath(e.labGroup, "/", gid), nil); gg["config"].(map[string]any)["copilot_mode"] != "teaching_assistant" {
			t.Fatalf("group configuration changed: %v", gg)
		}

		// Alice's turns run with the group's model and her mode.
		client := gns3At(e.fake.URL).WithToken(alice)
		st, err := e.store.Choose(context.Background(), e.alice, client)
		if err != nil {
			t.Fatal(err)
		}
		if st.Model != "gpt-4.1" || st.CopilotMode != domain.ModeLabAutomation || st.APIKey != llmSecret {
			t.Fatalf("chosen: %v mode %s", st, st.CopilotMode)
		}
		loaded, err := e.store.Load(context.Background(), st.ConfigID)
		if err != nil || loaded.Model != "gpt-4.1" || loaded.CopilotMode != domain.ModeLabAutomation {
			t.Fatalf("worker-side load: %v %v", loaded, err)
		}

		// Sending the whole profile back with only the mode changed is fine; changing the model is not.
		echo := map[string]any{"name": "lab model", "model_type": "text", "provider": "openai", "model": "gpt-4.1",
			"base_url": "https://api.openai.com/v1/", "temperature": 0.7, "context_limit": 128, "context_strategy": "balanced",
			"copilot_mode": "teaching_assistant", "is_default": true, "top_p": "0.5"}
		if r := e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/", gid), echo); r["config"].(map[string]any)["copilot_mode"] != "teaching_assistant" {
			t.Fatalf("echo: %v", r)
		}
		refused := e.expect(http.StatusForbidden, alice, "PUT", userPath(e.alice, "/", gid), map[string]any{"model": "gpt-5", "top_p": "0.9"})
		if msg := refused["message"].(string); !strings.Contains(msg, "model, top_p are the group's") || !strings.Contains(msg, "superadmin") {
			t.Fatalf("refusal: %s", msg)
		}

		// Unsetting it as the panel does leaves the group's own default in place: a user picks
		// another configuration rather than unsetting their group's.
		if r := e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/", gid), map[string]any{"is_default": false}); r["is_default"] != true {
			t.Fatalf("unset: %v", r)
		}
		// A mode chosen for the group's default applies without making it the user's own default.
		e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/", gid), map[string]any{"copilot_mode": "lab_automation_assistant"})
		if st, err := e.store.Choose(context.Background(), e.alice, client); err != nil || st.CopilotMode != domain.ModeLabAutomation || st.Model != "gpt-4.1" {
			t.Fatalf("group default with the user's mode: %v %s %v", st, st.CopilotMode, err)
		}
		mine := e.expect(http.StatusCreated, alice, "POST", userPath(e.alice), openAIBody("mine"))
		e.expect(http.StatusOK, alice, "PUT", userPath(e.alice, "/default/", gid), map[string]any{})
		if m := e.expect(http.StatusOK, alice, "GET", userPath(e.alice, "/", mine["config_id"].(string)), nil); m["is_default"] != false {
			t.Fatalf("one default per user: own config still default: %v", m)
		}

		// Deleting through the user route forgets the choice; the group's configuration stays.
		e.expect(http.StatusNoContent, alice, "DELETE", userPath(e.alice, "/", gid), nil)
		again := e.expect(http.StatusForbidden, alice, "DELETE", userPath(e.alice, "/", gid), nil)
		if !strings.Contains(again["message"].(string), "belongs to your group 'lab'") {
			t.Fatalf("second delete: %v", again)
		}
		e.expect(http.StatusOK, fakegns3.AdminToken, "GET", groupPath(e.labGroup, "/", gid), nil)
	})
}
