package llmconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// CopilotModes lists the modes a configuration may choose.
func CopilotModes() []string { return []string{domain.ModeTeachingAssistant, domain.ModeLabAutomation} }

// Model types of the reference API. Only the chat-capable ones can be a default, since the
// default is what a chat turn runs with.
var modelTypes = []string{"text", "vision", "stt", "tts", "multimodal", "embedding", "reranking", "other"}

// ModelTypes lists the accepted model_type values.
func ModelTypes() []string { return append([]string{}, modelTypes...) }

func chatCapable(modelType string) bool {
	return modelType == "text" || modelType == "vision" || modelType == "multimodal"
}

// Defaults and limits of a configuration's fields.
const (
	DefaultTemperature = 0.7
	DefaultModelType   = "text"
	MaxNameRunes       = 100
	MaxModelRunes      = 200
	MaxBaseURLBytes    = 2048
	MaxAPIKeyBytes     = 4096
	MaxContextLimitK   = 10000
)

// Change is a create or update request, field by field; nil leaves a field as it is (or at its
// default on create). An empty APIKey removes the key and a MaxTokens of 0 removes the limit.
type Change struct {
	Name            *string
	ModelType       *string
	Provider        *string
	BaseURL         *string
	Model           *string
	Temperature     *float64
	APIKey          *string
	MaxTokens       *int
	ContextLimit    *int
	ContextStrategy *string
	CopilotMode     *string
	// ReasoningEffort: one of Efforts, or "" for the provider's default.
	ReasoningEffort *string
	IsDefault       *bool
	// WriterIsSuperadmin says the change comes from a GNS3 superadmin, whose endpoints are
	// trusted; a regular user's must pass the outbound policy.
	WriterIsSuperadmin bool
	// Extra are custom fields to keep with the configuration (merged into the stored ones); a
	// JSON null removes a field.
	Extra map[string]json.RawMessage
}

// Limits of the custom fields a configuration may carry.
const (
	MaxExtraFields     = 32
	MaxExtraNameBytes  = 64
	MaxExtraValueBytes = 2048
)

// ValidationError lists everything wrong with a request, each problem in words a person can act on.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

// ValidateTemperature checks a temperature, stored or given with one request.
func ValidateTemperature(t float64) error {
	if math.IsNaN(t) || t < 0 || t > 2 {
		return fmt.Errorf("temperature must be between 0 and 2, got %v", t)
	}
	return nil
}

// applyChange writes ch onto c (a new row filled with defaults, or the stored one) and checks the
// result as a whole. It returns the new plaintext key when the key changes (nil otherwise; a
// pointer to "" removes it).
func applyChange(c *models.LLMModelConfig, ch Change, creating bool) (*string, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	oldHost := urlHost(c.BaseURL)
	hadKey := c.APIKeySealed != ""

	if ch.Name != nil {
		c.Name = strings.TrimSpace(*ch.Name)
	}
	if n := utf8.RuneCountInString(c.Name); n == 0 {
		bad("name is required (1 to %d characters)", MaxNameRunes)
	} else if n > MaxNameRunes {
		bad("name is %d characters long; at most %d are allowed", n, MaxNameRunes)
	}

	if ch.ModelType != nil {
		c.ModelType = strings.ToLower(strings.TrimSpace(*ch.ModelType))
	}
	if c.ModelType == "" {
		c.ModelType = DefaultModelType
	}
	if !contains(modelTypes, c.ModelType) {
		bad("model_type %q is not one of %s", c.ModelType, strings.Join(modelTypes, ", "))
	}

	providerChanged := false
	if ch.Provider != nil {
		p := strings.ToLower(strings.TrimSpace(*ch.Provider))
		providerChanged = p != c.Provider
		c.Provider = p
	}
	preset, known := PresetFor(c.Provider)
	switch {
	case c.Provider == "":
		bad("provider is required: one of %s", strings.Join(providerIDs(), ", "))
	case !known:
		bad("provider %q is not one of %s; for another OpenAI-compatible server use \"custom\" with its base_url",
			c.Provider, strings.Join(providerIDs(), ", "))
	}

	if ch.BaseURL != nil {
		c.BaseURL = strings.TrimRight(strings.TrimSpace(*ch.BaseURL), "/")
	} else if providerChanged && known {
		c.BaseURL = preset.BaseURL // the old provider's URL means nothing to the new one
	}
	if c.BaseURL == "" && known {
		c.BaseURL = preset.BaseURL
	}
	if c.BaseURL == "" {
		if known {
			bad("base_url is required for provider %q (for example %s)", c.Provider, preset.BaseURLExample)
		}
	} else if msg := checkBaseURL(c.BaseURL); msg != "" {
		bad("%s", msg)
	}

	if ch.Model != nil {
		c.Model = strings.TrimSpace(*ch.Model)
	}
	if n := utf8.RuneCountInString(c.Model); n == 0 {
		if known && len(preset.ExampleModels) > 0 {
			bad("model is required (for example %s)", preset.ExampleModels[0])
		} else {
			bad("model is required")
		}
	} else if n > MaxModelRunes {
		bad("model is %d characters long; at most %d are allowed", n, MaxModelRunes)
	} else if strings.IndexFunc(c.Model, unicode.IsControl) >= 0 {
		bad("model must not contain control characters")
	}

	if ch.Temperature != nil {
		c.Temperature = *ch.Temperature
	}
	if err := ValidateTemperature(c.Temperature); err != nil {
		bad("%v", err)
	}

	if ch.ContextLimit != nil {
		c.ContextLimit = *ch.ContextLimit
	}
	if c.ContextLimit < 1 || c.ContextLimit > MaxContextLimitK {
		bad("context_limit is the model's context window in thousands of tokens (128 for 128K) and must be between 1 and %d, got %d",
			MaxContextLimitK, c.ContextLimit)
	}

	if ch.MaxTokens != nil {
		c.MaxTokens = *ch.MaxTokens
	}
	switch {
	case c.MaxTokens < 0:
		bad("max_tokens must be a positive number of tokens (or null for the provider's limit), got %d", c.MaxTokens)
	case c.MaxTokens > 0 && c.ContextLimit >= 1 && c.MaxTokens >= c.ContextLimit*1000:
		bad("max_tokens (%d) must be smaller than the context window (context_limit %d = %d tokens)",
			c.MaxTokens, c.ContextLimit, c.ContextLimit*1000)
	}

	if ch.ContextStrategy != nil {
		c.ContextStrategy = strings.ToLower(strings.TrimSpace(*ch.ContextStrategy))
	}
	if c.ContextStrategy == "" {
		c.ContextStrategy = contextwindow.Balanced
	}
	if !contextwindow.ValidStrategy(c.ContextStrategy) {
		bad("context_strategy %q is not one of %s", c.ContextStrategy, strings.Join(contextwindow.Strategies(), ", "))
	}

	if ch.CopilotMode != nil {
		c.CopilotMode = strings.ToLower(strings.TrimSpace(*ch.CopilotMode))
	}
	if c.CopilotMode == "" {
		c.CopilotMode = domain.ModeTeachingAssistant
	}
	if !contains(CopilotModes(), c.CopilotMode) {
		bad("copilot_mode %q is not one of %s", c.CopilotMode, strings.Join(CopilotModes(), ", "))
	}

	if ch.ReasoningEffort != nil {
		c.ReasoningEffort = NormalizeEffort(*ch.ReasoningEffort)
	}
	// Checked also when only the model changed: an effort one model takes, another may not.
	if err := ValidateEffort(c.Provider, c.Model, c.ReasoningEffort); err != nil {
		bad("%v", err)
	}

	if ch.IsDefault != nil {
		c.IsDefault = *ch.IsDefault
	}
	if c.IsDefault && !chatCapable(c.ModelType) {
		bad("a %s configuration cannot be the default: the default is what chat turns run with (use model_type text, vision or multimodal)", c.ModelType)
	}

	if len(ch.Extra) > 0 {
		if msg := mergeExtra(c, ch.Extra); msg != "" {
			bad("%s", msg)
		}
	}

	var newKey *string
	if ch.APIKey != nil {
		k := strings.TrimSpace(*ch.APIKey)
		switch {
		case k != "" && k == c.APIKeyHint:
			// The masked key read back and sent again: the key stays as it is.
		case len(k) > MaxAPIKeyBytes:
			bad("api_key is %d bytes long; at most %d are allowed", len(k), MaxAPIKeyBytes)
		case strings.IndexFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
			bad("api_key must not contain spaces or line breaks")
		default:
			newKey = &k
		}
	}
	keySet := hadKey
	if newKey != nil {
		keySet = *newKey != ""
	}
	if known && preset.APIKeyRequired && !keySet {
		bad("api_key is required for provider %q", c.Provider)
	}
	// A key entered for one server is never sent to another one behind its owner's back.
	if !creating && hadKey && newKey == nil && oldHost != "" && urlHost(c.BaseURL) != "" && urlHost(c.BaseURL) != oldHost {
		bad("base_url now points at %s instead of %s: send the api_key for the new server again (or \"\" for none), so a key is never sent to a server it was not entered for",
			urlHost(c.BaseURL), oldHost)
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return newKey, nil
}

// mergeExtra applies custom fields to the stored ones and returns what is wrong with them.
func mergeExtra(c *models.LLMModelConfig, change map[string]json.RawMessage) string {
	extra := map[string]json.RawMessage{}
	if c.Extra != "" {
		_ = json.Unmarshal([]byte(c.Extra), &extra) // a damaged object starts afresh
	}
	names := make([]string, 0, len(change))
	for k := range change {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := change[k]
		switch {
		case k == "" || len(k) > MaxExtraNameBytes || strings.IndexFunc(k, func(r rune) bool {
			return !(r == '_' || r == '-' || r == '.' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
		}) >= 0:
			return fmt.Sprintf("custom field name %q must be 1 to %d letters, digits, '_', '-' or '.'", truncateName(k), MaxExtraNameBytes)
		case len(v) > MaxExtraValueBytes:
			return fmt.Sprintf("custom field %q is %d bytes long; at most %d are allowed", k, len(v), MaxExtraValueBytes)
		case string(v) == "null":
			delete(extra, k)
		default:
			extra[k] = v
		}
	}
	if len(extra) > MaxExtraFields {
		return fmt.Sprintf("a configuration may carry at most %d custom fields, this one would have %d", MaxExtraFields, len(extra))
	}
	b, _ := json.Marshal(extra)
	c.Extra = string(b)
	return ""
}

func truncateName(s string) string {
	if len(s) > MaxExtraNameBytes {
		return s[:MaxExtraNameBytes] + "…"
	}
	return s
}

func checkBaseURL(raw string) string {
	if len(raw) > MaxBaseURLBytes {
		return fmt.Sprintf("base_url is %d bytes long; at most %d are allowed", len(raw), MaxBaseURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("base_url %q must be an http:// or https:// URL such as https://api.openai.com/v1", raw)
	}
	if u.User != nil {
		return "base_url must not contain a user name or password; put the key in api_key, where it is stored encrypted"
	}
	if u.Fragment != "" {
		return "base_url must not contain a #fragment"
	}
	return ""
}

func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyHint is what identifies a key to its owner without revealing it: its first three and last
// four characters for a key long enough that those say nothing useful, otherwise just a mark.
func keyHint(k string) string {
	if k == "" {
		return ""
	}
	if len(k) < 16 || strings.IndexFunc(k, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		return "…"
	}
	return k[:3] + "…" + k[len(k)-4:]
}
