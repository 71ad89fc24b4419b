package llmconfig

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// ClientConfig is the go-openai configuration that reaches s's endpoint: Azure's deployment
// URLs for provider azure, the base URL as given for everyone else. httpClient nil keeps
// go-openai's default client.
func ClientConfig(s Settings, httpClient *http.Client) openai.ClientConfig {
	var cfg openai.ClientConfig
	if s.Provider == "azure" {
		cfg = openai.DefaultAzureConfig(s.APIKey, s.BaseURL)
	} else {
		cfg = openai.DefaultConfig(s.APIKey)
		cfg.BaseURL = strings.TrimRight(s.BaseURL, "/")
	}
	if httpClient != nil {
		cfg.HTTPClient = httpClient
	}
	return cfg
}

// The classes of a failed model call, as operators tell them apart: a key to fix, a quota to
// wait out or raise, a provider in trouble, a provider too slow, a host not reached, a request
// the provider refused. They are metric label values, so the set is closed.
const (
	ErrorAuth       = "auth"
	ErrorRateLimit  = "rate_limit"
	ErrorServer     = "server"
	ErrorTimeout    = "timeout"
	ErrorNetwork    = "network"
	ErrorBadRequest = "bad_request"
	ErrorCancelled  = "cancelled"
	ErrorOther      = "other"
)

// ErrorClass sorts a model call's error (as go-openai returned it, before any wrapping that
// drops the HTTP status) into one of the classes above.
func ErrorClass(err error) string {
	if err == nil {
		return ""
	}
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	if errors.As(err, &apiErr) {
		status = apiErr.HTTPStatusCode
	} else if errors.As(err, &reqErr) {
		status = reqErr.HTTPStatusCode
	}
	var ne net.Error
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrorAuth
	case status == http.StatusTooManyRequests:
		return ErrorRateLimit
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ErrorTimeout
	case status >= 500:
		return ErrorServer
	case status >= 400:
		return ErrorBadRequest
	case apiErr != nil:
		// An error object in the middle of a stream: the provider failing while it answered.
		return ErrorServer
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return ErrorTimeout
	case errors.Is(err, context.Canceled):
		return ErrorCancelled
	case errors.As(err, &ne):
		return ErrorNetwork
	}
	return ErrorOther
}
