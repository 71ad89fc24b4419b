package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

type apiError struct {
	Message string `json:"message"`
}

func requireError(t *testing.T, code int, body []byte, want int, contains string) {
	t.Helper()
	require.Equal(t, want, code, string(body))
	var e apiError
	require.NoError(t, json.Unmarshal(body, &e), "errors are JSON: %s", body)
	require.NotEmpty(t, e.Message)
	if contains != "" {
		require.Contains(t, strings.ToLower(e.Message), strings.ToLower(contains))
	}
}

// newSession runs one short turn and returns its session id.
func newSession(t *testing.T, env *e2eenv.Env, token, message string) string {
	t.Helper()
	env.LLM.Enqueue(fakeopenai.Text("ok"))
	code, body := env.DoAs(token, http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": message})
	require.Equal(t, http.StatusOK, code, string(body))
	i := strings.Index(string(body), `"session_id":"`)
	require.Positive(t, i, string(body))
	return string(body[i+14 : i+14+36])
}

func sessionsOf(t *testing.T, env *e2eenv.Env, token string) []map[string]any {
	t.Helper()
	code, body := env.DoAs(token, http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var out []map[string]any
	require.NoError(t, json.Unmarshal(body, &out))
	return out
}

func TestChatAPIRejectsBadInputClearlyAndChangesNothing(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("t"))
	const bobToken = "bob-token-1234"
	env.GNS3.AddUser("bob", bobToken, false)
	env.GNS3.Grant(env.ProjectID, "bob")
	aliceSession := newSession(t, env, e2eenv.UserToken, "first")
	bobSession := newSession(t, env, bobToken, "bob's")
	before := sessionsOf(t, env, e2eenv.UserToken)
	require.Len(t, before, 1)

	stream := env.ChatPath("/stream")
	t.Run("auth", func(t *testing.T) {
		code, body := env.DoAs("", http.MethodGet, env.ChatPath("/sessions"), nil)
		requireError(t, code, body, http.StatusUnauthorized, "token")
		code, body = env.DoAs("not-a-real-token", http.MethodGet, env.ChatPath("/sessions"), nil)
		requireError(t, code, body, http.StatusUnauthorized, "sign in")
	})
	t.Run("project", func(t *testing.T) {
		code, body := env.Do(http.MethodGet, "/v3/projects/not-a-uuid/chat/sessions", nil)
		requireError(t, code, body, http.StatusUnprocessableEntity, "uuid")
		// GNS3 checks a regular user's privileges before it looks the project up, so only an
		// administrator learns that a project does not exist.
		code, body = env.DoAs(fakegns3.AdminToken, http.MethodGet, "/v3/projects/6b8a2f0e-1c1d-4c52-9a43-9d7a1e3c2b10/chat/sessions", nil)
		requireError(t, code, body, http.StatusNotFound, "not found")
		closed := env.GNS3.AddProject("closed lab", fakegns3.Closed(), fakegns3.Members(e2eenv.Username))
		code, body = env.Do(http.MethodPost, "/v3/projects/"+closed+"/chat/stream", map[string]any{"message": "hi"})
		requireError(t, code, body, http.StatusForbidden, "opened")
		private := env.GNS3.AddProject("someone else's lab")
		code, body = env.Do(http.MethodGet, "/v3/projects/"+private+"/chat/sessions", nil)
		requireError(t, code, body, http.StatusForbidden, "access")
	})
	t.Run("stream body", func(t *testing.T) {
		cases := []struct {
			name string
			body any
			code int
			msg  string
		}{
			{"malformed JSON", `{"message": "hi"`, http.StatusBadRequest, "not valid json"},
			{"not an object", `[1,2]`, http.StatusUnprocessableEntity, "object"},
			{"empty body", ``, http.StatusBadRequest, "empty"},
			{"message of the wrong type", map[string]any{"message": 42}, http.StatusUnprocessableEntity, `"message" must be a string`},
			{"missing message", map[string]any{"session_id": aliceSession}, http.StatusUnprocessableEntity, "message is required"},
			{"blank message", map[string]any{"message": "   "}, http.StatusUnprocessableEntity, "must not be empty"},
			{"message too long", map[string]any{"message": strings.Repeat("x", 40<<10)}, http.StatusRequestEntityTooLarge, "limit"},
			{"body far too large", `{"message":"` + strings.Repeat("x", 1<<20) + `"}`, http.StatusRequestEntityTooLarge, "larger than"},
			{"session id not a UUID", map[string]any{"message": "hi", "session_id": "abc"}, http.StatusUnprocessableEntity, "uuid"},
			{"another user's session", map[string]any{"message": "hi", "session_id": bobSession}, http.StatusNotFound, "not found"},
			{"temperature out of range", map[string]any{"message": "hi", "temperature": 2.5}, http.StatusUnprocessableEntity, "temperature"},
			{"temperature of the wrong type", map[string]any{"message": "hi", "temperature": "hot"}, http.StatusUnprocessableEntity, `"temperature" must be a number`},
			{"unknown mode", map[string]any{"message": "hi", "mode": "voice"}, http.StatusUnprocessableEntity, "mode"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				code, body := env.Do(http.MethodPost, stream, c.body)
				requireError(t, code, body, c.code, c.msg)
			})
		}
	})
	t.Run("another user's session is not found on every route", func(t *testing.T) {
		base := env.ChatPath("/sessions/" + bobSession)
		for _, r := range []struct{ method, path string }{
			{http.MethodGet, base + "/history"}, {http.MethodPatch, base}, {http.MethodDelete, base},
			{http.MethodPut, base + "/pin"}, {http.MethodDelete, base + "/pin"}, {http.MethodPost, base + "/abort"},
			{http.MethodGet, base + "/stream"}, {http.MethodGet, base + "/exercise"}, {http.MethodPost, base + "/exercise/check"},
			{http.MethodPost, base + "/exercise/hint"}, {http.MethodPost, base + "/exercise/give-up"},
		} {
			var body any
			if r.method == http.MethodPatch {
				body = map[string]any{"title": "mine now"}
			}
			code, resp := env.Do(r.method, r.path, body)
			requireError(t, code, resp, http.StatusNotFound, "not found")
		}
		// Bob still has his session, untouched.
		bobs := sessionsOf(t, env, bobToken)
		require.Len(t, bobs, 1)
		require.Equal(t, "bob's", bobs[0]["title"])
	})
	t.Run("rename limits", func(t *testing.T) {
		path := env.ChatPath("/sessions/" + aliceSession)
		code, body := env.Do(http.MethodPatch, path, map[string]any{"title": ""})
		requireError(t, code, body, http.StatusUnprocessableEntity, "1 to 255")
		code, body = env.Do(http.MethodPatch, path, map[string]any{"title": strings.Repeat("é", 256)})
		requireError(t, code, body, http.StatusUnprocessableEntity, "1 to 255")
		code, body = env.Do(http.MethodPatch, path, map[string]any{"title": 7})
		requireError(t, code, body, http.StatusUnprocessableEntity, "string")
		code, body = env.Do(http.MethodPatch, path, map[string]any{"title": strings.Repeat("é", 255)})
		require.Equal(t, http.StatusOK, code, string(body))
	})
	t.Run("history limit", func(t *testing.T) {
		code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+aliceSession+"/history?limit=0"), nil)
		requireError(t, code, body, http.StatusUnprocessableEntity, "limit")
		code, body = env.Do(http.MethodGet, env.ChatPath("/sessions/"+aliceSession+"/history?limit=1"), nil)
		require.Equal(t, http.StatusOK, code)
		var h struct{ Messages []map[string]any }
		require.NoError(t, json.Unmarshal(body, &h))
		require.Len(t, h.Messages, 1)
		require.Equal(t, "assistant", h.Messages[0]["role"], "the last message")
	})
	t.Run("unknown API route", func(t *testing.T) {
		code, body := env.Do(http.MethodGet, "/v3/nothing-here", nil)
		requireError(t, code, body, http.StatusNotFound, "no such api route")
	})

	after := sessionsOf(t, env, e2eenv.UserToken)
	require.Len(t, after, 1, "no failed request created a session")
	require.Equal(t, before[0]["message_count"], after[0]["message_count"], "no failed request added a message")
}

func TestSessionsArePinnedFirstThenMostRecentAndDeletable(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("t"))
	a := newSession(t, env, e2eenv.UserToken, "a")
	b := newSession(t, env, e2eenv.UserToken, "b")
	c := newSession(t, env, e2eenv.UserToken, "c")
	order := func() []string {
		var ids []string
		for _, s := range sessionsOf(t, env, e2eenv.UserToken) {
			ids = append(ids, s["thread_id"].(string))
		}
		return ids
	}
	require.Equal(t, []string{c, b, a}, order())

	code, body := env.Do(http.MethodPut, env.ChatPath("/sessions/"+a+"/pin"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var s map[string]any
	require.NoError(t, json.Unmarshal(body, &s))
	require.Equal(t, true, s["pinned"])
	require.Equal(t, []string{a, c, b}, order())

	// A renamed title is the user's: a later turn does not replace it.
	code, _ = env.Do(http.MethodPatch, env.ChatPath("/sessions/"+b), map[string]any{"title": "My OSPF lab"})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{a, b, c}, order(), "renaming counts as an update")
	env.LLM.Enqueue(fakeopenai.Text("sure"))
	code, _ = env.Do(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "more", "session_id": b})
	require.Equal(t, http.StatusOK, code)
	for _, s := range sessionsOf(t, env, e2eenv.UserToken) {
		if s["thread_id"] == b {
			require.Equal(t, "My OSPF lab", s["title"])
			require.EqualValues(t, 4, s["message_count"])
		}
	}

	code, body = env.Do(http.MethodDelete, env.ChatPath("/sessions/"+a+"/pin"), nil)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(body, &s))
	require.Equal(t, false, s["pinned"])

	code, _ = env.Do(http.MethodDelete, env.ChatPath("/sessions/"+c), nil)
	require.Equal(t, http.StatusNoContent, code)
	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions/"+c+"/history"), nil)
	requireError(t, code, body, http.StatusNotFound, "not found")
	require.NotContains(t, order(), c)

	// The same API answers under the prefix newer GNS3 releases use.
	code, body = env.Do(http.MethodGet, "/v3/copilot/projects/"+env.ProjectID+"/chat/sessions", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list []map[string]any
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list, 2)
}

func TestNoLLMConfiguredIsAClearBadRequest(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{NoLLM: true})
	code, body := env.Do(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"})
	requireError(t, code, body, http.StatusBadRequest, "llm")
	require.Empty(t, sessionsOf(t, env, e2eenv.UserToken))
}
