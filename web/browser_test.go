package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/web"
)

// The browser tests live in web/e2e (Node's test runner driving Debian's chromium through
// playwright-core). This test is their launcher: it starts the real service with the fake GNS3
// and the scripted model, then runs them against it.

const chromiumPath = "/usr/bin/chromium"

// requireBrowserTools returns node's path, skipping the test under -short and skipping (or, in
// CI, failing) when something the browser tests need is not installed.
func requireBrowserTools(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests are not short")
	}
	missing := func(what string) {
		msg := "skipping the browser tests: " + what
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed (apt-get install -y nodejs npm)")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		missing(chromiumPath + " is missing (apt-get install -y chromium)")
	}
	if _, err := os.Stat(filepath.Join("e2e", "node_modules", "playwright-core", "package.json")); err != nil {
		missing("web/e2e/node_modules is missing (run: cd web/e2e && npm ci)")
	}
	return node
}

// pageScript is what the scripted model answers, chosen by words in the user's message, so the
// browser tests drive the model just by what they type. A message with "flaky" in it has its
// first answer cut off mid-stream, so the turn retries the LLM call.
type pageScript struct {
	mu     sync.Mutex
	broken map[string]bool
}

func (p *pageScript) reply(req fakeopenai.Request) (fakeopenai.Reply, bool) {
	if !req.HasTools() {
		// The title call.
		title := "Lab chat"
		switch user := strings.ToLower(req.LastUserText()); {
		case strings.Contains(user, "start the lab"):
			title = "Starting the lab"
		case strings.Contains(user, "hello"):
			title = "Greeting the copilot"
		}
		return fakeopenai.Reply{Content: []string{title}, Usage: &fakeopenai.Usage{PromptTokens: 40, CompletionTokens: 4}}, true
	}
	user := strings.ToLower(req.LastUserText())
	afterTool := req.LastMessage().Role == "tool"
	switch {
	case strings.Contains(user, "start the lab"):
		if afterTool {
			return fakeopenai.Reply{
				Content:    fakeopenai.Words("**PC1** and **PC2** are started. **PC3** could not start: GNS3 reported an error, see the card above."),
				ChunkDelay: 15 * time.Millisecond,
			}, true
		}
		return fakeopenai.Reply{
			Content:             fakeopenai.Words("Starting the three PCs now."),
			ToolCalls:           []fakeopenai.ToolCall{{ID: "call_start_lab", Name: "start_gns3_node", Arguments: `{"node_ids": ["PC1", "PC2", "PC3"]}`, ArgumentChunkSize: 3}},
			ChunkDelay:          60 * time.Millisecond,
			FirstChunkDelay:     50 * time.Millisecond,
			SequentialToolCalls: true,
		}, true
	case strings.Contains(user, "slow"):
		var b strings.Builder
		b.WriteString("Here is a long walk through the lab.")
		for i := 1; i <= 70; i++ {
			fmt.Fprintf(&b, " Step %d checks the next link.", i)
		}
		b.WriteString(" END-OF-STORY")
		return fakeopenai.Reply{Content: fakeopenai.Words(b.String()), ChunkDelay: 25 * time.Millisecond}, true
	case strings.Contains(user, "flaky") && !afterTool:
		p.mu.Lock()
		first := !p.broken[user]
		p.broken[user] = true
		p.mu.Unlock()
		if first {
			return fakeopenai.Reply{Content: fakeopenai.Words("This partial answer is lost with the connection and must disappear."),
				ChunkDelay: 30 * time.Millisecond, Drop: true, DropAfter: 6}, true
		}
		return fakeopenai.Reply{Content: fakeopenai.Words("The recovered answer, streamed again from its start."), ChunkDelay: 20 * time.Millisecond}, true
	case strings.Contains(user, "script"):
		return fakeopenai.Reply{Content: []string{
			"Here is the tag: <script>window.__pwned = 1</script> ",
			"and an image <img src=x onerror=\"window.__pwned = 2\">. ",
			"A [harmless looking link](javascript:window.__pwned=3) too.\n\n",
			"```html\n<script>window.__pwned = 4</script>\n```\n",
		}}, true
	default:
		return fakeopenai.Reply{
			Content: fakeopenai.Words("**Hello!** I am looking at your project `lab1`.\n\n" +
				"- It has three VPCS nodes: PC1, PC2 and PC3\n- All of them are stopped\n\n" +
				"| Node | Status |\n|------|--------|\n| PC1 | stopped |\n| PC2 | stopped |\n\nAsk me to start them."),
			ChunkDelay: 30 * time.Millisecond,
		}, true
	}
}

// sameOrigin serves the page and the API from one origin. The service serves the page itself
// once its Web handler is wired; until then the page is put in front of the API here.
func sameOrigin(t *testing.T, api string) string {
	t.Helper()
	res, err := http.Get(api + "/")
	if err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK && bytes.Contains(b, []byte("<title>GNS3 Copilot</title>")) {
			return api
		}
	}
	u, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // SSE frames go out as they come
	page := web.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v3/") || r.URL.Path == "/healthz" {
			proxy.ServeHTTP(w, r)
			return
		}
		page.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// lineWriter passes the child's output to the test log line by line, so a long run shows
// progress and a failure shows where it happened.
type lineWriter struct {
	t   *testing.T
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.t.Log(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

func TestChatPageInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler((&pageScript{broken: map[string]bool{}}).reply)

	g := env.GNS3
	pc1 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", X: -250, Y: 0})
	g.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC2", X: 0, Y: 0})
	pc3 := g.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC3", X: 250, Y: 0})
	g.SetStartPolls(pc1.ID, 4) // PC1 takes a moment, so per-node progress shows
	g.Inject(fakegns3.Failure{Op: fakegns3.OpStartNode, ID: pc3.ID, Status: http.StatusConflict, Message: "VPCS PC3 could not bind its console port"})
	g.AddProject("archive", fakegns3.Closed(), fakegns3.Members(e2eenv.Username))

	cut := newCuttingProxy(t, env.URL)
	runNodeTests(t, node, "chat.e2e.test.mjs", sameOrigin(t, env.URL),
		"COPILOT_PROJECT=lab1", "COPILOT_CLOSED_PROJECT=archive",
		"COPILOT_CUT_URL="+cut.URL, "COPILOT_CUT_CONTROL="+cut.URL+"/__cut")
}

// newCuttingProxy serves the page and proxies the API like sameOrigin, and also hangs up every
// response in flight when /__cut is posted to: a dropped connection, as a flaky network or a
// restarted load balancer causes, at the moment the browser test chooses.
func newCuttingProxy(t *testing.T, api string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	page := web.Handler()
	var (
		mu       sync.Mutex
		inFlight = map[*http.Request]context.CancelFunc{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/__cut" && r.Method == http.MethodPost:
			mu.Lock()
			n := len(inFlight)
			for _, cancel := range inFlight {
				cancel()
			}
			mu.Unlock()
			fmt.Fprintf(w, "%d", n)
		case strings.HasPrefix(r.URL.Path, "/v3/"):
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			r = r.WithContext(ctx)
			mu.Lock()
			inFlight[r] = cancel
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(inFlight, r)
				mu.Unlock()
			}()
			// A cut mid-body makes the proxy abort the connection, as the browser must see it.
			proxy.ServeHTTP(w, r)
		default:
			page.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestChatPageErrorsInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := e2eenv.Start(t, e2eenv.Options{NoLLM: true})
	// The page's tests take the fake GNS3 server down through this, at the moment they choose.
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/gns3/down" {
			env.GNS3.Close()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(control.Close)
	runNodeTests(t, node, "errors.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_CONTROL_URL="+control.URL)
}

// runNodeTests runs one browser test file against the page at base.
func runNodeTests(t *testing.T, node, file, base string, extraEnv ...string) {
	t.Helper()
	artifacts := os.Getenv("COPILOT_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join("e2e", "artifacts")
	}
	artifacts, _ = filepath.Abs(artifacts)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "--test-reporter=spec", file)
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(),
		"COPILOT_URL="+base,
		"COPILOT_USER="+e2eenv.Username,
		"COPILOT_PASSWORD="+e2eenv.Password,
		"COPILOT_ARTIFACTS="+artifacts,
		"CHROMIUM_PATH="+chromiumPath,
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	out := &lineWriter{t: t}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser tests in %s failed: %v (screenshots in %s)", file, err, artifacts)
	}
	t.Logf("screenshots in %s", artifacts)
}
