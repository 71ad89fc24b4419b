// Package realgns3 connects tests to a real GNS3 server, the one ../shared/gns3-lab builds
// (GNS3 v3.0.6 with real VPCS and uBridge). The fake GNS3 serves the fast tests; a flow whose
// outcome depends on GNS3's own rules (snapshots of a running lab, link filters, restores that
// renew every id) is judged here. The server is named by GNS3COPILOT_TEST_GNS3_URL; without it a
// test skips, except in CI, where .ci/run starts the server and a missing one is a failure.
//
// Each test works in a project of its own, with a unique name, deleted when the test ends:
// several tests and several runs share one server.
package realgns3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// Environment variables that name the server and the account the tests sign in with.
const (
	EnvURL      = "GNS3COPILOT_TEST_GNS3_URL"
	EnvUser     = "GNS3COPILOT_TEST_GNS3_USER"
	EnvPassword = "GNS3COPILOT_TEST_GNS3_PASSWORD"
)

// VPCSTemplate is GNS3's built-in VPCS template, the same id on every server.
const VPCSTemplate = "52136454-1f50-590a-94e4-816bd02d1062"

// Server is a real GNS3 signed in as the tests' account.
type Server struct {
	URL      string
	User     string
	Password string
	// Token is the account's access token.
	Token  string
	API    *gns3.Server
	Client *gns3.Client
	http   *http.Client
}

// Require returns the server named by GNS3COPILOT_TEST_GNS3_URL, signed in (admin/admin unless
// GNS3COPILOT_TEST_GNS3_USER and _PASSWORD say otherwise). Without it the test is skipped, or
// fails when CI=true.
func Require(t testing.TB) *Server {
	t.Helper()
	base := strings.TrimRight(os.Getenv(EnvURL), "/")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a real GNS3 is required in CI: %s is unset (.ci/run builds and starts ../shared/gns3-lab)", EnvURL)
		}
		t.Skipf("skipping: no real GNS3 (set %s=http://127.0.0.1:3080 after ../shared/gns3-lab/setup.sh && start.sh)", EnvURL)
	}
	user, password := os.Getenv(EnvUser), os.Getenv(EnvPassword)
	if user == "" {
		user, password = "admin", "admin"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api := gns3.NewServer(base, 30*time.Second)
	tok, err := api.Authenticate(ctx, user, password)
	if err != nil {
		t.Fatalf("signing in to the real GNS3 at %s as %s: %v", base, user, err)
	}
	return &Server{URL: base, User: user, Password: password, Token: tok.AccessToken, API: api,
		Client: api.WithToken(tok.AccessToken), http: &http.Client{Timeout: 60 * time.Second}}
}

// Host is where consoles listen when a node's console_host is unspecified.
func (s *Server) Host() string { return s.API.Host() }

// Do sends one request with the account's token and decodes a JSON answer into out (when not
// nil). A status of 300 or more is an error that carries GNS3's message.
func (s *Server) Do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Project is a project of the test's own on the real server.
type Project struct {
	ID   string
	Name string
	s    *Server
}

var seq atomic.Int64

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// NewProject creates an opened project with a name no other test or run uses, and deletes it
// when the test ends (GNS3 stops its nodes first).
func (s *Server) NewProject(t testing.TB) *Project {
	t.Helper()
	name := unsafeName.ReplaceAllString(t.Name(), "-")
	if len(name) > 60 {
		name = name[:60]
	}
	name = fmt.Sprintf("copilot-test-%s-%d-%d", name, time.Now().UnixNano(), seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var p struct {
		ProjectID string `json:"project_id"`
		Name      string `json:"name"`
	}
	if err := s.Do(ctx, http.MethodPost, "/v3/projects", map[string]any{"name": name}, &p); err != nil {
		t.Fatalf("creating a project on the real GNS3: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.Do(ctx, http.MethodDelete, "/v3/projects/"+url.PathEscape(p.ProjectID), nil, nil); err != nil {
			t.Errorf("deleting the test's project %s: %v", p.Name, err)
		}
	})
	return &Project{ID: p.ProjectID, Name: p.Name, s: s}
}

// AddVPCS creates n VPCS nodes from the built-in template. GNS3 names them itself (PC1, PC2, …
// in a new project).
func (p *Project) AddVPCS(t testing.TB, n int) []*gns3.Node {
	t.Helper()
	return p.AddFromTemplate(t, VPCSTemplate, n)
}

// Link joins port 0/0 of a to port 0/0 of b (a VPCS node's only port) and returns the link.
func (p *Project) Link(t testing.TB, a, b *gns3.Node) *gns3.Link {
	t.Helper()
	return p.LinkPorts(t, a, 0, b, 0)
}

// StartAll starts every node of the project and waits until GNS3 reports each started.
func (p *Project) StartAll(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.s.Client.StartAllNodes(ctx, p.ID); err != nil {
		t.Fatalf("starting the project's nodes: %v", err)
	}
	p.AwaitStatus(t, "started")
}

// AwaitStatus waits until every node of the project reports status, and returns them.
func (p *Project) AwaitStatus(t testing.TB, status string) []gns3.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		nodes, err := p.s.Client.ListNodes(ctx, p.ID)
		if err != nil {
			t.Fatalf("listing the project's nodes: %v", err)
		}
		done := true
		for _, n := range nodes {
			done = done && n.Status == status
		}
		if done {
			return nodes
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the nodes did not all become %s: %v", status, nodeStatuses(nodes))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Node finds a node of the project by name, as it is now (ids change with a restore).
func (p *Project) Node(t testing.TB, name string) *gns3.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := p.s.Client.ListNodes(ctx, p.ID)
	if err != nil {
		t.Fatalf("listing the project's nodes: %v", err)
	}
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
	t.Fatalf("the project has no node %q: %v", name, nodeStatuses(nodes))
	return nil
}

func nodeStatuses(nodes []gns3.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name + "=" + n.Status
	}
	return out
}

// Run sends one command to a VPCS node's console, as it is now, and returns the answer. A
// console is opened per command: GNS3's console proxy takes one client at a time, and the
// copilot under test must find it free.
func (p *Project) Run(t testing.TB, node, cmd string) string {
	t.Helper()
	n := p.Node(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	profile, _ := devices.ProfileByName("vpcs")
	s, err := devices.Open(ctx, n.ConsoleAddr(p.s.Host()), profile, devices.Options{})
	if err != nil {
		t.Fatalf("%s's console: %v", node, err)
	}
	defer s.Close()
	res, err := s.Run(ctx, cmd)
	if err != nil {
		t.Fatalf("%s> %s: %v", node, cmd, err)
	}
	return res.Output
}

// Ping pings address count times from a VPCS node and returns the round-trip times of the
// replies (none when nothing came back), as the copilot's traffic checks send and read a ping.
func (p *Project) Ping(t testing.TB, node, address string, count int) []time.Duration {
	t.Helper()
	addr, err := netip.ParseAddr(address)
	if err != nil {
		t.Fatalf("pinging %q: %v", address, err)
	}
	profile, _ := devices.ProfileByName("vpcs")
	cmd, ok := profile.PingCommand(addr, count)
	if !ok {
		t.Fatalf("VPCS has no ping of %d requests to %s", count, addr)
	}
	return devices.ParsePing(p.Run(t, node, cmd)).RTTs
}
