package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func startedIDs(t *testing.T, frames []e2eenv.Frame) (sessionID, turnID string) {
	t.Helper()
	require.Equal(t, "turn_started", frames[0].Event)
	return frames[0].Data["session_id"].(string), frames[0].Data["turn_id"].(string)
}

// closedHistory waits for a workflow to close and returns its whole history. A turn's last
// steps are local activities, recorded when its last workflow task completes, just after the
// client read done: read earlier, the history would not hold them yet.
func closedHistory(t *testing.T, env *e2eenv.Env, workflowID string) *historypb.History {
	return workflowHistory(t, env, workflowID, true)
}

// workflowHistory returns a workflow's history so far, or once it has closed when untilClosed.
func workflowHistory(t *testing.T, env *e2eenv.Env, workflowID string, untilClosed bool) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if untilClosed {
		// A long poll for the close event returns once the workflow has closed.
		closing := env.Service.Temporal().GetWorkflowHistory(ctx, workflowID, "", true, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
		for closing.HasNext() {
			_, err := closing.Next()
			require.NoError(t, err, "waiting for %s to close", workflowID)
		}
	}
	hist := &historypb.History{}
	iter := env.Service.Temporal().GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	return hist
}

// requireSecretsNotInHistory searches every event of a workflow's history for
// each secret: in the binary protobuf (payload bytes as they are), in the JSON form (every string
// field) and base64-encoded at each alignment (payloads in the JSON form). A history of minEvents
// events or fewer was not really read.
func requireSecretsNotInHistory(t *testing.T, hist *historypb.History, minEvents int, secrets ...string) {
	t.Helper()
	var events int
	for _, ev := range hist.Events {
		events++
		bin, err := proto.Marshal(ev)
		require.NoError(t, err)
		js, err := protojson.Marshal(ev)
		require.NoError(t, err)
		for _, secret := range secrets {
			require.False(t, bytes.Contains(bin, []byte(secret)), "secret in event %d (%s)", ev.EventId, ev.EventType)
			require.False(t, bytes.Contains(js, []byte(secret)), "secret in event %d JSON", ev.EventId)
			for i := 0; i < 3; i++ { // base64 of the secret at each alignment
				enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", i) + secret))
				require.False(t, bytes.Contains(js, []byte(enc[4*((i+2)/3):len(enc)-4])), "base64 secret in event %d", ev.EventId)
			}
		}
	}
	require.Greater(t, events, minEvents, "the history was read")
}

// The user's GNS3 token and the LLM API key must appear nowhere in the workflow's history:
// not in inputs, results, memo, headers, user metadata or failure text. Nor in the service's
// log, captured at debug level, which must not hold the conversation's text either.
func TestSecretsNeverEnterTemporalHistory(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{LogLevel: "debug"})
	env.LLM.SetHandler(titleReplies("Secrets"))
	const message, answer = "show me the rack-7731 wiring", "The rack-9044 answer"
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`}),
		fakeopenai.Text(answer),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": message}, "").UntilDone(t, true)
	sessionID, turnID := startedIDs(t, frames)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])

	// The tool really ran with the user's token, so the secret was in play during the turn.
	req, ok := env.LLM.LastRequest()
	require.True(t, ok)
	require.Equal(t, "Bearer "+e2eenv.LLMKey, req.Authorization)

	requireSecretsNotInHistory(t, closedHistory(t, env, workflows.WorkflowID(sessionID, turnID)), 10, e2eenv.UserToken, e2eenv.LLMKey)

	logs := env.Logs()
	require.Contains(t, logs, turnID, "the log was captured")
	for _, secret := range []string{e2eenv.UserToken, e2eenv.LLMKey, "rack-7731", "rack-9044"} {
		require.NotContains(t, logs, secret)
	}
}

// A client that drops its stream and rejoins with Last-Event-ID gets exactly the frames it
// missed, and a client that rejoins without an id gets the whole turn.
func TestResumeWithLastEventIDReplaysExactlyTheMissedFrames(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Resume"))
	env.LLM.Enqueue(fakeopenai.Reply{Content: fakeopenai.Words("one two three four five six seven eight nine ten"), ChunkDelay: 20 * time.Millisecond})

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "count"}, "")
	var seen []e2eenv.Frame
	for len(seen) < 4 {
		f, err := s.Next()
		require.NoError(t, err)
		seen = append(seen, f)
	}
	s.Close() // the browser goes away mid-turn; the turn goes on
	sessionID, _ := startedIDs(t, seen)
	lastID := seen[len(seen)-1].ID

	rest := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, lastID).UntilDone(t, true)
	full := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, "").UntilDone(t, true)

	require.Equal(t, len(full), len(seen)+len(rest))
	for i, f := range seen {
		require.Equal(t, full[i].ID, f.ID)
		require.Equal(t, full[i].Raw, f.Raw)
	}
	for i, f := range rest {
		require.Equal(t, full[len(seen)+i].ID, f.ID, "frame %d", i)
		require.Equal(t, full[len(seen)+i].Raw, f.Raw)
	}
	var text strings.Builder
	for _, f := range full {
		if f.Event == "content" {
			text.WriteString(f.Data["content"].(string))
		}
	}
	require.Equal(t, "one two three four five six seven eight nine ten", text.String())

	// A bad Last-Event-ID is a client error, not a replay from somewhere.
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream?last_event_id=banana"), nil)
	require.Equal(t, http.StatusBadRequest, code, string(body))
}

// Abort cancels the running turn: the stream ends with done (cancelled), and the partial text
// the user saw is kept in the transcript.
func TestAbortEndsTheTurnAndKeepsThePartialText(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.Enqueue(fakeopenai.Reply{Content: []string{"Partial ", "answer ", "never finished"}, Hang: true, HangAfter: 2})

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "talk slowly"}, "")
	frames := s.Until(t, e2eenv.ContentReaches("Partial answer "))
	sessionID, _ := startedIDs(t, frames)

	require.Equal(t, "talk slowly", frames[0].Data["message"], "turn_started carries the user's message")
	require.Equal(t, true, sessionsOf(t, env, e2eenv.UserToken)[0]["running"])

	// While it runs, a second message to the session is refused.
	code, body := env.Do(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello?", "session_id": sessionID})
	require.Equal(t, http.StatusConflict, code, string(body))

	code, body = env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/abort"), nil)
	require.Equal(t, http.StatusAccepted, code, string(body))

	rest := s.UntilDone(t, true)
	done := rest[len(rest)-1]
	require.Equal(t, true, done.Data["cancelled"])
	require.Equal(t, "cancelled", done.Data["status"])

	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code)
	var hist struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &hist))
	require.Len(t, hist.Messages, 2)
	require.Equal(t, "talk slowly", hist.Messages[0].Content)
	require.Equal(t, "assistant", hist.Messages[1].Role)
	require.Equal(t, "Partial answer ", hist.Messages[1].Content)
	sess := sessionsOf(t, env, e2eenv.UserToken)[0]
	require.Equal(t, false, sess["running"])
	require.EqualValues(t, 1, sess["llm_calls_count"], "the stopped call still counts as a call")
	require.EqualValues(t, 2, sess["message_count"])

	// Nothing runs any more: a second abort is a conflict, and the session takes a new message.
	code, _ = env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/abort"), nil)
	require.Equal(t, http.StatusConflict, code)
	env.LLM.SetHandler(titleReplies("x"))
	env.LLM.Enqueue(fakeopenai.Text("Back again."))
	next := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "again", "session_id": sessionID}, "").UntilDone(t, true)
	require.Equal(t, "completed", next[len(next)-1].Data["status"])
}

// The seed's first error cases: a broken LLM configuration fails the turn with a message that
// says which setting to check, and the stream still ends with one done.
func TestProviderRejectingTheKeyFailsTheTurnClearly(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.Enqueue(fakeopenai.Reply{Error: fakeopenai.InvalidAPIKey()})
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "").UntilDone(t, true)
	require.Equal(t, []string{"turn_started", "error", "done"}, e2eenv.Types(frames))
	require.Contains(t, frames[1].Data["error"], "api_key")
	require.Equal(t, "failed", frames[2].Data["status"])
	require.Equal(t, 1, env.LLM.Stats().Requests, "a rejected key is not retried")
}
