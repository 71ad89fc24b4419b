package fakegns3

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sampleNotifications returns the first event of each action in the captured stream.
func sampleNotifications(t *testing.T) map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "v3.0.6", "project-notifications.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var n struct {
			Action string `json:"action"`
			Event  any    `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			t.Fatal(err)
		}
		if _, seen := out[n.Action]; !seen {
			out[n.Action] = n.Event
		}
	}
	return out
}

// The fake's stream announces its changes with the real stream's shapes.
func TestNotificationStreamMatchesSample(t *testing.T) {
	want := sampleNotifications(t)
	s := New(t, WithNotificationPing(20*time.Millisecond))
	pid := s.AddProject("stream-lab")
	req, _ := http.NewRequest("GET", s.URL+"/v3/projects/"+pid+"/notifications", nil)
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("notifications: %d", resp.StatusCode)
	}
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	next := func(action string) map[string]any {
		t.Helper()
		for m := range lines {
			if m["action"] == action {
				return m
			}
		}
		t.Fatalf("the stream ended before %s", action)
		return nil
	}
	sameKeys(t, "ping", want["ping"], next("ping")["event"])

	created := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]int{"x": 0, "y": 0})
	a := obj(created.body)["node_id"].(string)
	ev := next("node.created")
	sameKeys(t, "node.created", want["node.created"], ev["event"])
	sameKeys(t, "node.created label", obj(want["node.created"])["label"], obj(ev["event"])["label"])
	sameKeys(t, "node.created port", first(obj(want["node.created"])["ports"]), first(obj(ev["event"])["ports"]))
	b := s.AddNode(pid, NodeSpec{X: 250}).ID
	next("node.created")

	link := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/links", map[string]any{"nodes": []map[string]any{
		{"node_id": a, "adapter_number": 0, "port_number": 0}, {"node_id": b, "adapter_number": 0, "port_number": 0}}})
	ev = next("link.created")
	sameKeys(t, "link.created", want["link.created"], ev["event"])
	sameKeys(t, "link.created end", first(obj(want["link.created"])["nodes"]), first(obj(ev["event"])["nodes"]))
	sameKeys(t, "link.created end label", obj(first(obj(want["link.created"])["nodes"]))["label"], obj(first(obj(ev["event"])["nodes"]))["label"])

	if c := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+a+"/start", map[string]any{}); c.status != 204 {
		t.Fatalf("start: %d", c.status)
	}
	ev = next("node.updated")
	sameKeys(t, "node.updated", want["node.updated"], ev["event"])
	if obj(ev["event"])["status"] != "started" {
		t.Errorf("node.updated after a start: %v", ev["event"])
	}
	linkID := obj(link.body)["link_id"].(string)
	s.SetCapturing(linkID, true)
	ev = next("link.updated")
	if obj(ev["event"])["capturing"] != true {
		t.Errorf("link.updated after a capture start: %v", ev["event"])
	}
	do(t, s, AdminToken, "DELETE", "/v3/projects/"+pid+"/nodes/"+a, nil)
	if ev := next("link.deleted"); obj(ev["event"])["link_id"] != linkID {
		t.Errorf("link.deleted: %v", ev)
	}
	if ev := next("node.deleted"); obj(ev["event"])["node_id"] != a {
		t.Errorf("node.deleted: %v", ev)
	}
	do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/close", nil)
	if ev := next("project.closed"); obj(ev["event"])["project_id"] != pid {
		t.Errorf("project.closed: %v", ev)
	}
}

// The stream checks access like any project read.
func TestNotificationStreamNeedsAccess(t *testing.T) {
	s := New(t)
	pid := s.AddProject("private")
	s.AddUser("eve", "eve-token", false)
	c := do(t, s, "eve-token", "GET", "/v3/projects/"+pid+"/notifications", nil)
	if c.status != http.StatusForbidden {
		t.Fatalf("a non-member opened the stream: %d %s", c.status, c.raw)
	}
	if c := do(t, s, "", "GET", "/v3/projects/"+pid+"/notifications", nil); c.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", c.status)
	}
}
