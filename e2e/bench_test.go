package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
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
