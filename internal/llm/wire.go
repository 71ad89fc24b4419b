package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"

	openai "github.com/sashabaranov/go-openai"
)

// go-openai stays the client: it builds the request line and headers (the base URL, Azure's
// deployment paths and api-version, the key) and maps a failed status to its error types. Its
// types lack the fields thinking models need (reasoning_content sent even when empty,
// reasoning_details, extra_content on tool calls), and its stream reader takes SSE comment lines
// for error text. So the one place that knows the wire (this file and the dialect) writes the
// request body itself and reads the raw response: go-openai's HTTP client is wrapped by
// exchangeDoer, which sends the body the exchange carries in the request's context and hands the
// response back to the exchange.

// exchange is one model call as the wire sees it: the body to send and what came back.
type exchange struct {
	body []byte
	// stream: the response body is read as it arrives (resp); otherwise it is read whole (raw).
	stream bool
	resp   *http.Response
	// raw is the body of a failed response, or of an unstreamed one, read whole.
	raw    []byte
	status int
}

type exchangeKey struct{}

// withExchange is ctx carrying ex to exchangeDoer.
func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// maxBody bounds an unstreamed answer or an error body read whole; maxEvent one event of a
// stream. Nothing a chat completion legitimately sends comes near them.
const (
	maxBody  = 32 << 20
	maxEvent = 16 << 20
)

// exchangeDoer is go-openai's HTTP client with the exchange's body put in and its response
// taken out.
type exchangeDoer struct{ next openai.HTTPDoer }

func (d exchangeDoer) Do(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return d.next.Do(req)
	}
	body := ex.body
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	resp, err := d.next.Do(req)
	if err != nil {
		return resp, err
	}
	ex.status = resp.StatusCode
	if ex.stream && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		ex.resp = resp
		return resp, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(raw) > maxBody {
		return nil, fmt.Errorf("the answer is larger than %d MB", maxBody>>20)
	}
	ex.raw = raw
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, nil
}

// httpFailure is a call the provider answered with an error status, with the body it sent, for
// classify to find the provider's own words in.
type httpFailure struct {
	status int
	body   []byte
	err    error
}

func (f *httpFailure) Error() string { return f.err.Error() }
func (f *httpFailure) Unwrap() error { return f.err }

// failure wraps what go-openai returned with the error body the exchange read, when there is one.
func (ex *exchange) failure(err error) error {
	if ex.raw == nil || ex.status < 400 {
		return err
	}
	return &httpFailure{status: ex.status, body: ex.raw, err: err}
}

// requestBody is req as JSON with msgs, in the dialect's shape, as its messages, and the fields
// of extra that go-openai's request lacks (a provider's own thinking controls), keys in order.
func requestBody(req openai.ChatCompletionRequest, msgs []Message, extra map[string]any) ([]byte, error) {
	wire := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		wire[i] = m.wire()
	}
	// The outer field shadows the embedded request's own messages.
	body, err := json.Marshal(struct {
		openai.ChatCompletionRequest
		Messages []wireMessage `json:"messages"`
	}{req, wire})
	if err != nil || len(extra) == 0 {
		return body, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The object's closing brace gives way to the extra fields: no second encoding of the
	// whole request, whose messages are most of it.
	out := bytes.NewBuffer(make([]byte, 0, len(body)+64*len(keys)))
	out.Write(body[:len(body)-1])
	for _, k := range keys {
		v, err := json.Marshal(extra[k])
		if err != nil {
			return nil, fmt.Errorf("the request's %s: %w", k, err)
		}
		name, _ := json.Marshal(k)
		out.WriteByte(',')
		out.Write(name)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// wireMessage is a request message as sent: OpenAI's fields, and the ones thinking models add.
type wireMessage struct {
	Role             string          `json:"role"`
	Content          string          `json:"content,omitempty"`
	Refusal          string          `json:"refusal,omitempty"`
	Name             string          `json:"name,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningDetails []rawJSON       `json:"reasoning_details,omitempty"`
	ToolCalls        []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	ExtraContent     json.RawMessage `json:"extra_content,omitempty"`
}

type wireToolCall struct {
	ID           string              `json:"id,omitempty"`
	Type         openai.ToolType     `json:"type"`
	Function     openai.FunctionCall `json:"function"`
	ExtraContent json.RawMessage     `json:"extra_content,omitempty"`
}

// rawJSON is a JSON value sent exactly as it was received.
type rawJSON = json.RawMessage

// eventReader reads the data of a server-sent event stream. Comment lines (": OPENROUTER
// PROCESSING", sent to keep a connection alive while a model thinks) and fields other than data
// are skipped, as the SSE specification says; data lines are joined until a blank line ends the
// event. A data line that follows a complete JSON value without a blank line between starts a new
// event, as the servers that leave the blank lines out mean it.
type eventReader struct {
	r *bufio.Reader
	// carry is a data line already read that belongs to the next event.
	carry    []byte
	hasCarry bool
	done     bool
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, 64<<10)}
}

var errEventTooLarge = fmt.Errorf("an event of the stream is larger than %d MB", maxEvent>>20)

// next returns the data of the next event; io.EOF after "[DONE]" or at the end of the body.
func (e *eventReader) next() ([]byte, error) {
	if e.done {
		return nil, io.EOF
	}
	var data []byte
	has := false
	if e.hasCarry {
		data, has = e.carry, true
		e.carry, e.hasCarry = nil, false
	}
	for {
		line, err := e.readLine()
		atEOF := errors.Is(err, io.EOF)
		if err != nil && !atEOF {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if has {
				return e.finish(data)
			}
		case line[0] == ':':
			// a comment
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			if string(field) != "data" {
				break
			}
			value = bytes.TrimPrefix(value, []byte(" "))
			if has && json.Valid(data) {
				e.carry, e.hasCarry = append([]byte(nil), value...), true
				return e.finish(data)
			}
			if has {
				data = append(data, '\n')
			}
			data = append(data, value...)
			has = true
			if len(data) > maxEvent {
				return nil, errEventTooLarge
			}
		}
		if atEOF {
			e.done = true
			if has {
				return e.finish(data)
			}
			return nil, io.EOF
		}
	}
}

// finish returns an event's data, or io.EOF for the stream's "[DONE]".
func (e *eventReader) finish(data []byte) ([]byte, error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		e.done = true
		return nil, io.EOF
	}
	return data, nil
}

// readLine reads one line with its end, however long, up to maxEvent.
func (e *eventReader) readLine() ([]byte, error) {
	line, err := e.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return append([]byte(nil), line...), err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(long) > maxEvent {
			return nil, errEventTooLarge
		}
		line, err = e.r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}
