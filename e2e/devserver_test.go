package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// Issue 12: the Temporal dev server that serve supervises is killed while a turn waits for the
// model. serve starts it again on the same database and ports, its client and worker carry on,
// the turn finishes, and new turns work.
func TestServeRestartsItsKilledDevServer(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	arrived := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Dev server test"), true
		}
		// The person's words, before what the copilot tells the model of the lab after them.
		asked, _, _ := strings.Cut(req.LastUserText(), "\n")
		if asked == "before the crash" {
			once.Do(func() { close(arrived) })
			<-release // the model is still thinking while the dev server dies
		}
		return fakeopenai.Text("Answered: " + asked), true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "before the crash"}, "")
	first, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, "turn_started", first.Event)
	sessionID := first.Data["session_id"].(string)
	s.Close()
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("the turn never called the model")
	}

	old := env.Service.DevServerPID()
	require.NotZero(t, old)
	killed := time.Now()
	require.NoError(t, syscall.Kill(old, syscall.SIGKILL))
	for pid := env.Service.DevServerPID(); pid == old || pid == 0; pid = env.Service.DevServerPID() {
		select {
		case <-ctx.Done():
			t.Fatal("serve did not start its dev server again")
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Logf("dev server back after %v", time.Since(killed).Round(time.Millisecond))
	close(release)

	rejoin := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, "")
	go func() { <-ctx.Done(); rejoin.Close() }()
	frames := rejoin.UntilDone(t, true)
	done := frames[len(frames)-1]
	require.Equal(t, "completed", done.Data["status"], "%v", done.Data)
	t.Logf("the turn in flight finished %v after the kill", time.Since(killed).Round(time.Millisecond))

	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code)
	var hist struct {
		Messages []struct{ Role, Content string }
	}
	require.NoError(t, json.Unmarshal(body, &hist))
	require.Len(t, hist.Messages, 2)
	require.Equal(t, "Answered: before the crash", hist.Messages[1].Content)

	next := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "after the crash"}, "").UntilDone(t, true)
	require.Equal(t, "completed", next[len(next)-1].Data["status"])
}
