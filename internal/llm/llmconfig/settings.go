// Package llmconfig decides which model a user's turn talks to and with what settings: the
// user's own default configuration, a group default, or the operator's server default. Keys
// are decrypted only here, worker- or API-side, and never travel through Temporal.
package llmconfig

import (
	"context"
	"errors"
	"fmt"
)

// Settings is everything an LLM call needs. ConfigID is "" for the server default.
type Settings struct {
	ConfigID        string
	Name            string
	Provider        string
	BaseURL         string
	Model           string
	APIKey          string
	Temperature     *float64
	MaxTokens       int
	ContextLimitK   int // context window in thousands of tokens; 0 = unknown
	ContextStrategy string
	CopilotMode     string
	// ReasoningEffort is how much a thinking model thinks (Efforts), "" for the provider's
	// default; ShapeThinking says it in the provider's words.
	ReasoningEffort string
	// Trusted endpoints (the server default, a superadmin's or a group's configuration) may be
	// anywhere; the others go through the outbound policy (package egress).
	Trusted bool
}

// String never prints the key, so Settings is safe in logs and error messages.
func (s Settings) String() string {
	return fmt.Sprintf("llm(%s %s at %s, config %q)", s.Provider, s.Model, s.BaseURL, s.ConfigID)
}

// GoString keeps %#v from printing the key.
func (s Settings) GoString() string { return s.String() }

// ErrNotConfigured is returned when a user has no configuration and the operator set no default.
var ErrNotConfigured = errors.New("no LLM is configured: add an LLM model configuration for your user " +
	"(POST /v3/access/users/{user_id}/llm-model-configs) or ask the operator to set GNS3_COPILOT_LLM_BASE_URL, " +
	"GNS3_COPILOT_LLM_MODEL and GNS3_COPILOT_LLM_API_KEY")

// Loader returns the settings of a configuration chosen when a turn started.
type Loader interface {
	Load(ctx context.Context, configID string) (Settings, error)
}

// Static serves only the operator's server default.
type Static struct {
	Default *Settings
}

// Load returns the server default; a stored configuration id cannot be served by Static.
func (s Static) Load(_ context.Context, configID string) (Settings, error) {
	if configID != "" {
		return Settings{}, fmt.Errorf("LLM configuration %s is not available on this worker", configID)
	}
	if s.Default == nil || s.Default.BaseURL == "" || s.Default.Model == "" {
		return Settings{}, ErrNotConfigured
	}
	d := *s.Default
	d.Trusted = true
	return d, nil
}

// BadConfigError is a stored or default configuration that cannot be used as it is; its message
// tells the user which setting to fix.
type BadConfigError struct{ Msg string }

func (e *BadConfigError) Error() string { return e.Msg }
