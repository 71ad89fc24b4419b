package llmconfig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/sashabaranov/go-openai"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestErrorClass(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&openai.APIError{HTTPStatusCode: 401}, ErrorAuth},
		{&openai.RequestError{HTTPStatusCode: 403}, ErrorAuth},
		{&openai.APIError{HTTPStatusCode: 429}, ErrorRateLimit},
		{&openai.APIError{HTTPStatusCode: 503}, ErrorServer},
		{&openai.RequestError{HTTPStatusCode: 504}, ErrorTimeout},
		{&openai.APIError{HTTPStatusCode: 400}, ErrorBadRequest},
		{&openai.APIError{Message: "overloaded"}, ErrorServer}, // in the middle of a stream
		{fmt.Errorf("reading: %w", context.DeadlineExceeded), ErrorTimeout},
		{timeoutErr{}, ErrorTimeout},
		{context.Canceled, ErrorCancelled},
		{refused, ErrorNetwork},
		{errors.New("something else"), ErrorOther},
	} {
		if got := ErrorClass(c.err); got != c.want {
			t.Errorf("ErrorClass(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
