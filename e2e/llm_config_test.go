package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Alice's own model: a second provider with its own key, model, temperature and output limit.
const (
	aliceKey         = "sk-alice-own-key-9d2e6c41-never-returned"
	aliceModel       = "alice-model-7b"
	aliceTemperature = 0.35
	aliceMaxTokens   = 777
)

// myUserID asks the copilot who the token's user is, as the chat page does.
func myUserID(t testing.TB, env *e2eenv.Env) string {
	t.Helper()
	code, body := env.Do(http.MethodGet, "/v3/access/users/me", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var me struct {
		UserID   string `json:"user_id"`
		Username string `json:"username"`
	}
	require.NoError(t, json.Unmarshal(body, &me))
	require.Equal(t, e2eenv.Username, me.Username)
	require.NotEmpty(t, me.UserID)
	return me.UserID
}

// requireNoKey fails when an API answer carries a key in any form a client could read.
func requireNoKey(t *testing.T, body []byte, what string) {
	t.Helper()
	for _, key := range []string{aliceKey, e2eenv.LLMKey} {
		require.NotContains(t, string(body), key, "%s returned an API key", what)
		require.NotContains(t, string(body), base64.StdEncoding.EncodeToString([]byte(key)), "%s returned an encoded API key", what)
	}
}

// createAliceConfig stores Alice's configuration through the API and makes it her default.
func createAliceConfig(t *testing.T, env *e2eenv.Env, userID, baseURL string, temperature float64) string {
	t.Helper()
	base := "/v3/access/users/" + userID + "/llm-model-configs"
	code, body := env.Do(http.MethodPost, base, map[string]any{
		"name": "Alice's own model", "provider": "custom", "base_url": baseURL, "model": aliceModel,
		"api_key": aliceKey, "temperature": temperature, "max_tokens": aliceMaxTokens, "context_limit": 32,
		// Otherwise her first configuration would become her default at once; making it the
		// default is a step of its own here.
		"is_default": false,
	})
	require.Equal(t, http.StatusCreated, code, string(body))
	requireNoKey(t, body, "create")
	var created struct {
		ConfigID string `json:"config_id"`
		Config   struct {
			Model       string  `json:"model"`
			Temperature float64 `json:"temperature"`
			MaxTokens   *int    `json:"max_tokens"`
			APIKey      *string `json:"api_key"`
		} `json:"config"`
		APIKeySet bool `json:"api_key_set"`
		IsDefault bool `json:"is_default"`
	}
	require.NoError(t, json.Unmarshal(body, &created))
	require.NotEmpty(t, created.ConfigID)
	require.Nil(t, created.Config.APIKey, "config.api_key is null in answers")
	require.True(t, created.APIKeySet)
	require.Equal(t, aliceModel, created.Config.Model)
	require.False(t, created.IsDefault)
	code, body = env.Do(http.MethodGet, base+"/default", nil)
	require.Equal(t, http.StatusNotFound, code, "no default yet: %s", body)

	code, body = env.Do(http.MethodPut, base+"/default/"+created.ConfigID, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	requireNoKey(t, body, "set default")
	var def struct {
		IsDefault bool `json:"is_default"`
	}
	require.NoError(t, json.Unmarshal(body, &def))
	require.True(t, def.IsDefault)
	return created.ConfigID
}

// A user's own default configuration decides where her turns go: the model, key, temperature
// and output limit her provider receives are hers, a temperature sent with one message wins
// for that message, the server default model never hears from her turns, and no answer of the
// configuration API ever contains the key.
func TestPerUserLLMConfigDrivesTheTurn(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	own := fakeopenai.New(t)
	own.RequireAPIKey(aliceKey)
	own.SetHandler(titleReplies("Alice's chat"))

	userID := myUserID(t, env)
	configID := createAliceConfig(t, env, userID, own.URL, aliceTemperature)

	// Every read of the configuration API leaves the key out.
	base := "/v3/access/users/" + userID + "/llm-model-configs"
	for _, path := range []string{base, base + "/own", base + "/default", base + "/" + configID} {
		code, body := env.Do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
		requireNoKey(t, body, "GET "+path)
	}
	code, body := env.Do(http.MethodGet, base, nil)
	require.Equal(t, http.StatusOK, code)
	var inherited struct {
		DefaultConfig *struct {
			ConfigID string `json:"config_id"`
			Source   string `json:"source"`
		} `json:"default_config"`
	}
	require.NoError(t, json.Unmarshal(body, &inherited))
	require.NotNil(t, inherited.DefaultConfig)
	require.Equal(t, configID, inherited.DefaultConfig.ConfigID, "her own default is the one her turns use")
	require.Equal(t, "user", inherited.DefaultConfig.Source)

	// First message: her stored settings.
	own.Enqueue(fakeopenai.Text("Hello from Alice's model."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "turn: %v", e2eenv.Types(frames))
	sessionID, turnID := startedIDs(t, frames)

	reqs := streamedRequests(own)
	require.Len(t, reqs, 1)
	first := reqs[0]
	require.Equal(t, aliceModel, first.Model)
	require.Equal(t, "Bearer "+aliceKey, first.Authorization)
	require.NotNil(t, first.Temperature, "her temperature is sent")
	require.InDelta(t, aliceTemperature, *first.Temperature, 1e-6)
	require.NotNil(t, first.MaxTokens, "her max_tokens is honoured")
	require.Equal(t, aliceMaxTokens, *first.MaxTokens)

	// The title call goes to her provider too, with her model and key.
	var titles []fakeopenai.Request
	for _, r := range own.Requests() {
		if !r.Stream {
			titles = append(titles, r)
		}
	}
	require.Len(t, titles, 1)
	require.Equal(t, aliceModel, titles[0].Model)
	require.Equal(t, "Bearer "+aliceKey, titles[0].Authorization)

	// Second message in the same session with a temperature of its own: the request wins.
	own.Enqueue(fakeopenai.Text("Hotter now."))
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/stream"),
		map[string]any{"message": "be creative", "session_id": sessionID, "temperature": 1.3}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	reqs = streamedRequests(own)
	require.Len(t, reqs, 2)
	second := reqs[1]
	require.Equal(t, aliceModel, second.Model)
	require.Equal(t, "Bearer "+aliceKey, second.Authorization)
	require.NotNil(t, second.Temperature)
	require.InDelta(t, 1.3, *second.Temperature, 1e-6, "the request's temperature overrides the stored one")
	require.NotNil(t, second.MaxTokens)
	require.Equal(t, aliceMaxTokens, *second.MaxTokens)
	require.Equal(t, "be creative", second.LastUserText())

	// The server default model never heard of her turns.
	require.Empty(t, streamedRequests(env.LLM), "no streamed request reached the server default model")
	require.Empty(t, env.LLM.Requests(), "not even the title call")

	// Her key appears nowhere in the turn's workflow history.
	requireSecretsNotInHistory(t, closedHistory(t, env, workflows.WorkflowID(sessionID, turnID)), 5, aliceKey)
}

// Temperature 0 is the setting people choose for repeatable answers; it must reach the model as
// 0, whether it is stored in the configuration or sent with the message, rather than being left
// out (which lets the provider apply its own default, 1.0 for OpenAI).
func TestPerUserLLMConfigTemperatureZeroReachesTheModel(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	own := fakeopenai.New(t)
	own.RequireAPIKey(aliceKey)
	own.SetHandler(titleReplies("Deterministic"))
	createAliceConfig(t, env, myUserID(t, env), own.URL, 0)

	own.Enqueue(fakeopenai.Text("Stored zero."), fakeopenai.Text("Request zero."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "stored"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	sessionID, _ := startedIDs(t, frames)
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/stream"),
		map[string]any{"message": "override", "session_id": sessionID, "temperature": 0}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])

	reqs := streamedRequests(own)
	require.Len(t, reqs, 2)
	for i, r := range reqs {
		require.NotNil(t, r.Temperature, "request %d (%q): temperature 0 was left out of the request body", i, r.LastUserText())
		// A fix may send 0 itself or the smallest float32 above it (go-openai omits a zero).
		require.InDelta(t, 0, *r.Temperature, 1e-6)
	}
}
