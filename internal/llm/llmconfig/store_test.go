package llmconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/models"
	"gorm.io/gorm"
)

func sealer(t *testing.T, fill byte) *credentials.Sealer {
	t.Helper()
	s, err := credentials.NewSealer(bytes.Repeat([]byte{fill}, credentials.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testDB(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "llm.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := models.MigrateLLMConfigs(db); err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

func ptr[T any](v T) *T { return &v }

const secretKey = "sk-proj-THISISTHEPLAINTEXTKEY0123456789abcd"

func openAIChange(name string) Change {
	return Change{Name: ptr(name), Provider: ptr("openai"), Model: ptr("gpt-4o-mini"), APIKey: ptr(secretKey), ContextLimit: ptr(128)}
}

func problems(t *testing.T, err error) string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a ValidationError, got %v", err)
	}
	return ve.Error()
}

func TestCreateValidatesEveryField(t *testing.T) {
	st := NewStore(testDB(t), sealer(t, 1), nil)
	ctx := context.Background()
	owner := UserOwner("u1")
	cases := []struct {
		name string
		ch   func(*Change)
		want string
	}{
		{"no name", func(c *Change) { c.Name = ptr("   ") }, "name is required"},
		{"long name", func(c *Change) { c.Name = ptr(strings.Repeat("é", 101)) }, "at most 100"},
		{"no provider", func(c *Change) { c.Provider = nil }, "provider is required"},
		{"unknown provider", func(c *Change) { c.Provider = ptr("cohere") }, `use "custom"`},
		{"no model", func(c *Change) { c.Model = ptr("") }, "model is required (for example gpt-6.1-terra)"},
		{"hot", func(c *Change) { c.Temperature = ptr(2.01) }, "temperature must be between 0 and 2"},
		{"cold", func(c *Change) { c.Temperature = ptr(-0.1) }, "temperature must be between 0 and 2"},
		{"context 0", func(c *Change) { c.ContextLimit = ptr(0) }, "context_limit"},
		{"context huge", func(c *Change) { c.ContextLimit = ptr(MaxContextLimitK + 1) }, "context_limit"},
		{"max_tokens over window", func(c *Change) { c.ContextLimit = ptr(8); c.MaxTokens = ptr(8000) }, "smaller than the context window"},
		{"max_tokens negative", func(c *Change) { c.MaxTokens = ptr(-1) }, "max_tokens"},
		{"strategy", func(c *Change) { c.ContextStrategy = ptr("greedy") }, "context_strategy"},
		{"mode", func(c *Change) { c.CopilotMode = ptr("god_mode") }, "copilot_mode"},
		{"model type", func(c *Change) { c.ModelType = ptr("hologram") }, "model_type"},
		{"embedding default", func(c *Change) { c.ModelType = ptr("embedding"); c.IsDefault = ptr(true) }, "cannot be the default"},
		{"no key", func(c *Change) { c.APIKey = nil }, `api_key is required for provider "openai"`},
		{"spaced key", func(c *Change) { c.APIKey = ptr("sk-abc def") }, "api_key must not contain spaces"},
		{"custom without url", func(c *Change) { c.Provider = ptr("custom") }, `base_url is required for provider "custom"`},
		{"azure without url", func(c *Change) { c.Provider = ptr("azure") }, "YOUR-RESOURCE"},
		{"ftp url", func(c *Change) { c.BaseURL = ptr("ftp://x/v1") }, "http:// or https://"},
		{"url with password", func(c *Change) { c.BaseURL = ptr("https://me:pw@x/v1") }, "user name or password"},
	}
	for _, tc := range cases {
		ch := openAIChange("c")
		tc.ch(&ch)
		_, err := st.Create(ctx, owner, ch)
		if got := problems(t, err); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q does not say %q", tc.name, got, tc.want)
		}
		if strings.Contains(fmt.Sprint(err), secretKey) {
			t.Errorf("%s: the key is in the error", tc.name)
		}
	}
	// Several problems are reported together.
	_, err := st.Create(ctx, owner, Change{Temperature: ptr(9.0)})
	if p := problems(t, err); !strings.Contains(p, "name is required") || !strings.Contains(p, "provider is required") || !strings.Contains(p, "temperature") {
		t.Fatalf("all problems at once: %s", p)
	}
	if rows, _ := st.List(ctx, owner); len(rows) != 0 {
		t.Fatalf("an invalid configuration was stored: %d rows", len(rows))
	}
}

func TestCreateFillsPresetsAndDefaults(t *testing.T) {
	st := NewStore(testDB(t), sealer(t, 1), nil)
	ctx := context.Background()
	owner := UserOwner("u1")
	// Local presets point at the server's loopback: only a superadmin's configuration may.
	c, err := st.Create(ctx, owner, Change{Name: ptr("local"), Provider: ptr("Ollama"), Model: ptr("qwen2.5:7b"), WriterIsSuperadmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "ollama" || c.BaseURL != "http://localhost:11434/v1" || c.Temperature != DefaultTemperature ||
		c.ContextStrategy != "balanced" || c.CopilotMode != domain.ModeTeachingAssistant || c.ModelType != "text" ||
		c.ContextLimit != 32 || c.MaxTokens != 0 || !c.IsDefault {
		t.Fatalf("defaults not applied: %+v", c)
	}
	for _, p := range Presets() {
		ch := Change{Name: ptr(p.ID), Provider: ptr(p.ID), Model: ptr("m"), APIKey: ptr(secretKey), IsDefault: ptr(false), WriterIsSuperadmin: true}
		if p.BaseURLRequired {
			ch.BaseURL = ptr("https://my-endpoint.example.com/v1/")
		}
		got, err := st.Create(ctx, owner, ch)
		if err != nil {
			t.Fatalf("%s: %v", p.ID, err)
		}
		want := p.BaseURL
		if p.BaseURLRequired {
			want = "https://my-endpoint.example.com/v1"
		}
		if got.BaseURL != want {
			t.Errorf("%s: base_url %q, want %q", p.ID, got.BaseURL, want)
		}
	}
	custom, err := st.Create(ctx, owner, Change{Name: ptr("override"), Provider: ptr("openai"), BaseURL: ptr("https://proxy.internal:8443/openai/v1"),
		Model: ptr("gpt-4o"), APIKey: ptr(secretKey), CopilotMode: ptr("LAB_AUTOMATION_ASSISTANT"), MaxTokens: ptr(2048)})
	if err != nil {
		t.Fatal(err)
	}
	if custom.BaseURL != "https://proxy.internal:8443/openai/v1" || custom.CopilotMode != domain.ModeLabAutomation || custom.MaxTokens != 2048 || custom.IsDefault {
		t.Fatalf("a given base URL always wins: %+v", custom)
	}
}

func TestKeysAreSealedAndLoadedWorkerSide(t *testing.T) {
	db := testDB(t)
	st := NewStore(db, sealer(t, 1), nil)
	ctx := context.Background()
	c, err := st.Create(ctx, UserOwner("u1"), openAIChange("mine"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		APIKeySealed string
		APIKeyHint   string
	}
	if err := db.Raw("SELECT api_key_sealed, api_key_hint FROM llm_model_configs WHERE id = ?", c.ID).Scan(&raw).Error; err != nil {
		t.Fatal(err)
	}
	if raw.APIKeySealed == "" || strings.Contains(raw.APIKeySealed, secretKey) || strings.Contains(raw.APIKeySealed, "THISISTHEPLAINTEXT") {
		t.Fatalf("stored column holds the key: %q", raw.APIKeySealed)
	}
	if raw.APIKeyHint != "sk-…abcd" {
		t.Fatalf("hint %q", raw.APIKeyHint)
	}
	s, err := st.Load(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.APIKey != secretKey || s.ConfigID != c.ID || s.Model != "gpt-4o-mini" || *s.Temperature != 0.7 || s.ContextLimitK != 128 ||
		s.ContextStrategy != "balanced" || s.CopilotMode != domain.ModeTeachingAssistant {
		t.Fatalf("loaded %+v", s)
	}
	if strings.Contains(s.String(), secretKey) || strings.Contains(fmt.Sprintf("%v %+v %#v", s, s, s), secretKey) {
		t.Fatal("Settings prints its key")
	}

	// A sealed key copied to another row does not open there.
	other, _ := st.Create(ctx, UserOwner("u2"), Change{Name: ptr("x"), Provider: ptr("ollama"), Model: ptr("m"), WriterIsSuperadmin: true})
	db.Exec("UPDATE llm_model_configs SET api_key_sealed = ? WHERE id = ?", raw.APIKeySealed, other.ID)
	var bad *BadConfigError
	if _, err := st.Load(ctx, other.ID); !errors.As(err, &bad) || !strings.Contains(bad.Msg, "enter the api_key") {
		t.Fatalf("moved key: %v", err)
	}
	// A server whose encryption key changed says so.
	if _, err := NewStore(db, sealer(t, 2), nil).Load(ctx, c.ID); !errors.As(err, &bad) || !strings.Contains(bad.Msg, "another server encryption key") {
		t.Fatalf("wrong key: %v", err)
	}
	var noSealer *credentials.Sealer
	if _, err := NewStore(db, noSealer, nil).Create(ctx, UserOwner("u3"), openAIChange("x")); err == nil {
		t.Fatal("a key was stored without an encryption key")
	}
	// A configuration deleted after its turn started.
	if err := st.Delete(ctx, UserOwner("u1"), c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(ctx, c.ID); !errors.As(err, &bad) || !strings.Contains(bad.Msg, "deleted") {
		t.Fatalf("deleted: %v", err)
	}
}

func TestUpdateKeepsClearsAndGuardsTheKey(t *testing.T) {
	st := NewStore(testDB(t), sealer(t, 1), nil)
	ctx := context.Background()
	owner := UserOwner("u1")
	c, err := st.Create(ctx, owner, openAIChange("mine"))
	if err != nil {
		t.Fatal(err)
	}
	key := func(id string) string {
		s, err := st.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.APIKey
	}
	// Fields not sent stay; the masked hint sent back is not a new key.
	u, err := st.Update(ctx, owner, c.ID, ptr(0), Change{Temperature: ptr(0.0), APIKey: ptr("sk-…abcd")})
	if err != nil || u.Temperature != 0 || u.Version != 1 || key(c.ID) != secretKey || u.Model != "gpt-4o-mini" {
		t.Fatalf("update: %+v %v", u, err)
	}
	// The key cannot follow the configuration to another server unasked.
	_, err = st.Update(ctx, owner, c.ID, nil, Change{BaseURL: ptr("https://evil.example.com/v1")})
	if p := problems(t, err); !strings.Contains(p, "evil.example.com instead of api.openai.com") {
		t.Fatalf("host change: %s", p)
	}
	if _, err := st.Update(ctx, owner, c.ID, nil, Change{BaseURL: ptr("https://api.openai.com/v1/")}); err != nil {
		t.Fatalf("same host: %v", err)
	}
	u, err = st.Update(ctx, owner, c.ID, nil, Change{Provider: ptr("deepseek"), Model: ptr("deepseek-chat"), APIKey: ptr("sk-deepseek-0000000000000000wxyz")})
	if err != nil || u.BaseURL != "https://api.deepseek.com" || key(c.ID) != "sk-deepseek-0000000000000000wxyz" || u.APIKeyHint != "sk-…wxyz" {
		t.Fatalf("provider switch: %+v %v", u, err)
	}
	// Moving to a local server that needs no key, removing the key (a superadmin's change: a
	// local server is the copilot host's loopback).
	u, err = st.Update(ctx, owner, c.ID, nil, Change{Provider: ptr("ollama"), APIKey: ptr(""), WriterIsSuperadmin: true})
	if err != nil || u.APIKeySealed != "" || u.APIKeyHint != "" || key(c.ID) != "" {
		t.Fatalf("clear: %+v %v", u, err)
	}
	// Removing a key a provider needs is refused.
	d, _ := st.Create(ctx, owner, openAIChange("second"))
	if _, err := st.Update(ctx, owner, d.ID, nil, Change{APIKey: ptr("")}); !strings.Contains(problems(t, err), "api_key is required") {
		t.Fatal("key removed from an openai configuration")
	}
	// max_tokens set and removed.
	u, _ = st.Update(ctx, owner, d.ID, nil, Change{MaxTokens: ptr(4096)})
	if u.MaxTokens != 4096 {
		t.Fatal("max_tokens not stored")
	}
	if s, _ := st.Load(ctx, d.ID); s.MaxTokens != 4096 {
		t.Fatal("max_tokens not honoured in Settings")
	}
	u, _ = st.Update(ctx, owner, d.ID, nil, Change{MaxTokens: ptr(0)})
	if u.MaxTokens != 0 {
		t.Fatal("max_tokens not removed")
	}
	// Only a chat model can be made the default.
	e, _ := st.Create(ctx, owner, Change{Name: ptr("embed"), ModelType: ptr("embedding"), Provider: ptr("ollama"), Model: ptr("nomic-embed-text"), WriterIsSuperadmin: true})
	if _, err := st.SetDefault(ctx, owner, e.ID); !strings.Contains(problems(t, err), "cannot be the default") {
		t.Fatal("embedding model made the default")
	}
	if _, err := st.SetDefault(ctx, owner, d.ID); err != nil {
		t.Fatal(err)
	}
	if def, _ := st.Default(ctx, owner); def.ID != d.ID {
		t.Fatal("SetDefault")
	}
}

func TestChooseFollowsUserGroupServerDefault(t *testing.T) {
	fake := fakegns3.New(t)
	aliceID := fake.AddUser("alice", "tok-alice", false)
	labGroup := fake.AddGroup("alice", "lab")
	staffGroup := fake.AddGroup("alice", "staff")
	bobID := fake.AddUser("bob", "tok-bob", false)
	server := gns3.NewServer(fake.URL, 5*time.Second)
	alice, bob := server.WithToken("tok-alice"), server.WithToken("tok-bob")
	ctx := context.Background()

	db := testDB(t)
	bare := NewStore(db, sealer(t, 1), nil)
	if _, err := bare.Choose(ctx, aliceID, alice); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("nothing configured: %v", err)
	}
	if !strings.Contains(ErrNotConfigured.Error(), "llm-model-configs") {
		t.Fatal("the error tells the user how to configure one")
	}
	def := &Settings{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKey: "sk-server", ConfigID: "ignored"}
	st := NewStore(db, sealer(t, 1), def)
	s, err := st.Choose(ctx, aliceID, alice)
	if err != nil || s.ConfigID != "" || s.Model != "gpt-4o-mini" || s.APIKey != "sk-server" {
		t.Fatalf("server default: %+v %v", s, err)
	}
	if d, ok := st.ServerDefault(); !ok || d.APIKey != "" {
		t.Fatal("ServerDefault hides the key")
	}
	if s, _ := st.Load(ctx, ""); s.APIKey != "sk-server" {
		t.Fatal("Load(\"\") is the server default")
	}

	// A group default, the first group in GNS3's order winning.
	staff, _ := st.Create(ctx, GroupOwner(staffGroup), Change{Name: ptr("staff"), Provider: ptr("ollama"), Model: ptr("llama3.1:8b")})
	s, err = st.Choose(ctx, aliceID, alice)
	if err != nil || s.ConfigID != staff.ID {
		t.Fatalf("group default: %+v %v", s, err)
	}
	lab, _ := st.Create(ctx, GroupOwner(labGroup), Change{Name: ptr("lab"), Provider: ptr("vllm"), Model: ptr("qwen")})
	if s, _ = st.Choose(ctx, aliceID, alice); s.ConfigID != lab.ID {
		t.Fatalf("first group wins: got %s", s.Name)
	}
	if s, _ = st.Choose(ctx, bobID, bob); s.ConfigID != "" {
		t.Fatal("bob is in no group: server default")
	}

	// The user's own default comes first, and needs no GNS3 call.
	own, _ := st.Create(ctx, UserOwner(aliceID), openAIChange("own"))
	fake.ResetCounts()
	s, err = st.Choose(ctx, aliceID, alice)
	if err != nil || s.ConfigID != own.ID || s.APIKey != secretKey {
		t.Fatalf("own default: %+v %v", s, err)
	}
	if fake.Count(fakegns3.OpUserGroups) != 0 {
		t.Fatal("asked GNS3 for groups although the user has a default")
	}

	// Without their own default, a GNS3 that hides memberships means no group config applies.
	if _, err := st.Update(ctx, UserOwner(aliceID), own.ID, nil, Change{IsDefault: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	fake.FailNext(fakegns3.OpUserGroups, "", http.StatusForbidden, "Permission denied (privilege Group.Audit is required)")
	if s, err = st.Choose(ctx, aliceID, alice); err != nil || s.ConfigID != "" {
		t.Fatalf("hidden groups: %+v %v", s, err)
	}
	// Any other GNS3 failure is reported, not papered over.
	fake.FailNext(fakegns3.OpUserGroups, "", http.StatusInternalServerError, "boom")
	if _, err = st.Choose(ctx, aliceID, alice); err == nil || !errors.Is(err, gns3.ErrServer) {
		t.Fatalf("GNS3 failure: %v", err)
	}
}

func TestResolve(t *testing.T) {
	row := func(id, owner string, def bool) models.LLMModelConfig {
		return models.LLMModelConfig{ID: id, OwnerID: owner, IsDefault: def}
	}
	groups := []models.LLMModelConfig{row("a", "g1", false), row("b", "g2", true), row("c", "g1", true)}
	if got := Resolve(nil, groups, []string{"g1", "g2"}); got == nil || got.ID != "c" {
		t.Fatalf("first group in order: %+v", got)
	}
	if got := Resolve(nil, groups, []string{"g2", "g1"}); got.ID != "b" {
		t.Fatal("order decides")
	}
	if got := Resolve([]models.LLMModelConfig{row("u", "me", false)}, groups, nil); got != nil {
		t.Fatal("no default anywhere")
	}
	if got := Resolve([]models.LLMModelConfig{row("u", "me", true)}, groups, []string{"g1"}); got.ID != "u" {
		t.Fatal("own default first")
	}
}

func TestPresets(t *testing.T) {
	ids := map[string]bool{}
	for _, p := range Presets() {
		ids[p.ID] = true
		if p.BaseURL == "" && !p.BaseURLRequired {
			t.Errorf("%s: no base URL and none required", p.ID)
		}
		if p.BaseURL != "" && checkBaseURL(p.BaseURL) != "" {
			t.Errorf("%s: bad preset URL", p.ID)
		}
	}
	for _, want := range []string{"openai", "anthropic", "google", "aws", "xai", "azure", "deepseek", "openrouter", "ollama", "lmstudio", "vllm", "litellm", "custom"} {
		if !ids[want] {
			t.Errorf("preset %s missing", want)
		}
	}
	p := Presets()
	p[0].ExampleModels[0] = "changed"
	if Presets()[0].ExampleModels[0] == "changed" {
		t.Fatal("Presets hands out its own slices")
	}
	if _, ok := PresetFor(" OpenRouter "); !ok {
		t.Fatal("PresetFor ignores case and spaces")
	}
}

func TestEndpointTrustFollowsItsWriter(t *testing.T) {
	st := NewStore(testDB(t), sealer(t, 1), &Settings{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "m"})
	ctx := context.Background()
	alice := UserOwner("alice")
	custom := func(name, url string) Change {
		return Change{Name: ptr(name), Provider: ptr("custom"), BaseURL: ptr(url), Model: ptr("m"), IsDefault: ptr(false)}
	}
	for _, url := range []string{"http://127.0.0.1:8080/v1", "http://10.1.2.3/v1", "http://169.254.169.254/latest",
		"http://[::1]/v1", "http://localhost:11434/v1"} {
		_, err := st.Create(ctx, alice, custom("internal", url))
		if p := problems(t, err); !strings.Contains(p, "may only reach public addresses") || !strings.Contains(p, "--llm-allow-hosts") {
			t.Errorf("%s: %s", url, p)
		}
	}
	if rows, _ := st.List(ctx, alice); len(rows) != 0 {
		t.Fatalf("refused configurations were stored: %d", len(rows))
	}

	// A name is not resolved when saved; the connection is checked at turn time instead.
	public, err := st.Create(ctx, alice, custom("public", "https://llm.example.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(ctx, public.ID); s.Trusted {
		t.Fatal("a regular user's endpoint is trusted")
	}

	// A superadmin may point anyone's configuration at the server's own network.
	local := custom("local", "http://127.0.0.1:11434/v1")
	local.WriterIsSuperadmin = true
	admin, err := st.Create(ctx, alice, local)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(ctx, admin.ID); !s.Trusted {
		t.Fatal("a superadmin's endpoint is not trusted")
	}
	// The user may change other settings; the endpoint stays the superadmin's.
	if _, err := st.Update(ctx, alice, admin.ID, nil, Change{Temperature: ptr(0.2), BaseURL: ptr("http://127.0.0.1:11434/v1/")}); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(ctx, admin.ID); !s.Trusted {
		t.Fatal("trust lost on a change that kept the endpoint")
	}
	// Re-pointing it herself is hers again, and checked.
	if _, err := st.Update(ctx, alice, admin.ID, nil, Change{BaseURL: ptr("http://127.0.0.2:11434/v1")}); err == nil {
		t.Fatal("a regular user re-pointed a trusted configuration at loopback")
	}
	if _, err := st.Update(ctx, alice, admin.ID, nil, Change{BaseURL: ptr("https://llm.example.com/v1")}); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(ctx, admin.ID); s.Trusted {
		t.Fatal("a user's new endpoint kept the superadmin's trust")
	}

	group, err := st.Create(ctx, GroupOwner("staff"), local)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Load(ctx, group.ID); !s.Trusted {
		t.Fatal("a group configuration is not trusted")
	}
	if s, _ := st.Load(ctx, ""); !s.Trusted {
		t.Fatal("the server default is not trusted")
	}

	// The operator widens the policy.
	wide, err := egress.New([]string{"10.0.0.0/8", "localhost"}, false)
	if err != nil {
		t.Fatal(err)
	}
	st.WithEgress(wide)
	for _, url := range []string{"http://10.1.2.3/v1", "http://localhost:11434/v1"} {
		if _, err := st.Create(ctx, alice, custom("lan", url)); err != nil {
			t.Errorf("%s with --llm-allow-hosts: %v", url, err)
		}
	}
	if _, err := st.Create(ctx, alice, custom("lan", "http://192.168.0.9/v1")); err == nil {
		t.Error("an address outside the allowed hosts was accepted")
	}
}

// groupsFake is the GNS3 of the group cache tests: alice, in group lab, and bob, in none; and
// the server's default configuration, so that a user without one of their own gets a model.
func groupsFake(t *testing.T) (fake *fakegns3.Server, server *gns3.Server, def *Settings, aliceID, bobID string) {
	t.Helper()
	fake = fakegns3.New(t)
	aliceID = fake.AddUser("alice", "tok-alice", false)
	fake.AddGroup("alice", "lab")
	bobID = fake.AddUser("bob", "tok-bob", false)
	server = gns3.NewServer(fake.URL, 5*time.Second)
	def = &Settings{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKey: "sk-server"}
	return fake, server, def, aliceID, bobID
}

// With the group cache, a user's turns ask GNS3 for their groups once per TTL; a cached answer
// is theirs only.
func TestChooseRemembersGroupsWithCache(t *testing.T) {
	fake, server, def, aliceID, bobID := groupsFake(t)
	ctx := context.Background()
	st := NewStore(testDB(t), sealer(t, 1), def).WithGroupCache(time.Minute)
	for i := 0; i < 3; i++ {
		if _, err := st.Choose(ctx, aliceID, server.WithToken("tok-alice")); err != nil {
			t.Fatal(err)
		}
	}
	if got := fake.Count(fakegns3.OpUserGroups); got != 1 {
		t.Fatalf("three turns asked GNS3 for groups %d times, want 1", got)
	}
	if _, err := st.Choose(ctx, bobID, server.WithToken("tok-bob")); err != nil {
		t.Fatal(err)
	}
	if got := fake.Count(fakegns3.OpUserGroups); got != 2 {
		t.Fatalf("bob's groups must be his own read: %d reads", got)
	}
	fake.FailNext(fakegns3.OpUserGroups, "", http.StatusInternalServerError, "boom")
	st2 := NewStore(testDB(t), sealer(t, 1), def).WithGroupCache(time.Minute)
	if _, err := st2.Choose(ctx, aliceID, server.WithToken("tok-alice")); err == nil {
		t.Fatal("a failed read is reported")
	}
	if _, err := st2.Choose(ctx, aliceID, server.WithToken("tok-alice")); err != nil {
		t.Fatalf("a failed read is not remembered: %v", err)
	}
}

// WarmGroups fills the turn-time cache, so the turn's Choose asks GNS3 nothing more; a user with
// a default of their own needs no groups, and none are read for them.
func TestWarmGroupsFillsTheCacheOnlyWhenNeeded(t *testing.T) {
	fake, server, def, aliceID, bobID := groupsFake(t)
	ctx := context.Background()
	st := NewStore(testDB(t), sealer(t, 1), def).WithGroupCache(time.Minute)

	st.WarmGroups(ctx, aliceID, server.WithToken("tok-alice"))
	if got := fake.Count(fakegns3.OpUserGroups); got != 1 {
		t.Fatalf("warming read the groups %d times, want 1", got)
	}
	if _, err := st.Choose(ctx, aliceID, server.WithToken("tok-alice")); err != nil {
		t.Fatal(err)
	}
	if got := fake.Count(fakegns3.OpUserGroups); got != 1 {
		t.Fatalf("Choose after warming read the groups again (%d reads)", got)
	}

	if _, err := st.Create(ctx, UserOwner(bobID), Change{Name: ptr("mine"), Provider: ptr("openai"), Model: ptr("gpt-4o"), APIKey: ptr(secretKey)}); err != nil {
		t.Fatal(err)
	}
	st.WarmGroups(ctx, bobID, server.WithToken("tok-bob"))
	if got := fake.Count(fakegns3.OpUserGroups); got != 1 {
		t.Fatalf("a user with a default of their own had their groups read (%d reads)", got)
	}
}
