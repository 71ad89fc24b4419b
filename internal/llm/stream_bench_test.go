package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// benchStream measures a streamed call of 400 words against the fake emulating p, with reply,
// for a configuration of provider and model: the time to the first token and to the end, per
// call.
func benchStream(b *testing.B, reply fakeopenai.Reply, p fakeopenai.Provider, provider, model string) {
	srv := fakeopenai.New(b)
	srv.Emulate(p)
	srv.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) { return reply, true })
	s := trusted(srv.URL)
	s.Provider, s.Model = provider, model
	c := NewClient(nil, nil)
	var ttft, total time.Duration
	for b.Loop() {
		ans, err := c.Stream(context.Background(), s, hello, Deltas{})
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(ans.Content, "<think>") || ans.Reasoning == "" && len(reply.Reasoning) > 0 {
			b.Fatal("the reasoning was not split from the answer")
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
	benchStream(b, fakeopenai.Reply{Content: benchWords}, fakeopenai.OpenAI, "openai", "gpt-4o-mini")
}

// BenchmarkStreamThinking is the same answer after as many words of reasoning_content.
func BenchmarkStreamThinking(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Reasoning: benchWords, Content: benchWords}, fakeopenai.DeepSeekThinking, "deepseek", "deepseek-v4-pro")
}

// BenchmarkStreamThinkTags is the same with the reasoning in <think> tags inside the content.
func BenchmarkStreamThinkTags(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Reasoning: benchWords, Content: benchWords}, fakeopenai.LlamaCppThink, "custom", "qwen3-8b")
}

// BenchmarkStreamPlainTwice is a model that does not think answering with as many words as the
// thinking benchmarks stream in all: the fake builds a whole stream before its first byte, so
// this, not BenchmarkStreamPlain, is the one whose time to the first token theirs compare with.
func BenchmarkStreamPlainTwice(b *testing.B) {
	benchStream(b, fakeopenai.Reply{Content: append(append([]string(nil), benchWords...), benchWords...)}, fakeopenai.OpenAI, "openai", "gpt-4o-mini")
}
