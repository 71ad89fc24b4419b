package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// sseServer serves one turn's stream at /s/<turn> from log, and reports on ended each time a
// stream handler returns.
func sseServer(t testing.TB, log relay.Log, d Deps) (*httptest.Server, <-chan struct{}) {
	d.Events = log
	s := newTestServer(d)
	ended := make(chan struct{}, 1024)
	engine := gin.New()
	engine.GET("/s/:turn", func(c *gin.Context) {
		defer func() { ended <- struct{}{} }()
		s.streamTurn(c, "session", c.Param("turn"), "", true)
	})
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return srv, ended
}

// A client that stops reading must not hold its stream forever: once the socket buffers are
// full, the write deadline ends the handler.
func TestStalledSSEClientIsDropped(t *testing.T) {
	log := relay.NewMemory(relay.MemoryOptions{})
	defer log.Close()
	big, _ := json.Marshal(relay.Payload{Type: relay.TypeToolEnd, ToolOutput: strings.Repeat("x", 256<<10)})
	for range 64 { // 16 MiB: more than any socket buffer holds
		if _, err := log.Append(context.Background(), "turn", relay.TypeToolEnd, big); err != nil {
			t.Fatal(err)
		}
	}
	srv, ended := sseServer(t, log, Deps{WriteTimeout: 300 * time.Millisecond, Heartbeat: time.Hour})

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /s/turn HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the stream of a client that stopped reading was still being written after 20s")
	}
}

// A client that reads gets every frame through the same writer, up to and including done.
func TestSSEStreamEndsAtDone(t *testing.T) {
	log := relay.NewMemory(relay.MemoryOptions{})
	defer log.Close()
	ctx := context.Background()
	for i := range 3 {
		d, _ := json.Marshal(relay.Payload{Type: relay.TypeContent, Content: fmt.Sprint(i)})
		if _, err := log.Append(ctx, "turn", relay.TypeContent, d); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := sseServer(t, log, Deps{Heartbeat: 20 * time.Millisecond})
	resp, err := http.Get(srv.URL + "/s/turn")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	readEvent := func() string {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended early: %v", err)
			}
			if ev, ok := strings.CutPrefix(line, "event: "); ok {
				return strings.TrimSpace(ev)
			}
		}
	}
	for range 3 {
		if ev := readEvent(); ev != relay.TypeContent {
			t.Fatalf("got %s, want content", ev)
		}
	}
	if ev := readEvent(); ev != relay.TypeHeartbeat {
		t.Fatalf("an idle stream sent %s, want a heartbeat", ev)
	}
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone})
	if _, _, err := log.AppendTerminal(ctx, "turn", relay.TypeDone, done, time.Hour); err != nil {
		t.Fatal(err)
	}
	for {
		if ev := readEvent(); ev == relay.TypeDone {
			break
		}
	}
	if rest, err := io.ReadAll(rd); err != nil || string(rest) != "data: "+string(done)+"\n\n" {
		t.Fatalf("after done's event line the stream sent %q (%v), want its data and the end", rest, err)
	}
}

// BenchmarkIdleSSEClients measures what an SSE client costs the API while its turn is silent:
// N raw TCP clients (a socket each, no goroutine on the client side) follow N running turns on
// the embedded default's SQLite log; the heap, stack and goroutine growth is divided by N.
//
//	go test -run '^$' -bench IdleSSEClients -benchtime 1x ./api
func BenchmarkIdleSSEClients(b *testing.B) {
	const n = 1000
	events, err := relay.OpenSQLite(filepath.Join(b.TempDir(), "events.db"), relay.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer events.Close()
	srv, _ := sseServer(b, events, Deps{Heartbeat: time.Hour})
	for b.Loop() {
		before := memNow()
		conns := make([]net.Conn, 0, n)
		for i := range n {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
			fmt.Fprintf(c, "GET /s/turn-%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		}
		// Every stream is up once its response headers arrived.
		for _, c := range conns {
			rd := bufio.NewReader(c)
			if line, err := rd.ReadString('\n'); err != nil || !strings.Contains(line, "200") {
				b.Fatalf("stream did not start: %q %v", line, err)
			}
		}
		after := memNow()
		b.ReportMetric(float64(after.heap-before.heap)/n, "heap-B/client")
		b.ReportMetric(float64(after.stack-before.stack)/n, "stack-B/client")
		b.ReportMetric(float64(after.goroutines-before.goroutines)/n, "goroutines/client")
		for _, c := range conns {
			c.Close()
		}
	}
}

type memSample struct {
	heap, stack uint64
	goroutines  int
}

func memNow() memSample {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memSample{heap: m.HeapInuse, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}
