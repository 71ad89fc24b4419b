package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
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
	require.Equal(t, domain.TurnFailed, closed.Status)
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
	require.Equal(t, "ok", ab["status"])
	require.Equal(t, true, ab["closed"], "the answer says the turn was closed, not stopped")
	closed, err = repo.Turn(context.Background(), stale.ID)
	require.NoError(t, err)
	require.Equal(t, domain.TurnFailed, closed.Status)
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
	require.Equal(t, domain.TurnFailed, closed.Status)
}

// privateRedis is a redis-server of the test's own, on a free port, persisting to its own
// directory, so the test can stop and start it (by PID) without touching anyone else's Redis.
type privateRedis struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is required in CI: %v", err)
		}
		t.Skipf("skipping: redis-server is not installed: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &privateRedis{t: t, bin: bin, dir: t.TempDir(), port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs redis-server (again) on the same port and directory and waits until it answers.
func (r *privateRedis) start() {
	r.t.Helper()
	// appendfsync always: what was acknowledged before a stop is there after the start, as on
	// a production Redis with persistence.
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--logfile", filepath.Join(r.dir, "redis.log"))
	require.NoError(r.t, r.cmd.Start())
	r.done = make(chan struct{})
	cmd, done := r.cmd, r.done
	go func() { _ = cmd.Wait(); close(done) }()
	client := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port), MaxRetries: -1})
	defer client.Close()
	deadline := time.Now().Add(15 * time.Second)
	for client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			r.t.Fatalf("private redis-server on port %d did not answer", r.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends this redis-server by its PID and waits until it is gone.
func (r *privateRedis) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
}

// Redis stopped in the middle of a turn and started again: the turn finishes, the client's
// stream waits for Redis and ends with done, nothing hangs, and the session is not left
// running.
func TestRedisStoppedMidTurnAndStartedAgain(t *testing.T) {
	rds := startPrivateRedis(t)
	env := e2eenv.Start(t, e2eenv.Options{RedisURL: rds.url(), Heartbeat: time.Second})
	env.LLM.SetHandler(titleReplies("Redis outage"))
	answer := "one two three four five six seven eight nine ten eleven twelve"
	env.LLM.Enqueue(fakeopenai.Reply{Content: fakeopenai.Words(answer), ChunkDelay: 100 * time.Millisecond})

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "count slowly"}, "")
	frames := s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "content" })
	sessionID, turnID := startedIDs(t, frames)

	rds.stop()
	// The model finishes its answer while Redis is away; the turn then needs Redis to end.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := env.LLM.Await(ctx, func(st fakeopenai.Stats) bool { return st.Completed >= 1 })
	require.NoError(t, err)
	rds.start()

	go func() { <-ctx.Done(); s.Close() }() // a hang fails the test instead of stalling it
	rest := s.UntilDone(t, true)
	done := rest[len(rest)-1]
	require.Equal(t, "completed", done.Data["status"], fmt.Sprint(done.Data))
	require.Equal(t, turnID, done.Data["turn_id"])

	repo := chatDB(t, env)
	turn, err := repo.Turn(context.Background(), turnID)
	require.NoError(t, err)
	require.Equal(t, domain.TurnCompleted, turn.Status, "the session is not left running")
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), answer, "the whole answer is in the history, also what streamed while Redis was away")
}

// withApplicationName tags the service's PostgreSQL connections so that the test can find
// and kill exactly them (other tests share the server).
func withApplicationName(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " application_name=" + name
}

// PostgreSQL kills the service's connections in the middle of a turn (pg_terminate_backend, as
// a failover or an administrator does): the activity that meets a dead connection fails, is
// retried on a new one, and the turn finishes.
func TestPostgresConnectionsKilledMidTurn(t *testing.T) {
	dsn, admin := testdb.Postgres(t)
	app := fmt.Sprintf("copilot-fault-%d", time.Now().UnixNano())
	env := e2eenv.Start(t, e2eenv.Options{DatabaseURL: withApplicationName(dsn, app)})
	env.LLM.SetHandler(titleReplies("Postgres outage"))
	answer := "the lab has no nodes yet so there is nothing to show"
	slow := fakeopenai.Reply{Content: fakeopenai.Words(answer), ChunkDelay: 50 * time.Millisecond}
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: "{}"}),
		slow, slow, slow,
	)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "what is there?"}, "")
	// Up to the second model call's first words: the tool's result is in the database.
	frames := s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "content" })
	_, turnID := startedIDs(t, frames)
	var killed int64
	require.NoError(t, admin.Raw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?`, app).Scan(&killed).Error)
	require.Positive(t, killed, "the service's connections were killed")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); s.Close() }()
	rest := s.UntilDone(t, true)
	done := rest[len(rest)-1]
	require.Equal(t, "completed", done.Data["status"], fmt.Sprint(done.Data))

	var status string
	require.NoError(t, admin.Raw(`SELECT status FROM chat_turns WHERE id = ?`, turnID).Scan(&status).Error)
	require.Equal(t, domain.TurnCompleted, status)
	var answers int64
	require.NoError(t, admin.Raw(`SELECT count(*) FROM chat_messages WHERE turn_id = ? AND role = 'assistant' AND content = ?`, turnID, answer).Scan(&answers).Error)
	require.EqualValues(t, 1, answers, "the answer is stored once")
}

// cuttableProxy forwards TCP connections to target until cut, which closes its listener and
// every connection: GNS3 becomes unreachable (connection refused) at once.
type cuttableProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *cuttableProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cuttableProxy{l: l}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *cuttableProxy) url() string { return "http://" + p.l.Addr().String() }

func (p *cuttableProxy) cut() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// GNS3 becomes unreachable in the middle of a tool: the tool's result says, per node, what
// could not be done and why, and the model goes on to answer.
func TestGNS3UnreachableMidTool(t *testing.T) {
	bin := buildBinary(t)
	env := fakesEnv(t)
	pcA := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC-A"})
	pcB := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC-B"})
	env.GNS3.SetStartPolls(pcB.ID, 1_000_000) // PC-B never reports started while GNS3 can be asked
	proxy := startProxy(t, strings.TrimPrefix(env.GNS3.URL, "http://"))
	env.LLM.SetHandler(titleReplies("GNS3 outage"))
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_start", Name: "start_gns3_node",
			Arguments: `{"node_ids":["` + pcA.ID + `","` + pcB.ID + `"],"timeout_seconds":5}`}),
		fakeopenai.Text("PC-A is up; GNS3 stopped answering before PC-B started."),
	)
	startServe(t, bin, t.TempDir(), env, "--gns3-url", proxy.url())

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "start both PCs"}, "")
	frames := s.Until(t, func(f e2eenv.Frame) bool {
		return f.Event == "tool_progress" && f.Data["progress"].(map[string]any)["item_id"] == pcA.ID &&
			f.Data["progress"].(map[string]any)["status"] == "started"
	})
	proxy.cut() // while the tool waits for PC-B

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); s.Close() }()
	frames = append(frames, s.UntilDone(t, true)...)
	out := toolEnds(t, frames)["c_start"]
	require.Equal(t, 2, out.Total, "%+v", out)
	require.Equal(t, 1, out.Successful)
	for _, d := range out.Data {
		switch d.ID {
		case pcA.ID:
			require.Equal(t, "success", d.Status)
		case pcB.ID:
			require.Equal(t, "failed", d.Status)
			require.Contains(t, d.Error, "PC-B did not report started")
			require.Contains(t, d.Error, "last status read failed")
			t.Logf("PC-B's error as the model reads it: %s", d.Error)
		default:
			t.Fatalf("unexpected item %+v", d)
		}
	}
	done := frames[len(frames)-1]
	require.Equal(t, "completed", done.Data["status"], "the model went on: %v", done.Data)
	require.Contains(t, e2eenv.Types(frames), "content")
}
