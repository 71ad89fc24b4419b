package fakegns3

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// sample loads a captured answer from testdata (copies of shared/gns3/samples):
// the body, and the status when the file records one.
func sample(t *testing.T, name string) (int, any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if m, ok := v.(map[string]any); ok {
		if _, ok := m["request"]; ok {
			return int(m["status"].(float64)), m["body"]
		}
	}
	return 200, v
}

type call struct {
	status int
	body   any
	raw    []byte
}

func do(t *testing.T, s *Server, token, method, path string, body any) call {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	c := call{status: resp.StatusCode, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return c
}

// keys describes which keys an object has and which of them are null, so a
// fake answer can be compared with a real one without comparing values.
func keys(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "<not an object>"
	}
	var ks []string
	for k, x := range m {
		if x == nil {
			k += "=null"
		}
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func sameKeys(t *testing.T, what string, want, got any) {
	t.Helper()
	if keys(want) != keys(got) {
		t.Errorf("%s keys differ from the real server\nreal: %s\nfake: %s", what, keys(want), keys(got))
	}
}

func first(v any) any { return v.([]any)[0] }

func obj(v any) map[string]any { return v.(map[string]any) }

func TestShapesMatchSamples(t *testing.T) {
	s := New(t)
	pid := s.AddProject("samples-lab")
	tok := AdminToken

	_, want := sample(t, "v3.0.6/node-from-template.json")
	created := do(t, s, tok, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]int{"x": 100, "y": 0})
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	sameKeys(t, "node from template", want, created.body)
	sameKeys(t, "node label", obj(want)["label"], obj(created.body)["label"])
	sameKeys(t, "node port (full)", first(obj(want)["ports"]), first(obj(created.body)["ports"]))
	if obj(created.body)["name"] != "PC1" || obj(created.body)["console"].(float64) == 0 {
		t.Errorf("create: %v", created.body)
	}

	_, wantList := sample(t, "v3.0.6/nodes-list.json")
	list := do(t, s, tok, "GET", "/v3/projects/"+pid+"/nodes", nil)
	sameKeys(t, "nodes list item", first(wantList), first(list.body))
	sameKeys(t, "nodes list port", first(obj(first(wantList))["ports"]), first(obj(first(list.body))["ports"]))

	nodeA := obj(created.body)["node_id"].(string)
	nodeB := s.AddNode(pid, NodeSpec{X: 300}).ID
	_, wantLink := sample(t, "v3.0.6/link-create-201.json")
	link := do(t, s, tok, "POST", "/v3/projects/"+pid+"/links", map[string]any{"nodes": []map[string]any{
		{"node_id": nodeA, "adapter_number": 0, "port_number": 0},
		{"node_id": nodeB, "adapter_number": 0, "port_number": 0},
	}})
	if link.status != 201 {
		t.Fatalf("link: %d %s", link.status, link.raw)
	}
	sameKeys(t, "link create", wantLink, link.body)
	sameKeys(t, "link create label", obj(first(obj(wantLink)["nodes"]))["label"], obj(first(obj(link.body)["nodes"]))["label"])
	sameKeys(t, "link create style", obj(wantLink)["link_style"], obj(link.body)["link_style"])

	wantGet := func() any { _, v := sample(t, "v3.0.6/link-get.json"); return v }()
	got := do(t, s, tok, "GET", "/v3/projects/"+pid+"/links/"+obj(link.body)["link_id"].(string), nil)
	sameKeys(t, "link get", wantGet, got.body)
	sameKeys(t, "link get label", obj(first(obj(wantGet)["nodes"]))["label"], obj(first(obj(got.body)["nodes"]))["label"])

	_, wantProject := sample(t, "v3.0.6/project-get.json")
	sameKeys(t, "project", wantProject, do(t, s, tok, "GET", "/v3/projects/"+pid, nil).body)
	_, wantStats := sample(t, "v3.0.6/project-stats.json")
	sameKeys(t, "stats", wantStats, do(t, s, tok, "GET", "/v3/projects/"+pid+"/stats", nil).body)
	_, wantMe := sample(t, "v3.0.6/users-me.json")
	sameKeys(t, "users/me", wantMe, do(t, s, tok, "GET", "/v3/access/users/me", nil).body)

	_, wantTemplates := sample(t, "v3.0.6/templates.json")
	gotTemplates := do(t, s, tok, "GET", "/v3/templates", nil).body.([]any)
	for i, w := range wantTemplates.([]any) {
		sameKeys(t, "template "+obj(w)["name"].(string), w, gotTemplates[i])
	}

	s.SetProjectStatus(pid, "closed")
	_, wantClosed := sample(t, "v3.0.6/nodes-list-closed-project.json")
	sameKeys(t, "closed project node", first(wantClosed), first(do(t, s, tok, "GET", "/v3/projects/"+pid+"/nodes", nil).body))
}

func TestShapesMatchNewerSamples(t *testing.T) {
	s := New(t, WithVersion("3.1.0a2"))
	pid := s.AddProject("smoke")
	_, want := sample(t, "v3.1.0a2/node-from-template.json")
	created := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]any{"x": 1, "y": 2, "name": "Alpha"})
	sameKeys(t, "3.1 node", want, created.body)
	if obj(created.body)["name"] != "Alpha" {
		t.Errorf("3.1 honours the name: %v", obj(created.body)["name"])
	}
	_, wantProject := sample(t, "v3.1.0a2/project.json")
	sameKeys(t, "3.1 project", wantProject, do(t, s, AdminToken, "GET", "/v3/projects/"+pid, nil).body)
}

func TestErrorsMatchSamples(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab", ProjectID("b9655f35-c5ad-4066-9346-426692ccaa91"))
	a := s.AddNode(pid, NodeSpec{})
	b := s.AddNode(pid, NodeSpec{})
	c := s.AddNode(pid, NodeSpec{})
	s.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)
	s.AddUser("student1", "student-token", false)

	cases := []struct {
		sample string
		got    call
	}{
		{"users-me-no-token-401.json", do(t, s, "", "GET", "/v3/access/users/me", nil)},
		{"users-me-bad-token-401.json", do(t, s, "garbage", "GET", "/v3/access/users/me", nil)},
		{"authenticate-wrong-password-401.json", do(t, s, "", "POST", "/v3/access/users/authenticate", map[string]string{"username": "admin", "password": "nope"})},
		{"project-unknown-404.json", do(t, s, AdminToken, "GET", "/v3/projects/00000000-0000-0000-0000-000000000000", nil)},
		{"project-get-other-user-403.json", do(t, s, "student-token", "GET", "/v3/projects/"+pid, nil)},
		{"projects-list-regular-user.json", do(t, s, "student-token", "GET", "/v3/projects", nil)},
		{"node-get-unknown-404.json", do(t, s, AdminToken, "GET", "/v3/projects/"+pid+"/nodes/00000000-0000-0000-0000-000000000000", nil)},
		{"node-get-bad-uuid-422.json", do(t, s, AdminToken, "GET", "/v3/projects/"+pid+"/nodes/not-a-uuid", nil)},
		{"node-start-nobody-422.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+a.ID+"/start", nil)},
		{"node-start-204.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+a.ID+"/start", map[string]any{})},
		{"node-rename-duplicate.json", do(t, s, AdminToken, "PUT", "/v3/projects/"+pid+"/nodes/"+a.ID, map[string]string{"name": "X"})},
		{"node-suspend.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+b.ID+"/suspend", nil)},
		{"node-reload.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+b.ID+"/reload", nil)},
		{"nodes-start-all-204.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/start", nil)},
		{"template-usage-missing-xy-422.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]any{})},
		{"link-create-port-in-use-409.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/links", map[string]any{"nodes": []map[string]any{
			{"node_id": a.ID, "adapter_number": 0, "port_number": 0}, {"node_id": c.ID, "adapter_number": 0, "port_number": 0}}})},
		{"link-create-bad-port.json", do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/links", map[string]any{"nodes": []map[string]any{
			{"node_id": c.ID, "adapter_number": 5, "port_number": 0}, {"node_id": b.ID, "adapter_number": 0, "port_number": 0}}})},
	}
	for _, tc := range cases {
		status, body := sample(t, "v3.0.6/"+tc.sample)
		if tc.got.status != status {
			t.Errorf("%s: status %d, real server %d (%s)", tc.sample, tc.got.status, status, tc.got.raw)
			continue
		}
		if status == 204 {
			if len(tc.got.raw) != 0 {
				t.Errorf("%s: 204 with a body %q", tc.sample, tc.got.raw)
			}
			continue
		}
		wantJSON, _ := json.Marshal(body)
		gotJSON, _ := json.Marshal(tc.got.body)
		if tc.sample == "link-create-bad-port.json" {
			// The real capture names its own node; compare the form.
			wantJSON = []byte(strings.Replace(string(wantJSON), "PC3", c.Name, 1))
		}
		if string(wantJSON) != string(gotJSON) {
			t.Errorf("%s:\nreal: %s\nfake: %s", tc.sample, wantJSON, gotJSON)
		}
	}
}

func TestNamesConsolesAndState(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	var names []string
	var consoles []int
	for i := 0; i < 3; i++ {
		r := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]int{"x": i * 250, "y": 0})
		names = append(names, obj(r.body)["name"].(string))
		consoles = append(consoles, int(obj(r.body)["console"].(float64)))
	}
	if strings.Join(names, ",") != "PC1,PC2,PC3" || consoles[1] != consoles[0]+2 {
		t.Fatalf("names %v consoles %v", names, consoles)
	}
	nodes := s.Nodes(pid)
	// Renaming to a taken name is renumbered (and spaces dropped), as GNS3 does.
	s.AddNode(pid, NodeSpec{Name: "Core"})
	r := do(t, s, AdminToken, "PUT", "/v3/projects/"+pid+"/nodes/"+nodes[2].ID, map[string]string{"name": "Co re"})
	if r.status != 200 || obj(r.body)["name"] != "Core1" {
		t.Fatalf("rename to taken name: %d %v", r.status, r.body)
	}
	// Deleting frees the name; the next node reuses it.
	do(t, s, AdminToken, "DELETE", "/v3/projects/"+pid+"/nodes/"+nodes[0].ID, nil)
	r = do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]int{"x": 0, "y": 500})
	if obj(r.body)["name"] != "PC1" {
		t.Fatalf("freed name not reused: %v", obj(r.body)["name"])
	}
	sw := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+EthernetSwitchTemplateID, map[string]int{"x": 0, "y": 0})
	if obj(sw.body)["console"] != nil || obj(sw.body)["status"] != "started" || len(obj(sw.body)["ports"].([]any)) != 8 {
		t.Fatalf("switch: %s", sw.raw)
	}
}

func TestInjectionPollsCountsAndConsole(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	n := s.AddNode(pid, NodeSpec{})
	s.FailNext(OpStartNode, n.ID, 500, "boom")
	if r := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+n.ID+"/start", map[string]any{}); r.status != 500 {
		t.Fatalf("injected: %d", r.status)
	}
	if got, _ := s.Node(n.ID); got.Status != "stopped" {
		t.Fatal("a failure before apply must not change state")
	}
	s.SetStartPolls(n.ID, 2)
	do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/nodes/"+n.ID+"/start", map[string]any{})
	var seen []string
	for i := 0; i < 3; i++ {
		seen = append(seen, obj(do(t, s, AdminToken, "GET", "/v3/projects/"+pid+"/nodes/"+n.ID, nil).body)["status"].(string))
	}
	if strings.Join(seen, ",") != "stopped,stopped,started" {
		t.Fatalf("polls: %v", seen)
	}
	if s.Count(OpStartNode) != 2 || s.Count(OpGetNode) != 3 {
		t.Fatalf("counts: %v", s.Counts())
	}
	s.Inject(Failure{Op: OpCreateNode, Status: 500, Message: "lost", Times: 1, AfterApply: true})
	if r := do(t, s, AdminToken, "POST", "/v3/projects/"+pid+"/templates/"+VPCSTemplateID, map[string]int{"x": 0, "y": 0}); r.status != 500 {
		t.Fatalf("after-apply: %d", r.status)
	}
	if len(s.Nodes(pid)) != 2 {
		t.Fatal("after-apply failure must still create the node")
	}
	s.SetConsole(n.ID, "127.0.0.1", 7777)
	got := obj(do(t, s, AdminToken, "GET", "/v3/projects/"+pid+"/nodes/"+n.ID, nil).body)
	if got["console"].(float64) != 7777 || got["console_host"] != "127.0.0.1" {
		t.Fatalf("console: %v", got)
	}
}

func TestPermissions(t *testing.T) {
	s := New(t)
	mine := s.AddProject("mine")
	other := s.AddProject("other")
	uid := s.AddUser("alice", "alice-token", false)
	s.Grant(mine, "alice")
	s.AddGroup("alice", "students")
	list := do(t, s, "alice-token", "GET", "/v3/projects", nil).body.([]any)
	if len(list) != 1 || obj(list[0])["project_id"] != mine {
		t.Fatalf("alice sees %v", list)
	}
	if r := do(t, s, "alice-token", "GET", "/v3/projects/"+other+"/nodes", nil); r.status != 403 {
		t.Fatalf("other project: %d", r.status)
	}
	if r := do(t, s, "alice-token", "GET", "/v3/access/users/"+uid+"/groups", nil); r.status != 200 || len(r.body.([]any)) != 1 {
		t.Fatalf("own groups: %d %s", r.status, r.raw)
	}
	s.SetPassword("alice", "pw")
	r := do(t, s, "", "POST", "/v3/access/users/authenticate", map[string]string{"username": "alice", "password": "pw"})
	if r.status != 200 || obj(r.body)["access_token"] != "alice-token" {
		t.Fatalf("authenticate: %d %s", r.status, r.raw)
	}
}

func TestCaptureStartStopAndLiveStream(t *testing.T) {
	s := New(t)
	pid := s.AddProject("lab")
	a := s.AddNode(pid, NodeSpec{Name: "PC1"})
	b := s.AddNode(pid, NodeSpec{Name: "PC2"})
	l := s.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)
	base := "/v3/projects/" + pid + "/links/" + l.ID + "/capture/"

	if c := do(t, s, AdminToken, "GET", base+"stream", nil); c.status != http.StatusConflict {
		t.Fatalf("stream without a capture: %d", c.status)
	}
	status, want := sample(t, "v3.0.6/link-capture-start-201.json")
	c := do(t, s, AdminToken, "POST", base+"start", map[string]string{"data_link_type": "DLT_EN10MB"})
	if c.status != status {
		t.Fatalf("start: %d %s", c.status, c.raw)
	}
	sameKeys(t, "capture start", want, c.body)
	if !obj(c.body)["capturing"].(bool) || !s.Capturing(l.ID) {
		t.Fatal("the link does not capture")
	}
	if got := obj(do(t, s, AdminToken, "GET", "/v3/projects/"+pid+"/links/"+l.ID, nil).body); got["capturing"] != true || got["capture_file_name"] == nil {
		t.Fatalf("link read while capturing: %v", got)
	}

	s.SetCaptureFeed(l.ID, CaptureFeed{Data: SampleCapture(), Chunk: 7, Delay: time.Millisecond})
	req, _ := http.NewRequest("GET", s.URL+base+"stream", nil)
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The header comes at once, then the records in pieces; the stream stays open until stop.
	got := make([]byte, 0, len(samplePcap))
	buf := make([]byte, 4096)
	reads := 0
	for len(got) < len(samplePcap) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		reads++
		if err != nil {
			t.Fatalf("stream ended after %d of %d bytes: %v", len(got), len(samplePcap), err)
		}
	}
	if !bytes.Equal(got, samplePcap) || reads < 10 {
		t.Fatalf("stream: %d bytes in %d reads", len(got), reads)
	}
	ended := make(chan error, 1)
	go func() { _, err := resp.Body.Read(buf); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("the stream ended while capturing: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if c := do(t, s, AdminToken, "POST", base+"stop", nil); c.status != http.StatusNoContent {
		t.Fatalf("stop: %d", c.status)
	}
	if err := <-ended; err != io.EOF {
		t.Fatalf("after stop the stream must end: %v", err)
	}
	if s.Capturing(l.ID) || s.Count(OpStreamCapture) != 2 || s.Count(OpStartCapture) != 1 {
		t.Fatalf("state after stop: capturing %v, counts %v", s.Capturing(l.ID), s.Counts())
	}
}
