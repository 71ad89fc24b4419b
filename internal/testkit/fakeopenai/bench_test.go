package fakeopenai_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// BenchmarkTimeToFirstToken measures, straight from the fake through
// go-openai, the time from starting a streamed request to reading the first
// content delta. It is the floor that time-to-first-token through the
// service is compared with. The reply sends its first token without delay.
func BenchmarkTimeToFirstToken(b *testing.B) {
	srv := fakeopenai.New(b)
	reply := fakeopenai.Text("R1 is up; Gi0/0 is 10.0.0.1/30 and the link to R2 carries OSPF area 0 with two neighbours in FULL state.")
	srv.SetHandler(func(fakeopenai.Request) (fakeopenai.Reply, bool) { return reply, true })
	c := client(srv.URL, "sk-bench")
	req := openai.ChatCompletionRequest{
		Model:         "gpt-4o-mini",
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "How is R1?"}},
	}
	ctx := context.Background()

	var ttft, total time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		stream, err := c.CreateChatCompletionStream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		first := false
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if !first && len(resp.Choices) > 0 && resp.Choices[0].Delta.Content != "" {
				first = true
				ttft += time.Since(start)
			}
		}
		total += time.Since(start)
		stream.Close()
		if !first {
			b.Fatal("no content")
		}
	}
	b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ns-ttft/op")
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns-stream/op")
}
