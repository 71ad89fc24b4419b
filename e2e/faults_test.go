package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// chatDB opens the service's own SQLite database a second time, as an operator's tool would.
func chatDB(t *testing.T, env *e2eenv.Env) *models.ChatRepository {
	t.Helper()
	db, err := models.Open(env.Config.DatabaseURL, env.Config.DataDir)
	require.NoError(t, err)
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return models.NewChatRepository(db)
}

// leaveStaleTurn creates what an API that died between creating a turn and starting its
// workflow leaves behind: a running turn, a minute old, whose workflow never started.
func leaveStaleTurn(t *testing.T, env *e2eenv.Env, repo *models.ChatRepository, sessionID, userID string) *models.ChatTurn {
	t.Helper()
	past := &models.ChatRepository{DB: repo.DB, Now: func() time.Time { return time.Now().Add(-time.Minute).UTC() }}
	_, turn, _, err := past.StartTurn(context.Background(), models.StartTurnParams{SessionID: sessionID, UserID: userID,
		ProjectID: env.ProjectID, Message: "lost message", Mode: "teaching_assistant", InitialTitle: "x",
		WorkflowID: workflows.WorkflowID})
	require.NoError(t, err)
	return turn
}

// A session whose row says a turn is running while its workflow has ended never answers 409
// forever: the abort, or the next message, notices, closes the turn as failed with a clear
// message, and goes on.
func TestStaleRunningTurnIsClosedByTheNextMessageOrAbort(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Stale"))
	env.LLM.Enqueue(fakeopenai.Text("First answer."), fakeopenai.Text("Second answer."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "").UntilDone(t, true)
	sessionID, firstTurn := startedIDs(t, frames)
	repo := chatDB(t, env)
	first, err := repo.Turn(context.Background(), firstTurn)
	require.NoError(t, err)

	// 1. The API died before starting the workflow; the user sends the next message.
	stale := leaveStaleTurn(t, env, repo, sessionID, first.UserID)
	code, body := env.Do(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "again", "session_id": sessionID})
	require.Equal(t, http.StatusOK, code, "the next message goes on: %s", body)
	closed, err := repo.Turn(context.Background(), stale.ID)
	require.NoError(t, err)
	require.Equal(t, models.TurnFailed, closed.Status)
	require.Contains(t, closed.Error, "stopped answering this message without finishing it")

	// Its stream, rejoined, says so and ends.
	joined := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, "")
	require.Equal(t, http.StatusOK, joined.Status)
	latest := joined.UntilDone(t, true)
	require.Equal(t, "completed", latest[len(latest)-1].Data["status"], "the latest turn is the new message's")

	// 2. The same leftover, and this time the user presses stop.
	stale = leaveStaleTurn(t, env, repo, sessionID, first.UserID)
	code, body = env.Do(http.MethodPost, env.ChatPath("/sessions/"+sessionID+"/abort"), nil)
	require.Equal(t, http.StatusAccepted, code, string(body))
	var ab map[string]any
	require.NoError(t, json.Unmarshal(body, &ab))
	require.Equal(t, "closed", ab["status"])
	closed, err = repo.Turn(context.Background(), stale.ID)
	require.NoError(t, err)
	require.Equal(t, models.TurnFailed, closed.Status)
	rejoin := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, "").UntilDone(t, true)
	require.Equal(t, []string{"error", "done"}, e2eenv.Types(rejoin))
	require.Equal(t, "failed", rejoin[1].Data["status"])

	// 3. A workflow that ended while its row stayed running (terminated here, as a finalizer
	// that gave up leaves it): no grace period, the next message closes it at once.
	env.LLM.Enqueue(fakeopenai.Reply{Content: []string{"never ", "ends"}, Hang: true, HangAfter: 1}, fakeopenai.Text("Third answer."))
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hang", "session_id": sessionID}, "")
	f, err := s.Next()
	require.NoError(t, err)
	hangTurn := f.Data["turn_id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, env.LLM.WaitHanging(ctx, 1))
	require.NoError(t, env.Service.Temporal().TerminateWorkflow(ctx, workflows.WorkflowID(sessionID, hangTurn), "", "test: the turn's workflow ends without finalizing"))
	s.Close()
	frames = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "go on", "session_id": sessionID}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])
	closed, err = repo.Turn(context.Background(), hangTurn)
	require.NoError(t, err)
	require.Equal(t, models.TurnFailed, closed.Status)
}
