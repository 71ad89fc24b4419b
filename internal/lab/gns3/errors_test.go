package gns3

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReadableValidation(t *testing.T) {
	cases := map[string]string{
		"[{'type': 'missing', 'loc': ('body',), 'msg': 'Field required', 'input': None}]":                                                                                    "body: Field required",
		"[{'type': 'missing', 'loc': ('body', 'x'), 'msg': 'Field required', 'input': {}}, {'type': 'missing', 'loc': ('body', 'y'), 'msg': 'Field required', 'input': {}}]": "body.x: Field required; body.y: Field required",
		"Port is already used": "Port is already used",
	}
	for in, want := range cases {
		if got := readableValidation(in); got != want {
			t.Errorf("readableValidation(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAPIErrorSentinelsAndText(t *testing.T) {
	const token = "secret-token-value"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/projects/p1":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message": "Project ID p1 doesn't exist"}`))
		case "/v3/projects/p2":
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"message": "[{'type': 'uuid_parsing', 'loc': ('path', 'project_id'), 'msg': 'Input should be a valid UUID', 'input': 'secret-token-value'}]"}`))
		case "/v3/projects/p3":
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"detail": "nope"}`))
		case "/v3/projects/p5":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"message": "Bad node", "internal_secret": "INTERNAL-METADATA-TOKEN-123"}`))
		case "/v3/projects/p6":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"message": "` + strings.Repeat("y", 5000) + `"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`<html>Traceback: INTERNAL-METADATA-TOKEN-123</html>`))
		}
	}))
	defer ts.Close()
	c := NewServer(ts.URL, time.Second).WithToken(token)
	ctx := context.Background()

	_, err := c.GetProject(ctx, "p1")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Project ID p1 doesn't exist") {
		t.Fatalf("404: %v", err)
	}
	_, err = c.GetProject(ctx, "p2")
	if !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), "path.project_id: Input should be a valid UUID") {
		t.Fatalf("422: %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatalf("token leaked: %v", err)
	}
	_, err = c.GetProject(ctx, "p3")
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("403: %v", err)
	}
	_, err = c.GetProject(ctx, "p4")
	if !errors.Is(err, ErrServer) || !Retryable(err) {
		t.Fatalf("500: %v", err)
	}
	// Only GNS3's message is passed on, clipped; a body that is not an error object is not.
	if strings.Contains(err.Error(), "INTERNAL") || strings.Contains(err.Error(), "html") ||
		!strings.HasSuffix(err.Error(), "500 Internal Server Error: Internal Server Error") {
		t.Fatalf("500 body reflected: %v", err)
	}
	_, err = c.GetProject(ctx, "p5")
	if !strings.HasSuffix(err.Error(), ": Bad node") || strings.Contains(err.Error(), "INTERNAL") {
		t.Fatalf("400: %v", err)
	}
	_, err = c.GetProject(ctx, "p6")
	if n := strings.Count(err.Error(), "y"); n > maxMessage || n < maxMessage-10 {
		t.Fatalf("long message kept %d characters", n)
	}
}

func TestUnreachableAndTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := NewServer("http://"+addr, time.Second)
	_, err = s.WithToken("tok").ListProjects(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "GNS3 server at http://"+addr+" is unreachable") {
		t.Fatalf("refused: %v", err)
	}
	if strings.Contains(err.Error(), "tok") {
		t.Fatalf("token leaked: %v", err)
	}

	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	s = NewServer(slow.URL, 50*time.Millisecond)
	_, err = s.WithToken("tok").ListProjects(context.Background())
	var ue *UnreachableError
	if !errors.As(err, &ue) || !ue.TimedOut || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("timeout: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.WithToken("tok").ListProjects(ctx)
	if errors.Is(err, ErrUnreachable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("caller cancel must not look like an outage: %v", err)
	}
}

func TestConsoleAddr(t *testing.T) {
	p := 5000
	for host, want := range map[string]string{"0.0.0.0": "gns3.lab:5000", "::": "gns3.lab:5000", "": "gns3.lab:5000", "10.0.0.5": "10.0.0.5:5000", "::1": "[::1]:5000"} {
		n := Node{Console: &p, ConsoleHost: host}
		if got := n.ConsoleAddr("gns3.lab"); got != want {
			t.Errorf("%q: got %q want %q", host, got, want)
		}
	}
	if (&Node{}).ConsoleAddr("h") != "" {
		t.Error("no console port must give empty address")
	}
	if NewServer("gns3.lab:3080", 0).Host() != "gns3.lab" {
		t.Error("Host")
	}
}
