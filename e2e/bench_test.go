package e2e

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sort"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// BenchmarkTimeToFirstToken compares how long a user waits for the first word: straight from
// the (fake) model with go-openai, and through the whole copilot (auth, project check, turn
// and session rows, workflow start, activity scheduling, topology for the system prompt, the
// model call, the event log and SSE).
//
//	go test -run '^$' -bench TimeToFirstToken -benchtime 30x ./e2e
func BenchmarkTimeToFirstToken(b *testing.B) {
	env := e2eenv.Start(b, e2eenv.Options{})
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Title"), true
		}
		return fakeopenai.Reply{Content: fakeopenai.Words("first token then the rest of the answer")}, true
	})

	b.Run("direct", func(b *testing.B) {
		cfg := openai.DefaultConfig(e2eenv.LLMKey)
		cfg.BaseURL = env.LLM.URL
		client := openai.NewClientWithConfig(cfg)
		req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		for b.Loop() {
			s, err := client.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			for {
				chunk, err := s.Recv()
				if err != nil {
					b.Fatalf("no content before %v", err)
				}
				if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
					break
				}
			}
			b.StopTimer()
			for {
				if _, err := s.Recv(); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
			b.StartTimer()
		}
	})

	b.Run("service", func(b *testing.B) {
		for b.Loop() {
			s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "")
			for {
				f, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				if f.Event == "content" {
					break
				}
			}
			b.StopTimer()
			s.UntilDone(b, true)
			s.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkTimeToFirstTokenSlowGNS3 measures the time to first token against a GNS3 that takes
// 8 ms per request, like a real controller: straight from the model, then through a copilot with
// the live topology (package livetopo) and through one without it (every project check and
// system prompt reads GNS3). The three are measured in turn within each iteration, so a machine
// whose load changes during the run weighs on all three alike. It reports each one's p50 and
// p99, what each copilot adds over the model's own (live-added-p50-ms, nolive-added-p99-ms, …),
// and the GNS3 requests per turn (the notification stream aside). The lab has 10 nodes and 9
// links. A user's first message also opens the project's subscription and fills the short-lived
// token and access caches: it is not measured, so these are the figures of a user typing one
// message after another (the caches live 30 s; TestHotPathMakesNoGNS3Requests counts the
// requests). BenchmarkTimeToFirstTokenSlowGNS3AfterPause measures the first message after a
// pause longer than that.
//
//	go test -run '^$' -bench 'TimeToFirstTokenSlowGNS3$' -benchtime 50x ./e2e
func BenchmarkTimeToFirstTokenSlowGNS3(b *testing.B) { slowGNS3TTFT(b, 0) }

// BenchmarkTimeToFirstTokenSlowGNS3AfterPause is BenchmarkTimeToFirstTokenSlowGNS3 for a user
// whose previous message is older than the token, access and group checks are trusted (shortened
// to 100 ms here, 30 s in service): each measured turn checks them with GNS3 again.
//
//	go test -run '^$' -bench TimeToFirstTokenSlowGNS3AfterPause -benchtime 50x ./e2e
func BenchmarkTimeToFirstTokenSlowGNS3AfterPause(b *testing.B) { slowGNS3TTFT(b, 100*time.Millisecond) }

// slowGNS3TTFT runs the slow-GNS3 benchmarks; checkTTL > 0 shortens the service's check caches
// to it and waits that long between two turns of one copilot (outside the timer).
func slowGNS3TTFT(b *testing.B, checkTTL time.Duration) {
	const gns3Latency = 8 * time.Millisecond
	reply := func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Title"), true
		}
		return fakeopenai.Reply{Content: fakeopenai.Words("first token then the rest of the answer")}, true
	}
	start := func(noLive bool) *e2eenv.Env {
		env := e2eenv.Start(b, e2eenv.Options{GNS3: []fakegns3.Option{fakegns3.WithLatency(gns3Latency)}, NoLiveTopology: noLive,
			Configure: func(c *app.Config) { c.CheckCacheTTL = checkTTL }})
		env.LLM.SetHandler(reply)
		var prev fakegns3.Node
		for i := 0; i < 10; i++ {
			n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, X: 250 * (i % 5), Y: 250 * (i / 5), Status: "started"})
			if i > 0 {
				env.GNS3.AddLink(env.ProjectID, prev.ID, 1, 0, n.ID, 0, 0)
			}
			prev = n
		}
		return env
	}
	live, noLive := start(false), start(true)

	cfg := openai.DefaultConfig(e2eenv.LLMKey)
	cfg.BaseURL = live.LLM.URL
	client := openai.NewClientWithConfig(cfg)
	modelReq := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	model := func() time.Duration {
		start := time.Now()
		s, err := client.CreateChatCompletionStream(context.Background(), modelReq)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for {
			chunk, err := s.Recv()
			if err != nil {
				b.Fatalf("no content before %v", err)
			}
			if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				break
			}
		}
		d := time.Since(start)
		b.StopTimer()
		for {
			if _, err := s.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		return d
	}
	lastEnd := map[*e2eenv.Env]time.Time{}
	ttft := func(env *e2eenv.Env) time.Duration {
		if wait := checkTTL + 10*time.Millisecond - time.Since(lastEnd[env]); checkTTL > 0 && wait > 0 {
			b.StopTimer()
			time.Sleep(wait) // the pause since the user's previous message is what is measured
			b.StartTimer()
		}
		start := time.Now()
		s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "")
		for {
			f, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if f.Event == "content" {
				break
			}
		}
		d := time.Since(start)
		b.StopTimer()
		s.UntilDone(b, true)
		s.Close()
		lastEnd[env] = time.Now()
		b.StartTimer()
		return d
	}
	ttft(live)
	ttft(noLive)
	live.GNS3.ResetCounts()
	noLive.GNS3.ResetCounts()
	var dm, dl, dn []time.Duration
	for b.Loop() {
		dm = append(dm, model())
		dl = append(dl, ttft(live))
		dn = append(dn, ttft(noLive))
	}
	m := percentilesOf(dm)
	m.report(b, "model-", percentiles{})
	percentilesOf(dl).report(b, "live-", m)
	percentilesOf(dn).report(b, "nolive-", m)
	for prefix, env := range map[string]*e2eenv.Env{"live-": live, "nolive-": noLive} {
		total := 0
		for op, n := range env.GNS3.Counts() {
			if op != fakegns3.OpNotifications {
				total += n
			}
		}
		b.ReportMetric(float64(total)/float64(len(dl)), prefix+"gns3-req/turn")
	}
}

type percentiles struct{ p50, p99 time.Duration }

func percentilesOf(ds []time.Duration) percentiles {
	if len(ds) == 0 {
		return percentiles{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return percentiles{p50: at(0.50), p99: at(0.99)}
}

func (p percentiles) report(b *testing.B, prefix string, model percentiles) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p.p50), prefix+"p50-ms")
	b.ReportMetric(ms(p.p99), prefix+"p99-ms")
	if model != (percentiles{}) {
		b.ReportMetric(ms(p.p50-model.p50), prefix+"added-p50-ms")
		b.ReportMetric(ms(p.p99-model.p99), prefix+"added-p99-ms")
	}
}
