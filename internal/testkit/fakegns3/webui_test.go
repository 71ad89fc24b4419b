package fakegns3

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The web UI's build is served as GNS3 serves it: its files, index.html for the paths the UI
// routes itself, / redirected to it; and its OAuth2 form login answers like authenticate.
func TestWebUIIsServedAndSignsIn(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":        `<base href="/static/web-ui/"><app-root></app-root>`,
		"main-ABC.js":       "console.log('app')",
		"assets/offline.js": "{}",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := New(t, WithWebUI(dir))
	s.AddUser("alice", "tok-alice", false)
	s.SetPassword("alice", "pw")
	pid := s.AddProject("lab", Members("alice"))

	get := func(path string) (int, string, http.Header) {
		t.Helper()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, _, h := get("/"); code != http.StatusTemporaryRedirect || h.Get("Location") != "/static/web-ui/bundled" {
		t.Fatalf("/ answered %d to %q", code, h.Get("Location"))
	}
	for path, want := range map[string]string{
		"/static/web-ui/main-ABC.js":                                "console.log",
		"/static/web-ui/assets/offline.js":                          "{}",
		"/static/web-ui/bundled":                                    "<app-root>",
		"/static/web-ui/controller/1/project/" + pid:                "<app-root>",
		"/v3/symbols/:/symbols/affinity/circle/blue/router.svg/raw": "<svg",
	} {
		if code, body, _ := get(path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want %q", path, code, body, want)
		}
	}

	if _, body, _ := get("/static/web-ui/..%2f..%2f..%2fetc%2fpasswd"); strings.Contains(body, "root:") {
		t.Fatal("a path out of the build was served")
	}

	login := func(form url.Values) call {
		t.Helper()
		resp, err := http.PostForm(s.URL+"/v3/access/users/login", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return call{status: resp.StatusCode, raw: b}
	}
	if c := login(url.Values{"username": {"alice"}, "password": {"pw"}}); c.status != 200 || !strings.Contains(string(c.raw), `"access_token":"tok-alice"`) {
		t.Fatalf("login: %d %s", c.status, c.raw)
	}
	if c := login(url.Values{"username": {"alice"}, "password": {"nope"}}); c.status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d %s", c.status, c.raw)
	}
	if c := login(url.Values{"username": {"alice"}}); c.status != http.StatusUnprocessableEntity {
		t.Fatalf("no password: %d %s", c.status, c.raw)
	}

	if c := do(t, s, "tok-alice", http.MethodGet, "/v3/computes", nil); c.status != 200 || !strings.Contains(string(c.raw), `"compute_id":"local"`) {
		t.Fatalf("computes: %d %s", c.status, c.raw)
	}
	if c := do(t, s, "tok-alice", http.MethodGet, "/v3/projects/"+pid+"/drawings", nil); c.status != 200 || strings.TrimSpace(string(c.raw)) != "[]" {
		t.Fatalf("drawings: %d %s", c.status, c.raw)
	}
	if c := do(t, s, "", http.MethodGet, "/v3/computes", nil); c.status != http.StatusUnauthorized {
		t.Fatalf("computes without a token: %d", c.status)
	}
}

// Without a build, the fake serves no web UI.
func TestNoWebUIWithoutABuild(t *testing.T) {
	s := New(t)
	resp, err := http.Get(s.URL + "/static/web-ui/bundled")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404", resp.StatusCode)
	}
}

// The web UI's notification WebSocket of a project carries the project's notifications, with
// the token in the query as browsers send it; a bad token is refused before the upgrade.
func TestProjectNotificationWebSocket(t *testing.T) {
	s := New(t)
	s.AddUser("alice", "tok-alice", false)
	pid := s.AddProject("lab", Members("alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(s.URL, "http") + "/v3/projects/" + pid + "/notifications/ws?token="
	if _, resp, err := websocket.Dial(ctx, ws+"nope", nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a bad token: %v %v", resp, err)
	}
	c, _, err := websocket.Dial(ctx, ws+"tok-alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// The listener is registered before the upgrade answers, so this node is announced.
	s.AddNode(pid, NodeSpec{Name: "PC1"})
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var note struct {
		Action string         `json:"action"`
		Event  map[string]any `json:"event"`
	}
	if err := json.Unmarshal(msg, &note); err != nil || note.Action != "node.created" || note.Event["name"] != "PC1" {
		t.Fatalf("notification %s (%v)", msg, err)
	}
}
