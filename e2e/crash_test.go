package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// testRedisURL is the test Redis as the service takes it, once it is known to answer.
func testRedisURL(t *testing.T) string {
	return "redis://" + testdb.RedisAddr(t) + "/0"
}

// binary is the real gns3-copilot command, built by the first test that needs it: linking it
// takes seconds, and every test runs the same source.
var binary struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

// buildBinary returns the real gns3-copilot command, built once per run of the e2e tests.
func buildBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "gns3-copilot-e2e-")
		if err != nil {
			binary.err = err
			return
		}
		binary.dir = dir
		bin := filepath.Join(dir, "gns3-copilot")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/gns3-copilot/gns3-copilot/cmd/gns3-copilot").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("%w: %s", err, out)
			return
		}
		binary.path = bin
	})
	require.NoError(t, binary.err, "building the binary")
	return binary.path
}

// startAPIWithoutWorkers starts a Temporal dev server and the service's API alone on it, over
// the test Redis and a fresh data directory (opts' own are replaced); the test runs its
// workers as processes with startWorker on the address it returns, and kills them at will.
func startAPIWithoutWorkers(t *testing.T, ctx context.Context, opts e2eenv.Options) (env *e2eenv.Env, temporalAddr string) {
	t.Helper()
	redisURL := testRedisURL(t)
	cli := e2eenv.RequireTemporalCLI(t)
	dataDir := t.TempDir()
	dev, err := temporaldev.Start(ctx, temporaldev.Options{CLIPath: cli, DataDir: filepath.Join(dataDir, "temporal"), Host: "127.0.0.1", Headless: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Stop() })
	opts.Role, opts.RedisURL, opts.TemporalAddress, opts.DataDir = app.RoleAPI, redisURL, dev.Address(), dataDir
	return e2eenv.Start(t, opts), dev.Address()
}

type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// workerLog is where the test's workers write (worker.log in dataDir), shown if the test fails.
func workerLog(t *testing.T, dataDir string) string {
	logPath := filepath.Join(dataDir, "worker.log")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("worker log:\n%s", b)
		}
	})
	return logPath
}

// startWorker runs a worker process for env, with extra flags after the usual ones (a later flag
// wins, so they may change the server default model).
func startWorker(t *testing.T, bin string, env *e2eenv.Env, temporalAddr, logPath string, extra ...string) *workerProc {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	args := []string{"worker",
		"--temporal-address", temporalAddr, "--redis-url", env.Config.RedisURL, "--data-dir", env.Config.DataDir,
		"--gns3-url", env.GNS3.URL, "--llm-base-url", env.LLM.URL, "--llm-model", "gpt-4o-mini", "--log-level", "info",
		// A worker serves /metrics on --listen: the default port may be taken by any other
		// copilot on the machine, and a worker that cannot listen exits.
		"--listen", "127.0.0.1:0"}
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Env = append(os.Environ(), "GNS3_COPILOT_LLM_API_KEY="+e2eenv.LLMKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	w := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(w.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// A worker killed with SIGKILL in the middle of a model call loses nothing: started again, it
// (or any worker) retries the call, the turn finishes, and the client that rejoins the stream
// sees the retry and the end.
func TestKilledWorkerFinishesTheTurnAfterRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{})
	bin := buildBinary(t)
	env.LLM.SetHandler(titleReplies("Crash test"))
	env.LLM.Enqueue(
		fakeopenai.Reply{Content: []string{"Working ", "on ", "it ", "slowly"}, Hang: true, HangAfter: 2},
		fakeopenai.Reply{Content: fakeopenai.Words("Recovered answer after the crash.")},
	)
	logPath := workerLog(t, env.Config.DataDir)
	w1 := startWorker(t, bin, env, temporalAddr, logPath)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "survive this"}, "")
	seen := s.Until(t, e2eenv.ContentReaches("Working on "))
	require.NoError(t, env.LLM.WaitHanging(ctx, 1))
	sessionID, _ := startedIDs(t, seen)
	s.Close()

	require.NoError(t, w1.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-w1.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not die")
	}
	startWorker(t, bin, env, temporalAddr, logPath)

	rejoin := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, seen[len(seen)-1].ID)
	go func() { <-ctx.Done(); rejoin.Close() }() // a stuck turn fails the test instead of hanging it
	rest := rejoin.UntilDone(t, true)
	types := e2eenv.Types(rest)
	require.Contains(t, types, "retry", "the client is told to drop the partial text: %v", types)
	var after strings.Builder
	retried := false
	for _, f := range rest {
		if f.Event == "retry" {
			retried = true
			after.Reset()
		}
		if f.Event == "content" && retried {
			after.WriteString(f.Data["content"].(string))
		}
	}
	require.Equal(t, "Recovered answer after the crash.", after.String())
	done := rest[len(rest)-1]
	require.Equal(t, "completed", done.Data["status"], fmt.Sprint(done.Data))

	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code)
	var hist struct {
		Messages []struct{ Role, Content string }
	}
	require.NoError(t, json.Unmarshal(body, &hist))
	require.Len(t, hist.Messages, 2)
	require.Equal(t, "Recovered answer after the crash.", hist.Messages[1].Content, "the retried answer replaced the partial one")
}

// The same turn, relayed through Redis Streams instead of the in-process log, streams the same
// seed events.
func TestTurnThroughRedisRelay(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{RedisURL: testRedisURL(t)})
	env.LLM.SetHandler(titleReplies("Redis"))
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", ArgumentChunks: []string{`{`, `}`}}),
		fakeopenai.Text("All quiet."),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "").UntilDone(t, true)
	require.Equal(t, []string{"turn_started", "tool_call", "tool_start", "tool_end", "content", "done"}, e2eenv.Types(frames))
	for _, f := range frames {
		require.Regexp(t, `^\d+-\d+$`, f.ID, "Redis stream entry ids are the SSE ids")
	}
}
