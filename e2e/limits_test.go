package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
)

// withLimits starts the copilot with per-user limits (e2eenv leaves them off).
func withLimits(t *testing.T, maxRunning, perMinute int, dailyTokens int64) *e2eenv.Env {
	t.Helper()
	return e2eenv.Start(t, e2eenv.Options{Configure: func(c *app.Config) {
		c.MaxTurnsPerUser, c.TurnsPerMinute, c.DailyTokenBudget = maxRunning, perMinute, dailyTokens
	}})
}

func requireRetryAfter(t *testing.T, h http.Header, atMost int) int {
	t.Helper()
	n, err := strconv.Atoi(h.Get("Retry-After"))
	require.NoError(t, err, "a 429 carries Retry-After in seconds, got %q", h.Get("Retry-After"))
	require.GreaterOrEqual(t, n, 1)
	require.LessOrEqual(t, n, atMost)
	return n
}

// Ten turns started at once, each in a new session, against a limit of four running turns per
// user: four run, six get a 429 with Retry-After, and a finished turn frees a place.
func TestConcurrentTurnsPerUserLimit(t *testing.T) {
	env := withLimits(t, 4, 0, 0)
	// The model never answers, so the turns that start stay running.
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) { return fakeopenai.Reply{Hang: true}, true })

	type answer struct {
		status    int
		header    http.Header
		sessionID string
		body      string
	}
	answers := make([]answer, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.URL+env.ChatPath("/stream"), strings.NewReader(`{"message":"hello"}`))
			req.Header.Set("Authorization", "Bearer "+e2eenv.UserToken)
			req.Header.Set("Content-Type", "application/json")
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers[i].body = err.Error()
				return
			}
			defer resp.Body.Close()
			answers[i].status, answers[i].header = resp.StatusCode, resp.Header
			// A started turn's first frame names its session; a refusal is one JSON object.
			if resp.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(resp.Body)
				answers[i].body = string(body)
				return
			}
			frames := ssetest.NewReader(resp.Body)
			for {
				f, err := frames.Next()
				answers[i].body += f.Data + "\n"
				var started struct {
					SessionID string `json:"session_id"`
				}
				if f.Decode(&started) == nil && started.SessionID != "" {
					answers[i].sessionID = started.SessionID
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()

	var running []string
	refused := 0
	for _, a := range answers {
		switch a.status {
		case http.StatusOK:
			require.NotEmpty(t, a.sessionID, a.body)
			running = append(running, a.sessionID)
		case http.StatusTooManyRequests:
			refused++
			requireRetryAfter(t, a.header, 60)
			require.Contains(t, a.body, "at most 4 at once per user")
		default:
			t.Fatalf("unexpected answer %d: %s", a.status, a.body)
		}
	}
	require.Len(t, running, 4, "turns running at once")
	require.Equal(t, 6, refused)

	// Aborting one frees a place for the next message.
	code, body := env.Do(http.MethodPost, env.ChatPath("/sessions/"+running[0]+"/abort"), nil)
	require.Equal(t, http.StatusAccepted, code, string(body))
	frames := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+running[0]+"/stream"), nil, "").UntilDone(t, true)
	require.Equal(t, "cancelled", frames[len(frames)-1].Data["status"])
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "now?"}, "")
	require.Equal(t, http.StatusOK, s.Status)
	s.Close()
	for _, id := range running[1:] {
		env.Do(http.MethodPost, env.ChatPath("/sessions/"+id+"/abort"), nil)
	}
}

// The rate limit answers 429 with Retry-After; the daily budget counts the tokens of finished
// turns and says when it renews; a superadmin is exempt from both.
func TestTurnRateAndDailyBudget(t *testing.T) {
	env := withLimits(t, 4, 2, 100)
	const bobToken = "bob-token-limits"
	env.GNS3.AddUser("bob", bobToken, false)
	env.GNS3.Grant(env.ProjectID, "bob")
	// Alice's turns cost nothing; Bob's first costs 120 tokens.
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		usage := &fakeopenai.Usage{}
		if !req.Stream {
			return fakeopenai.Reply{Content: []string{"A title"}, Usage: usage}, true
		}
		if strings.Contains(req.LastUserText(), "expensive") {
			usage = &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 20}
		}
		return fakeopenai.Reply{Content: []string{"ok"}, Usage: usage}, true
	})
	send := func(token, msg string) (int, http.Header, string) {
		req, _ := http.NewRequest(http.MethodPost, env.URL+env.ChatPath("/stream"), strings.NewReader(`{"message":"`+msg+`"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		return resp.StatusCode, resp.Header, b.String()
	}

	for i := 0; i < 2; i++ {
		code, _, body := send(e2eenv.UserToken, "hello")
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, body, `"status":"completed"`)
	}
	code, h, body := send(e2eenv.UserToken, "hello")
	require.Equal(t, http.StatusTooManyRequests, code, body)
	requireRetryAfter(t, h, 30) // two turns a minute: one comes back within 30 s
	require.Contains(t, body, "at most 2 turns a minute")

	code, _, body = send(bobToken, "expensive")
	require.Equal(t, http.StatusOK, code, body)
	code, h, body = send(bobToken, "cheap")
	require.Equal(t, http.StatusTooManyRequests, code, body)
	requireRetryAfter(t, h, 24*3600)
	require.Contains(t, body, "daily budget of 100 tokens (120 so far today)")
	require.Contains(t, body, "renews at midnight UTC")

	// The superadmin is exempt unless the operator says otherwise.
	for i := 0; i < 3; i++ {
		code, _, body := send(fakegns3.AdminToken, "expensive")
		require.Equal(t, http.StatusOK, code, body)
	}
}
