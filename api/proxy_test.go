package api

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3proxy"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/web"
)

// upstream is a GNS3 controller for proxy tests: the fake GNS3's REST API plus what a real
// controller also serves and a proxy must carry: its web UI, a console WebSocket, the
// notification stream and image uploads. It records the headers of the last request it saw.
type upstream struct {
	fake *fakegns3.Server
	srv  *httptest.Server
	// next lets the notification stream write its next line; the test decides when.
	next chan struct{}

	mu   sync.Mutex
	seen *http.Request
}

func newUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{fake: fakegns3.New(t), next: make(chan struct{})}
	u.fake.AddUser("alice", "tok-alice", false)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		// GNS3 sends a browser at its root to the web UI, naming itself in the Location.
		http.Redirect(w, r, "http://"+r.Host+"/static/web-ui/bundled", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /static/web-ui/bundled", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><base href="/static/web-ui/"><app-root></app-root>`)
	})
	mux.HandleFunc("GET /v3/projects/{project_id}/nodes/{node_id}/console/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, append([]byte("echo: "), msg...)); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("GET /v3/notifications", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 1; i <= 3; i++ {
			if i > 1 {
				select {
				case <-u.next:
				case <-r.Context().Done():
					return
				}
			}
			_, _ = io.WriteString(w, `{"action":"ping","event":{"n":`+string(rune('0'+i))+`}}`+"\n")
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("POST /v3/images/upload/{path}", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"size": n, "sha256": hex.EncodeToString(h.Sum(nil))})
	})
	fallback := u.fake.Handler()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = r.Clone(context.Background())
		u.mu.Unlock()
		fallback.ServeHTTP(w, r)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) lastSeen() *http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen
}

// newFront is the copilot in front of up: its own routes plus the proxy.
func newFront(t testing.TB, up *upstream) *httptest.Server {
	t.Helper()
	proxy, err := gns3proxy.New(up.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.SQLiteWith(t, models.Open)
	if err := models.Migrate(db); err != nil {
		t.Fatal(err)
	}
	return startTestServer(t, Deps{Repo: models.NewChatRepository(db), GNS3: gns3At(up.srv.URL),
		Events: relay.NewMemory(relay.MemoryOptions{}), Turns: &heldTurns{}, Credentials: memCredentials{}, LLM: fixedLLM{},
		Web: web.Handler(), GNS3Proxy: proxy})
}

func get(t *testing.T, url, token string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestProxyForwardsGNS3AndKeepsCopilotRoutes(t *testing.T) {
	up := newUpstream(t)
	front := newFront(t, up)
	pid := up.fake.AddProject("lab", fakegns3.Members("alice"))

	// GNS3's REST API answers exactly as it does directly, also for the routes the copilot's
	// own page borrows when it runs alone.
	for _, path := range []string{"/v3/version", "/v3/projects", "/v3/projects/" + pid, "/v3/access/users/me"} {
		direct, want := get(t, up.srv.URL+path, "tok-alice", nil)
		proxied, got := get(t, front.URL+path, "tok-alice", nil)
		if proxied.StatusCode != direct.StatusCode || got != want {
			t.Fatalf("%s: through the proxy %d %s, directly %d %s", path, proxied.StatusCode, got, direct.StatusCode, want)
		}
	}
	// The copilot's chat routes are the copilot's (GNS3 has none).
	resp, body := get(t, front.URL+"/v3/projects/"+pid+"/chat/sessions", "tok-alice", nil)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Fatalf("chat sessions through the front: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, front.URL+"/v3/copilot/projects/"+pid+"/chat/sessions", "tok-alice", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("3.1 prefix: %d %s", resp.StatusCode, body)
	}

	// The root is GNS3's: its redirect to the web UI stays on the front's address.
	resp, _ = get(t, front.URL+"/", "", nil)
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/static/web-ui/bundled" {
		t.Fatalf("root: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body = get(t, front.URL+"/static/web-ui/bundled", "", nil); !strings.Contains(body, "<app-root>") {
		t.Fatalf("web UI: %d %s", resp.StatusCode, body)
	}
	// The copilot's page lives under a path of its own, its assets beside it.
	if resp, _ = get(t, front.URL+"/copilot", "", nil); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != gns3proxy.CopilotPagePath {
		t.Fatalf("/copilot: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body = get(t, front.URL+"/copilot/", "", nil); !strings.Contains(body, "<title>GNS3 Copilot</title>") {
		t.Fatalf("page: %d %.200s", resp.StatusCode, body)
	}
	if resp, _ = get(t, front.URL+"/copilot/app.js", "", nil); resp.StatusCode != http.StatusOK ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("page asset: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestProxyRewritesHostSetsForwardedAndDropsHopByHop(t *testing.T) {
	up := newUpstream(t)
	front := newFront(t, up)
	h := http.Header{}
	h.Set("Connection", "X-Secret-Hop")
	h.Set("X-Secret-Hop", "must not travel")
	h.Set("X-Forwarded-For", "203.0.113.9") // a client cannot make itself someone else
	resp, _ := get(t, front.URL+"/v3/version", "", h)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	seen := up.lastSeen()
	upHost := strings.TrimPrefix(up.srv.URL, "http://")
	frontHost := strings.TrimPrefix(front.URL, "http://")
	if seen.Host != upHost {
		t.Fatalf("GNS3 saw Host %q, want its own %q", seen.Host, upHost)
	}
	if seen.Header.Get("X-Forwarded-Host") != frontHost || seen.Header.Get("X-Forwarded-Proto") != "http" ||
		seen.Header.Get("X-Forwarded-For") != "127.0.0.1" {
		t.Fatalf("forwarded headers: %v", seen.Header)
	}
	if seen.Header.Get("X-Secret-Hop") != "" {
		t.Fatal("a hop-by-hop header named in Connection reached GNS3")
	}
}

func TestProxyCarriesWebSockets(t *testing.T) {
	up := newUpstream(t)
	front := newFront(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(front.URL, "http")+"/v3/projects/p/nodes/n/console/ws", nil)
	if err != nil {
		t.Fatalf("WebSocket through the proxy: %v (response %v)", err, resp)
	}
	defer c.CloseNow()
	for _, line := range []string{"show ip", "ping 10.0.0.2"} {
		if err := c.Write(ctx, websocket.MessageText, []byte(line)); err != nil {
			t.Fatal(err)
		}
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "echo: "+line {
			t.Fatalf("echo %q, want %q", got, "echo: "+line)
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatalf("closing: %v", err)
	}
}

func TestProxyStreamsResponsesAsTheyCome(t *testing.T) {
	up := newUpstream(t)
	front := newFront(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+"/v3/notifications", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for i := 1; i <= 3; i++ {
		// GNS3 writes line i+1 only after this line arrived here: a proxy that buffered would
		// make this read wait forever (until the deadline fails the test).
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if !strings.Contains(line, `"n":`+string(rune('0'+i))) {
			t.Fatalf("line %d: %q", i, line)
		}
		if i < 3 {
			select {
			case up.next <- struct{}{}:
			case <-ctx.Done():
				t.Fatal("the stream's writer did not wait for the next line")
			}
		}
	}
}

func TestProxyCarriesLargeUploads(t *testing.T) {
	up := newUpstream(t)
	front := newFront(t, up)
	const size = 48 << 20
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	h := sha256.New()
	body := io.TeeReader(io.LimitReader(rng, size), h)
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/v3/images/upload/vpcs.qcow2", body)
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Size   int64
		SHA256 string
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, decode %v", resp.StatusCode, err)
	}
	if got.Size != size || got.SHA256 != hex.EncodeToString(h.Sum(nil)) {
		t.Fatalf("GNS3 received %d bytes (sha256 %s), want %d bytes intact", got.Size, got.SHA256, size)
	}
}

func TestProxyAnswersClearlyWhenGNS3IsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	proxy, err := gns3proxy.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	proxy.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v3/version", nil))
	var body struct{ Message string }
	if w.Code != http.StatusBadGateway || json.Unmarshal(w.Body.Bytes(), &body) != nil || !strings.Contains(body.Message, "cannot be reached") {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	if _, err := gns3proxy.New("ftp://gns3"); err == nil {
		t.Fatal("an ftp URL was accepted")
	}
}

// BenchmarkProxyAddedLatency measures one small GNS3 request directly and through the proxy,
// over kept-alive connections; the difference per request is what the proxy adds.
func BenchmarkProxyAddedLatency(b *testing.B) {
	up := newUpstream(b)
	front := newFront(b, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, c := range []struct{ name, base string }{{"direct", up.srv.URL}, {"through-proxy", front.URL}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := client.Get(c.base + "/v3/version")
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
