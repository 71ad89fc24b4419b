package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// Kind says who can fix a failed call.
type Kind int

const (
	// Unavailable is a provider that failed or was not reached: trying again may work.
	Unavailable Kind = iota
	// Misconfigured is a configuration whose base URL, model or endpoint cannot work: its
	// owner must change it.
	Misconfigured
	// KeyRejected is an API key the provider refused.
	KeyRejected
	// RequestRefused is a request the provider would not take (HTTP 400 or 422): sending it
	// again gets the same answer.
	RequestRefused
)

// Error is a failed model call, described for the person who reads it: which setting to check
// when trying again cannot help, and what the provider said, in its own words (providerWords),
// on one line and clipped. It never carries a provider's body beyond that message.
type Error struct {
	Kind    Kind
	Message string
	cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap gives the failure underneath (go-openai's error, egress's refusal, ErrCutOff).
func (e *Error) Unwrap() error { return e.cause }

// Retryable reports whether another attempt may succeed.
func (e *Error) Retryable() bool { return e.Kind == Unavailable }

// ErrCutOff is under the Error of a stream that ended cleanly but without a finish reason, as a
// cutting proxy ends it: the text so far is not the whole answer.
var ErrCutOff = errors.New("the stream ended without a finish reason")

// MaxProviderMessage bounds how much of a provider's own error message reaches the user.
const MaxProviderMessage = 300

// classify turns what go-openai or the transport returned into an Error; when ctx has ended,
// its error is returned instead. What the server at the base URL said is shown as its message in
// whichever shape it sent it (an OpenAI-style object, Google's array, OpenRouter's upstream
// error in metadata.raw, plain text), clipped to one line; a JSON body of no known shape shows
// only its status, and a web page only that it is one.
func classify(ctx context.Context, err error, s llmconfig.Settings) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	where := fmt.Sprintf("the LLM provider at %s (model %s)", s.BaseURL, s.Model)
	failure := func(kind Kind, format string, args ...any) error {
		return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), cause: err}
	}
	// go-openai checks OpenAI's reasoning models itself before sending: what it refuses, OpenAI
	// would refuse too, and trying again cannot help.
	if errors.Is(err, openai.ErrReasoningToolsRequireResponses) {
		return failure(Misconfigured, "%s takes function tools only over OpenAI's Responses API, which the copilot does not speak: "+
			"choose a model that can turn its reasoning off (gpt-6.1-terra, gpt-6-luna, gpt-5.5) in your LLM configuration.", where)
	}
	if errors.Is(err, openai.ErrReasoningEffortUnsupported) || errors.Is(err, openai.ErrReasoningSamplingUnsupported) ||
		errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated) || errors.Is(err, openai.ErrReasoningModelLimitationsOther) {
		return failure(Misconfigured, "%s cannot take this request (%v): check the reasoning_effort of your LLM configuration.", where, err)
	}
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return failure(Misconfigured,
			"%s was not contacted: %v. LLM configurations saved by regular users may only reach public addresses: "+
				"point base_url at a public endpoint, or ask the operator to allow this host (--llm-allow-hosts) "+
				"or a GNS3 superadmin to save the configuration.", where, refused)
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var httpErr *httpFailure
	status, msg := 0, ""
	var body []byte
	if errors.As(err, &reqErr) {
		status, body = reqErr.HTTPStatusCode, reqErr.Body
	}
	if errors.As(err, &apiErr) {
		if apiErr.HTTPStatusCode != 0 {
			status = apiErr.HTTPStatusCode
		}
		msg = providerMessage(apiErr.Message)
	}
	if errors.As(err, &httpErr) {
		status, body = httpErr.status, httpErr.body
	}
	if body != nil {
		if looksLikeHTML(body) {
			return failure(Misconfigured,
				"%s answered with an HTML page (HTTP %d) instead of the OpenAI API: check the base URL of your LLM configuration (it usually ends in /v1).",
				where, status)
		}
		msg = providerMessage(providerWords(body))
	}
	said := strings.TrimSpace(fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)))
	if msg != "" {
		said = fmt.Sprintf("HTTP %d: %s", status, msg)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failure(KeyRejected, "%s rejected the API key (%s): check the api_key of your LLM configuration.", where, said)
	case status == http.StatusNotFound:
		return failure(Misconfigured, "%s answered %s: check the base URL and the model name of your LLM configuration.", where, said)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return failure(RequestRefused, "%s refused the request (%s).", where, said)
	case status != 0:
		return failure(Unavailable, "%s failed (%s).", where, said)
	case apiErr != nil:
		// An error object sent in the middle of a stream.
		if msg == "" {
			msg = "(no message)"
		}
		return failure(Unavailable, "%s reported an error: %s", where, msg)
	}
	var jsonErr *json.SyntaxError
	if errors.As(err, &jsonErr) || strings.Contains(err.Error(), "invalid character '<'") {
		return failure(Misconfigured, "%s did not answer in JSON: check the base URL of your LLM configuration.", where)
	}
	return failure(Unavailable, "%s could not be reached: %s", where, transportProblem(err))
}

// providerMessage makes a provider's error message safe to show: one line, clipped.
func providerMessage(m string) string {
	m = strings.Join(strings.FieldsFunc(m, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(m) > MaxProviderMessage {
		m = string([]rune(m)[:MaxProviderMessage]) + "…"
	}
	return m
}

// transportProblem describes a failure below HTTP. Go quotes the first bytes of an answer that
// is not HTTP ("malformed HTTP response \"SSH-2.0-…\""), which would show what the server is;
// that part is left out.
func transportProblem(err error) string {
	var ne net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "its host name was not found (DNS)"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	}
	msg := err.Error()
	if strings.Contains(msg, "malformed HTTP") {
		return "the server did not answer in HTTP"
	}
	return providerMessage(msg)
}
