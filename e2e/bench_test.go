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
// 8 ms per request, like a real controller: straight from the model, then through the copilot
// with the live topology (package livetopo) and without it (every project check and system
// prompt reads GNS3), in one run. Each copilot case reports its p50 and p99 and what it adds
// over the model's own (added-p50-ms, added-p99-ms), and the GNS3 requests per turn
// (gns3-req/turn). The lab has 10 nodes and 9 links.
//
//	go test -run '^$' -bench TimeToFirstTokenSlowGNS3 -benchtime 50x ./e2e
func BenchmarkTimeToFirstTokenSlowGNS3(b *testing.B) {
	const gns3Latency = 8 * time.Millisecond
	reply := func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Title"), true
		}
		return fakeopenai.Reply{Content: fakeopenai.Words("first token then the rest of the answer")}, true
	}
	var model percentiles

	b.Run("model", func(b *testing.B) {
		llm := fakeopenai.New(b)
		llm.SetHandler(reply)
		cfg := openai.DefaultConfig("key")
		cfg.BaseURL = llm.URL
		client := openai.NewClientWithConfig(cfg)
		req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Stream: true,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
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
			ds = append(ds, time.Since(start))
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
		model = percentilesOf(ds)
		model.report(b, percentiles{})
	})

	for _, tc := range []struct {
		name   string
		noLive bool
	}{{"live-topology", false}, {"no-live-topology", true}} {
		b.Run(tc.name, func(b *testing.B) {
			env := e2eenv.Start(b, e2eenv.Options{GNS3: []fakegns3.Option{fakegns3.WithLatency(gns3Latency)}, NoLiveTopology: tc.noLive})
			env.LLM.SetHandler(reply)
			var prev fakegns3.Node
			for i := 0; i < 10; i++ {
				n := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, X: 250 * (i % 5), Y: 250 * (i / 5), Status: "started"})
				if i > 0 {
					env.GNS3.AddLink(env.ProjectID, prev.ID, 1, 0, n.ID, 0, 0)
				}
				prev = n
			}
			ttft := func() time.Duration {
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
				b.StartTimer()
				return d
			}
			ttft() // a user's first message also opens the project's subscription: not the steady state
			env.GNS3.ResetCounts()
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, ttft())
			}
			percentilesOf(ds).report(b, model)
			// The GNS3 requests a whole turn makes (the notification stream aside): what the
			// live topology saves, independent of how busy the machine is.
			total := 0
			for op, n := range env.GNS3.Counts() {
				if op != fakegns3.OpNotifications {
					total += n
				}
			}
			b.ReportMetric(float64(total)/float64(len(ds)), "gns3-req/turn")
		})
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

func (p percentiles) report(b *testing.B, model percentiles) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p.p50), "p50-ms")
	b.ReportMetric(ms(p.p99), "p99-ms")
	if model != (percentiles{}) {
		b.ReportMetric(ms(p.p50-model.p50), "added-p50-ms")
		b.ReportMetric(ms(p.p99-model.p99), "added-p99-ms")
	}
}
