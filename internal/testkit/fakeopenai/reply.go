package fakeopenai

import (
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Reply scripts one answer of the fake model. The zero Reply is a valid,
// empty assistant message that finishes with "stop".
//
// A streamed Reply is sent as: an opening chunk carrying the assistant role,
// then the body chunks (each Content piece, then the tool-call deltas), a
// chunk carrying finish_reason, the usage chunk when the request asked for it
// with stream_options.include_usage, and finally "data: [DONE]". HangAfter
// and DropAfter count the events after the opening role chunk.
type Reply struct {
	// Reasoning is what a thinking model writes before its answer, one element per streamed
	// chunk. How it travels is the emulated provider's (Server.Emulate); the plain OpenAI wire
	// sends none of it.
	Reasoning []string
	// Content is the assistant text, one element per streamed chunk.
	Content []string
	// ToolCalls are requested by the model after Content. Their arguments
	// are streamed split across several chunks.
	ToolCalls []ToolCall
	// SequentialToolCalls streams each tool call completely before the next
	// (what OpenAI itself does today); by default the deltas of parallel
	// calls are interleaved by index, the harder case for a client.
	SequentialToolCalls bool
	// FinishReason overrides the default ("tool_calls" when ToolCalls is not
	// empty, else "stop"); "length" and "content_filter" are what real
	// providers also send.
	FinishReason string
	// Usage overrides the estimated token counts.
	Usage *Usage
	// Model overrides the model name echoed back (default: the request's).
	Model string

	// Delay holds back the response headers; the wait ends early when the
	// client goes away.
	Delay time.Duration
	// FirstChunkDelay is the pause between the opening role chunk and the
	// first body chunk: the model's time to first token.
	FirstChunkDelay time.Duration
	// ChunkDelay is the pause between consecutive events after the first
	// body chunk. The first token is never delayed by it.
	ChunkDelay time.Duration

	// Hang stops the stream after HangAfter events (0: right after the role
	// chunk) and keeps the connection open until the client cancels the
	// request, as a stalled provider does. A non-streaming Hang sends nothing.
	Hang      bool
	HangAfter int
	// Drop aborts the TCP connection after DropAfter events, without the
	// terminating [DONE]. A non-streaming Drop closes before any byte.
	Drop      bool
	DropAfter int
	// Truncate ends the body cleanly after TruncateAfter events, without
	// finish_reason or [DONE], as a cutting proxy does. go-openai reports
	// this as a normal io.EOF, so a client must notice the missing
	// finish_reason itself.
	Truncate      bool
	TruncateAfter int

	// Error answers with this OpenAI-shaped error and its HTTP status
	// instead of a completion.
	Error *APIError
	// StreamError is sent in-band as `data: {"error": ...}` after the body
	// chunks, and the stream ends there, as providers do on a mid-stream
	// failure (overload, content policy).
	StreamError *APIError
	// HTMLStatus, when not zero, answers an HTML page with this status, as a
	// base URL pointing at a web server rather than an API does.
	HTMLStatus int
	// Header is added to the response headers (for example Retry-After).
	Header http.Header
}

// ToolCall is one function call the model asks for.
type ToolCall struct {
	// ID defaults to "call_<request>_<index>".
	ID   string
	Name string
	// Arguments is the complete JSON text of the arguments. Unless
	// ArgumentChunks is set it is streamed in pieces of ArgumentChunkSize
	// bytes (default 7), never splitting a UTF-8 character.
	Arguments         string
	ArgumentChunks    []string
	ArgumentChunkSize int
}

// Usage is the token accounting reported for a reply.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// ReasoningTokens is the part of CompletionTokens spent thinking, reported in
	// completion_tokens_details.reasoning_tokens. An emulated thinking provider counts a Reply's
	// Reasoning there when Usage is not given.
	ReasoningTokens int
	// CachedTokens is the part of PromptTokens a prompt cache served, reported in the server's
	// UsageShape.
	CachedTokens int
}

// APIError is an error answered in OpenAI's shape
// {"error":{"message","type","param","code"}} with Status as HTTP status.
// Empty Param and Code are sent as JSON null, as OpenAI does.
type APIError struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

// Text is a reply whose text streams word by word, the way real models
// stream tokens.
func Text(s string) Reply {
	return Reply{Content: Words(s)}
}

// Calls is a reply that only asks for tool calls.
func Calls(calls ...ToolCall) Reply {
	return Reply{ToolCalls: calls}
}

// Words splits s into chunks that each start at a word, keeping the
// whitespace, so that concatenating the chunks gives back s exactly.
func Words(s string) []string {
	var out []string
	start := 0
	inSpace := true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && inSpace && i > start {
			// A new word begins: cut before the whitespace that leads into it
			// so each chunk looks like " word".
			cut := i
			for cut > start {
				prev, size := utf8.DecodeLastRuneInString(s[start:cut])
				if !unicode.IsSpace(prev) {
					break
				}
				cut -= size
			}
			if cut > start {
				out = append(out, s[start:cut])
				start = cut
			}
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// InvalidAPIKey is OpenAI's answer to a wrong key.
func InvalidAPIKey() *APIError {
	return &APIError{
		Status:  http.StatusUnauthorized,
		Message: "Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys.",
		Type:    "invalid_request_error",
		Code:    "invalid_api_key",
	}
}

// BadRequest is a 400 invalid_request_error about param.
func BadRequest(message, param string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Message: message, Type: "invalid_request_error", Param: param}
}

// ModelNotFound is OpenAI's 404 for an unknown model.
func ModelNotFound(model string) *APIError {
	return &APIError{
		Status:  http.StatusNotFound,
		Message: "The model `" + model + "` does not exist or you do not have access to it.",
		Type:    "invalid_request_error",
		Code:    "model_not_found",
	}
}

// RateLimited is OpenAI's 429.
func RateLimited() *APIError {
	return &APIError{
		Status:  http.StatusTooManyRequests,
		Message: "Rate limit reached for requests. Please try again in 1s.",
		Type:    "requests",
		Code:    "rate_limit_exceeded",
	}
}

// ServerError is OpenAI's 500.
func ServerError() *APIError {
	return &APIError{
		Status:  http.StatusInternalServerError,
		Message: "The server had an error while processing your request. Sorry about that!",
		Type:    "server_error",
	}
}

// Overloaded is the in-stream error providers send when they shed load.
func Overloaded() *APIError {
	return &APIError{
		Status:  http.StatusServiceUnavailable,
		Message: "The engine is currently overloaded, please try again later.",
		Type:    "server_error",
		Code:    "overloaded",
	}
}

// splitArguments cuts JSON text into pieces of at most size bytes on rune
// boundaries; a non-empty argument string always yields at least one piece.
func splitArguments(s string, size int) []string {
	if size <= 0 {
		size = 7
	}
	var out []string
	for len(s) > 0 {
		n := size
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// estimateTokens approximates a tokenizer: about four bytes per token, at
// least one token for non-empty text.
func estimateTokens(s string) int {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	return (len(s) + 3) / 4
}
