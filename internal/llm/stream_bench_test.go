package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// benchStream measures a streamed call of 400 words against the fake, with reply: the time to
// the first token and to the end, per call.
func benchStream(b *testing.B, reply fakeopenai.Reply, emulate func(*fakeopenai.Server)) {
	srv := fakeopenai.New(b)
	if emulate != nil {
		emulate(srv)
	}
	srv.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) { return reply, true })
	s := trusted(srv.URL)
	if emulate != nil {
		s.Provider, s.Model = "deepseek", "deepseek-v4-pro"
	}
	c := NewClient(nil, nil)
	var ttft, total time.Duration
	for b.Loop() {
		ans, err := c.Stream(context.Background(), s, hello, Deltas{})
		if err != nil {
			b.Fatal(err)
		}
		ttft += ans.FirstToken
		total += ans.Took
	}
	b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "µs-first-token")
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-call")
}

var benchWords = fakeopenai.Words(strings.Repeat("R1 is up and its OSPF neighbours are in FULL state. ", 40))

// BenchmarkStreamPlain is a model that does not think: what reading a stream costs.
func BenchmarkStreamPlain(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Content: benchWords}, nil)
}

// BenchmarkStreamThinking is the same answer after as many words of reasoning_content.
func BenchmarkStreamThinking(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Reasoning: benchWords, Content: benchWords},
		func(s *fakeopenai.Server) { s.Emulate(fakeopenai.DeepSeekThinking) })
}

// BenchmarkStreamThinkTags is the same with the reasoning in <think> tags inside the content.
func BenchmarkStreamThinkTags(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Reasoning: benchWords, Content: benchWords},
		func(s *fakeopenai.Server) { s.Emulate(fakeopenai.LlamaCppThink) })
}
