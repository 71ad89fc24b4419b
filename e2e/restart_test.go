package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// killableServe is one `gns3-copilot serve` process of the restart test.
type killableServe struct {
	cmd     *exec.Cmd
	done    chan struct{}
	started time.Time // when the process was running
}

func startKillableServe(t *testing.T, bin string, args []string, logPath string) *killableServe {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "GNS3_COPILOT_LLM_API_KEY="+e2eenv.LLMKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	p := &killableServe{cmd: cmd, done: make(chan struct{}), started: time.Now()}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // serve stops its dev server itself
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitServeAnswering polls the API until it answers an authenticated request or the process exits.
func waitServeAnswering(ctx context.Context, env *e2eenv.Env, p *killableServe) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+env.ChatPath("/sessions"), nil)
		req.Header.Set("Authorization", "Bearer "+e2eenv.UserToken)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("serve exited: %v", p.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Issue 17: `serve` killed with SIGKILL in the middle of a turn (the process, not its dev
// server's group, as a supervisor does) and started again within 100 ms, ten times in a row:
// every restart comes up on the same data directory, and every turn ends with its answer.
func TestServeComesBackAfterSIGKILL(t *testing.T) {
	cli := e2eenv.RequireTemporalCLI(t)
	bin := buildBinary(t)
	const restarts = 10

	g := fakegns3.New(t)
	g.AddUser(e2eenv.Username, e2eenv.UserToken, false)
	projectID := g.AddProject("lab1", fakegns3.Members(e2eenv.Username))
	llm := fakeopenai.New(t)
	llm.RequireAPIKey(e2eenv.LLMKey)
	// Each turn's first model call hangs until serve dies under it; the retry after the
	// restart answers.
	var mu sync.Mutex
	attempts := map[string]int{}
	llm.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Restart test"), true
		}
		// The person's words, before what the copilot tells the model of the lab after them.
		question, _, _ := strings.Cut(req.LastUserText(), "\n")
		mu.Lock()
		attempts[question]++
		n := attempts[question]
		mu.Unlock()
		if n == 1 {
			return fakeopenai.Reply{Content: []string{"Thinking ", "hard"}, Hang: true, HangAfter: 1}, true
		}
		return fakeopenai.Text("Answer to " + question + "."), true
	})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := l.Addr().String()
	l.Close()
	dataDir := t.TempDir()
	t.Cleanup(func() {
		// Runs after every serve is stopped and before the directory is removed: the lock is
		// free only once the dev servers of killed serves have finished shutting down too.
		if l, err := temporaldev.LockDataDir(context.Background(), dataDir, temporaldev.LockOptions{Logger: slog.New(slog.DiscardHandler)}); err == nil {
			l.Release()
		}
	})
	args := []string{"--listen", listen, "--data-dir", dataDir, "--gns3-url", g.URL,
		"--llm-base-url", llm.URL, "--llm-model", "gpt-4o-mini", "--temporal-cli", cli,
		"--temporal-ui-port", "-1", "--log-level", "info",
		// Ten turns of one user run at once here, more than the per-user limits allow.
		"--max-turns-per-user", "0", "--turns-per-minute", "0"}
	env := &e2eenv.Env{T: t, GNS3: g, LLM: llm, URL: "http://" + listen, ProjectID: projectID}
	logPath := filepath.Join(dataDir, "serve.log")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("serve log:\n%s", b)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := startKillableServe(t, bin, args, logPath)
	require.NoError(t, waitServeAnswering(ctx, env, p))

	var sessions []string
	var took []time.Duration
	var maxGap time.Duration
	for i := range restarts {
		question := "turn " + strconv.Itoa(i)
		asked := time.Now()
		s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": question}, "")
		f, err := s.Next()
		require.NoError(t, err)
		require.Equal(t, "turn_started", f.Event)
		sessions = append(sessions, f.Data["session_id"].(string))
		s.Close() // a client that goes away does not stop the turn
		require.NoError(t, llm.WaitHanging(ctx, i+1), "turn %d reaches the model", i)
		t.Logf("turn %d reached the model after %v", i, time.Since(asked).Round(time.Millisecond))

		killed := time.Now()
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		// At once, as a supervisor restarting on exit would: the new serve waits for the
		// data directory itself.
		old := p
		p = startKillableServe(t, bin, args, logPath)
		// The test starts it at once; on a loaded machine fork and exec alone can take longer
		// than the 100 ms the issue names, so only a harness that waits for something fails.
		gap := p.started.Sub(killed)
		require.Less(t, gap, time.Second, "started again at once")
		if gap > maxGap {
			maxGap = gap
		}
		<-old.done
		require.NoError(t, waitServeAnswering(ctx, env, p), "restart %d", i+1)
		took = append(took, time.Since(killed))
		t.Logf("restart %d answered after %v", i+1, took[i].Round(time.Millisecond))
	}

	waited := time.Now()
	defer func() {
		t.Logf("the turns finished %v after the last restart", time.Since(waited).Round(time.Millisecond))
	}()
	for i, id := range sessions {
		want := fmt.Sprintf("Answer to turn %d.", i)
		for {
			code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+id+"/history"), nil)
			require.Equal(t, http.StatusOK, code, string(body))
			var hist struct {
				Messages []struct{ Role, Content string }
			}
			require.NoError(t, json.Unmarshal(body, &hist))
			if n := len(hist.Messages); n == 2 && hist.Messages[1].Content == want {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("turn %d did not finish: %s", i, body)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, string(body), `"running":true`, "every turn has ended")

	sorted := slices.Clone(took)
	slices.Sort(sorted)
	t.Logf("restart after SIGKILL until the API answers, %d restarts: p50 %v, max %v (new process started at most %v after the kill)", restarts,
		sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), maxGap.Round(time.Millisecond))
}
