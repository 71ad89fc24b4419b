package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

// serveProc is the real `gns3-copilot serve` binary running as a child process on its
// embedded defaults (SQLite, the SQLite event log, its own Temporal dev server), as a new user
// runs it. Tests that kill it or measure its CPU need it out of the test's own process.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	log  string
	done chan struct{} // closed when the process has exited
}

// fakesEnv starts the fake GNS3 (with opts) and the fake model, and returns an Env whose URL
// is filled in once a serve process runs.
func fakesEnv(t testing.TB, opts ...fakegns3.Option) *e2eenv.Env {
	g := fakegns3.New(t, opts...)
	g.AddUser(e2eenv.Username, e2eenv.UserToken, false)
	pid := g.AddProject("lab1", fakegns3.Members(e2eenv.Username))
	llm := fakeopenai.New(t)
	llm.RequireAPIKey(e2eenv.LLMKey)
	return &e2eenv.Env{T: t, GNS3: g, LLM: llm, ProjectID: pid}
}

// startServe runs serve on dataDir against env's fakes and sets env.URL. It is stopped (by its
// PID) when the test ends, unless the test killed it first.
func startServe(t testing.TB, bin, dataDir string, env *e2eenv.Env, extra ...string) *serveProc {
	t.Helper()
	cli := e2eenv.RequireTemporalCLI(t)
	p := startRole(t, bin, "serve", dataDir, env, append([]string{"--temporal-cli", cli, "--temporal-ui-port", "-1"}, extra...)...)
	env.URL = p.url
	return p
}

// startRole runs the binary as role (serve, api or worker) on dataDir against env's fakes and
// returns once it has started (p.url is the API's, empty for a worker). It is stopped (by its
// PID) when the test ends, unless the test killed it first.
func startRole(t testing.TB, bin, role, dataDir string, env *e2eenv.Env, extra ...string) *serveProc {
	t.Helper()
	logPath := filepath.Join(dataDir, role+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	args := append([]string{role, "--listen", "127.0.0.1:0", "--data-dir", dataDir,
		"--gns3-url", env.GNS3.URL, "--llm-base-url", env.LLM.URL,
		"--llm-model", "gpt-4o-mini", "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GNS3_COPILOT_LLM_API_KEY="+e2eenv.LLMKey)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &serveProc{cmd: cmd, log: logPath, done: make(chan struct{})}
	// Every role says where Temporal is once it has started; an API says where it listens
	// just before.
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		url := ""
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, "API and chat page on http://"); ok {
				url = "http://" + strings.TrimSuffix(rest, "/")
			}
			if strings.HasPrefix(line, "gns3-copilot: Temporal at ") {
				select {
				case started <- url:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s log:\n%s", role, b)
		}
	})
	select {
	case p.url = <-started:
	case <-p.done:
		b, _ := os.ReadFile(logPath)
		t.Fatalf("%s exited before it started:\n%s", role, b)
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not start within 90s", role)
	}
	return p
}

// kill sends SIGKILL and waits until the process and its Temporal child are gone, so the
// next serve on the same data directory meets no leftover.
func (p *serveProc) kill(t testing.TB) {
	t.Helper()
	children := childPIDs(p.cmd.Process.Pid)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not die")
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, c := range children {
		for procfs.Alive(c) {
			if time.Now().After(deadline) {
				t.Fatalf("serve's child %d outlived it by 30s", c)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// childPIDs lists the direct children of pid, read from /proc.
func childPIDs(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procfs.ReadStat(n); ok && st.PPID == pid {
			out = append(out, n)
		}
	}
	return out
}

// `serve` killed with SIGKILL in the middle of a turn, on its embedded defaults: started again
// on the same data directory, it finishes the turn, and a client that rejoins with
// Last-Event-ID gets what it missed from the durable event log and follows the turn to done.
func TestKilledServeRejoinReplaysAndFollowsToDone(t *testing.T) {
	bin := buildBinary(t)
	dataDir := t.TempDir()
	env := fakesEnv(t)
	env.LLM.SetHandler(titleReplies("Crash test"))
	env.LLM.Enqueue(
		fakeopenai.Reply{Content: []string{"Working ", "on ", "it ", "slowly"}, Hang: true, HangAfter: 2},
		fakeopenai.Reply{Content: fakeopenai.Words("Recovered answer after the crash.")},
	)
	first := startServe(t, bin, dataDir, env)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "survive this"}, "")
	seen := s.Until(t, e2eenv.ContentReaches("Working on "))
	sessionID, _ := startedIDs(t, seen)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, env.LLM.WaitHanging(ctx, 1))
	s.Close()

	first.kill(t)
	startServe(t, bin, dataDir, env)

	// From the frame after turn_started: everything the first process logged must come back.
	rejoin := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, seen[0].ID)
	require.Equal(t, http.StatusOK, rejoin.Status)
	go func() { <-ctx.Done(); rejoin.Close() }() // a stuck turn fails the test instead of hanging it
	rest := rejoin.UntilDone(t, true)
	require.GreaterOrEqual(t, len(rest), len(seen)-1)
	for i, f := range seen[1:] {
		require.Equal(t, f.ID, rest[i].ID, "replayed frame %d", i)
		require.Equal(t, f.Raw, rest[i].Raw, "replayed frame %d", i)
	}
	types := e2eenv.Types(rest)
	require.Contains(t, types, "retry", "the client is told to drop the partial text: %v", types)
	var after strings.Builder
	for _, f := range rest {
		switch f.Event {
		case "retry":
			after.Reset()
		case "content":
			after.WriteString(f.Data["content"].(string))
		}
	}
	require.Equal(t, "Recovered answer after the crash.", after.String())
	done := rest[len(rest)-1]
	require.Equal(t, "completed", done.Data["status"], fmt.Sprint(done.Data))
}
