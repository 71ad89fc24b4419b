package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// BenchmarkTimeToFirstTokenThinking measures what reasoning handling adds to the first thing a
// user sees, through the whole copilot: a model that does not think (its first answer word, a
// content frame) against one that does (its first reasoning word, a reasoning frame). Both are
// DeepSeek V4 (emulated), each a user's own configuration on a fake of its own, and answer after
// the same role chunk with 800 words: the thinking one 400 of reasoning_content, then 400 of
// answer. So what differs is the reasoning's path alone: its deltas, the reasoning events. The two alternate within each iteration, so a machine whose load
// changes weighs on both alike; switching the user's default between them is not timed. It
// reports each one's p50 and p99 and the thinking one's over the plain one's (ratio-p50).
//
//	go test -run '^$' -bench TimeToFirstTokenThinking -benchtime 40x ./e2e
func BenchmarkTimeToFirstTokenThinking(b *testing.B) {
	env := e2eenv.Start(b, e2eenv.Options{})
	userID := myUserID(b, env)
	words := fakeopenai.Words(strings.Repeat("R1 is up and its OSPF neighbours are in FULL state. ", 40))
	title := func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		return fakeopenai.Text("Benchmark"), true
	}
	plain, thinking := fakeopenai.New(b), fakeopenai.New(b)
	plain.Emulate(fakeopenai.DeepSeekThinking)
	plain.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return title(req)
		}
		// As many chunks as the thinking model's reasoning and answer: the fake builds a reply's
		// whole stream before its first byte, so unequal lengths would weigh on the first token.
		return fakeopenai.Reply{Content: append(append([]string(nil), words...), words...)}, true
	})
	thinking.Emulate(fakeopenai.DeepSeekThinking)
	thinking.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return title(req)
		}
		return fakeopenai.Reply{Reasoning: words, Content: words}, true
	})
	plainID := useConfig(b, env, userID, "deepseek", "deepseek-flash", plain.URL)
	thinkingID := useConfig(b, env, userID, "deepseek", "deepseek-flash", thinking.URL)
	base := "/v3/access/users/" + userID + "/llm-model-configs/default/"

	// first is the time from the message to the first frame of kind, through the copilot.
	first := func(kind string) time.Duration {
		began := time.Now()
		s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "")
		defer s.Close()
		var took time.Duration
		for {
			f, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if took == 0 && f.Event == kind {
				took = time.Since(began)
			}
			if f.Event == "done" {
				if took == 0 {
					b.Fatalf("no %s frame in the turn", kind)
				}
				return took
			}
		}
	}
	use := func(id string) {
		if code, body := env.Do(http.MethodPut, base+id, nil); code != http.StatusOK {
			b.Fatalf("choosing %s: %d %s", id, code, body)
		}
	}
	// Warm both paths (the project's subscription, the caches, each fake's connection).
	use(plainID)
	first("content")
	use(thinkingID)
	first("reasoning")

	var plainTTFT, thinkingTTFT []time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		use(plainID)
		b.StartTimer()
		plainTTFT = append(plainTTFT, first("content"))
		b.StopTimer()
		use(thinkingID)
		b.StartTimer()
		thinkingTTFT = append(thinkingTTFT, first("reasoning"))
	}
	b.StopTimer()
	p, th := percentilesOf(plainTTFT), percentilesOf(thinkingTTFT)
	p.report(b, "plain-", percentiles{})
	th.report(b, "thinking-", percentiles{})
	b.ReportMetric(float64(th.p50)/float64(p.p50), "ratio-p50")
	b.ReportMetric(float64(th.p99)/float64(p.p99), "ratio-p99")
}
