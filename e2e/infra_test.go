package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// While nothing else is sent (a model thinking before its first token), the stream carries
// heartbeats, so proxies do not cut it.
func TestSilentTurnsSendHeartbeats(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Heartbeat: 50 * time.Millisecond})
	env.LLM.SetHandler(titleReplies("t"))
	env.LLM.Enqueue(fakeopenai.Reply{Content: []string{"late"}, FirstChunkDelay: 600 * time.Millisecond})
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "think"}, "").UntilDone(t, false)
	beats := 0
	for i, f := range frames {
		if f.Event != "heartbeat" {
			continue
		}
		beats++
		require.Equal(t, frames[0].Data["session_id"], f.Data["session_id"])
		require.Equal(t, frames[i-1].ID, f.ID, "a heartbeat repeats the last event id, so resuming is unaffected")
	}
	require.GreaterOrEqual(t, beats, 3)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
}

// The same service on PostgreSQL instead of SQLite: configuration only.
func TestTurnOnPostgres(t *testing.T) {
	dsn, db := testdb.Postgres(t)
	env := e2eenv.Start(t, e2eenv.Options{DatabaseURL: dsn})
	env.LLM.SetHandler(titleReplies("On Postgres"))
	env.LLM.Enqueue(fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: "{}"}), fakeopenai.Text("Stored in Postgres."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	sessions := sessionsOf(t, env, e2eenv.UserToken)
	require.Len(t, sessions, 1)
	require.EqualValues(t, 4, sessions[0]["message_count"])
	require.Equal(t, "On Postgres", sessions[0]["title"])

	var n, forModel int64
	require.NoError(t, db.Table("chat_messages").Count(&n).Error)
	require.NoError(t, db.Table("chat_messages").Where("model_context").Count(&forModel).Error)
	require.EqualValues(t, 5, n, "the transcript is in the PostgreSQL schema")
	require.EqualValues(t, 1, forModel, "with the lab the model was shown")
}
