package llmconfig

import (
	"fmt"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// A configuration's reasoning effort says how much a thinking model thinks before it answers,
// in the copilot's own words; each provider is sent its own (thinkingFor). "" leaves it to the
// provider's default, which is what every preset's default is: it works with tools for each.
const (
	EffortOff    = "off"
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
	EffortMax    = "max"
)

// Efforts lists the efforts a configuration may name, from none to the most.
func Efforts() []string { return []string{EffortOff, EffortLow, EffortMedium, EffortHigh, EffortMax} }

// NormalizeEffort reads an effort as a person may write it ("High", " off "); "default" is the
// provider's default, "".
func NormalizeEffort(e string) string {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "default" {
		return ""
	}
	return e
}

// ValidateEffort checks an effort for a provider and model: one of Efforts (or "" for the
// provider's default), and one that provider and model accept; the error names the allowed ones.
func ValidateEffort(provider, model, effort string) error {
	if effort == "" {
		return nil
	}
	if !contains(Efforts(), effort) {
		return fmt.Errorf("reasoning_effort %q is not one of %s (or null for the provider's default)", effort, strings.Join(Efforts(), ", "))
	}
	t := thinkingFor(provider, model)
	if t.allowed != nil && !contains(t.allowed, effort) {
		allowed := "none: leave it null"
		if len(t.allowed) > 0 {
			allowed = strings.Join(t.allowed, ", ") + " (or null for the provider's default)"
		}
		return fmt.Errorf("reasoning_effort %q does not work with %s: %s. Allowed: %s", effort, model, t.why, allowed)
	}
	return nil
}

// Purpose is what a model call is for.
type Purpose int

const (
	// ForTurn is a turn's call: it thinks as the configuration says.
	ForTurn Purpose = iota
	// ForSide is a short call beside the turn (the session's title): it thinks as little as the
	// provider allows, since a thinking model given a title's few tokens spends them all
	// thinking and answers nothing.
	ForSide
)

// ShapeThinking writes into req how much s's model is to think for purpose, in its provider's
// own words, and returns the request fields go-openai's types lack (DeepSeek's thinking,
// OpenRouter's reasoning, Anthropic's thinking), for the caller to send beside req's.
func ShapeThinking(s Settings, req *openai.ChatCompletionRequest, purpose Purpose) map[string]any {
	t := thinkingFor(s.Provider, s.Model)
	effort := s.ReasoningEffort
	if purpose == ForSide {
		effort = t.side
	}
	if effort == "" {
		effort = t.always
	}
	extra := map[string]any{}
	if effort != "" && t.words != nil {
		t.words(effort, req, extra)
	}
	return extra
}

// SideTokens is the token limit of a side call that wants about want tokens of answer: that,
// when the model does not think on side calls, else that much more than a thinking model's
// lowest effort spends on a short answer (reasoning counts against the limit).
func SideTokens(s Settings, want int) int {
	if thinkingFor(s.Provider, s.Model).sideQuiet {
		return want
	}
	return want + sideThinkingTokens
}

// sideThinkingTokens is the room a side call leaves a model that still thinks at its lowest
// effort: enough for a title after a short thought.
const sideThinkingTokens = 2048

// thinking is how one provider and model take an effort.
type thinking struct {
	// allowed are the efforts this model accepts (nil: all of Efforts); why says what the others
	// lack, for the 422.
	allowed []string
	why     string
	// words writes an effort into the request in the provider's words.
	words func(effort string, req *openai.ChatCompletionRequest, extra map[string]any)
	// side is the effort of side calls; sideQuiet: at it the model does not think at all.
	side      string
	sideQuiet bool
	// always is sent when the configuration names no effort ("": nothing, the provider's default).
	always string
}

// openAIEffort writes OpenAI's reasoning_effort, with off as off (none, or minimal for models
// without none) and max as the highest level the model has.
func openAIEffort(off, max string) func(string, *openai.ChatCompletionRequest, map[string]any) {
	return func(e string, req *openai.ChatCompletionRequest, _ map[string]any) {
		switch e {
		case EffortOff:
			req.ReasoningEffort = off
		case EffortMax:
			req.ReasoningEffort = max
		default:
			req.ReasoningEffort = e
		}
	}
}

// effortAs writes reasoning_effort through a table of the provider's words for each effort.
func effortAs(words map[string]string) func(string, *openai.ChatCompletionRequest, map[string]any) {
	return func(e string, req *openai.ChatCompletionRequest, _ map[string]any) {
		req.ReasoningEffort = words[e]
	}
}

var (
	// OpenAI's reasoning models (reasoning_effort on chat completions):
	// platform.openai.com/docs/api-reference/chat/create#chat-create-reasoning_effort and
	// developers.openai.com/api/docs/models. o-series: low, medium, high, no way to stop thinking;
	// gpt-5, -mini, -nano: minimal up to high; gpt-5.1: none up to high. From gpt-5.2 on, chat
	// completions refuse function tools together with any effort but none ("Function tools with
	// reasoning_effort are not supported ... use /v1/responses or set reasoning_effort to
	// 'none'", as go-openai v1.43's validator also encodes for GPT-6), so the copilot, whose every
	// turn offers tools over chat completions, sends none and allows only off. Models without
	// none (gpt-6-astra, gpt-6.1-sol, the gpt-6.2 family, -pro) take tools only over the
	// Responses API.
	openAIOSeries   = regexp.MustCompile(`^o[1-9]`)
	openAIGPT5      = regexp.MustCompile(`^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$`)
	openAIGPT51     = regexp.MustCompile(`^gpt-5\.1`)
	openAIToolsNone = regexp.MustCompile(`^gpt-(5\.[2-9]|[6-9])`)
	openAINoNone    = regexp.MustCompile(`^gpt-6-astra|^gpt-6\.1-sol|^gpt-6\.[2-9]-|-pro($|-)`)
	openAIChatOnly  = regexp.MustCompile(`^(gpt-[34]|chatgpt-)|chat-latest`)
	// reasoningRequest are the models go-openai validates as reasoning models, and OpenAI's
	// newer ones alike: no max_tokens (max_completion_tokens), no temperature but the default.
	reasoningRequest = regexp.MustCompile(`^(o[1-9]|gpt-[5-9])`)

	geminiPro   = regexp.MustCompile(`(?i)gemini-.*-pro`)
	gptOSS      = regexp.MustCompile(`(?i)gpt-oss`)
	grokNone    = regexp.MustCompile(`(?i)^grok-4\.[34]`)
	grokLevels  = regexp.MustCompile(`(?i)^grok-(4\.([5-9]|\d\d)|[5-9])`)
	grokLowHigh = regexp.MustCompile(`(?i)^grok-3-mini`)
)

// anthropicBudgets are the thinking budgets (tokens) Anthropic's OpenAI-compatible endpoint is
// sent for each effort: it ignores reasoning_effort and takes extended thinking as
// thinking: {type: enabled, budget_tokens} (platform.claude.com/docs/en/api/openai-sdk), at least
// 1024 and below max_tokens.
var anthropicBudgets = map[string]int{EffortLow: 2048, EffortMedium: 8192, EffortHigh: 16384, EffortMax: 32000}

// thinkingFor is the translation of efforts for a provider and model, from each provider's
// documentation (docs/configuration.md has the table).
func thinkingFor(provider, model string) thinking {
	m := strings.TrimSpace(model)
	switch strings.ToLower(strings.TrimSpace(provider)) {
	case "deepseek":
		// api-docs.deepseek.com/guides/thinking_mode: thinking {type: enabled|disabled} (enabled
		// by default, at high), reasoning_effort low/high/max, medium mapped to high.
		return thinking{side: EffortOff, sideQuiet: true, words: func(e string, req *openai.ChatCompletionRequest, extra map[string]any) {
			if e == EffortOff {
				extra["thinking"] = map[string]string{"type": "disabled"}
				return
			}
			extra["thinking"] = map[string]string{"type": "enabled"}
			req.ReasoningEffort = map[string]string{EffortLow: "low", EffortMedium: "high", EffortHigh: "high", EffortMax: "max"}[e]
		}}
	case "openrouter":
		// openrouter.ai/docs/use-cases/reasoning-tokens: reasoning {effort: none|minimal|low|
		// medium|high|xhigh}, normalized for the model behind; exclude drops the reasoning text.
		return thinking{side: "minimal", words: func(e string, _ *openai.ChatCompletionRequest, extra map[string]any) {
			r := map[string]any{"effort": map[string]string{EffortOff: "none", EffortLow: "low", EffortMedium: "medium",
				EffortHigh: "high", EffortMax: "xhigh", "minimal": "minimal"}[e]}
			if e == "minimal" {
				r["exclude"] = true // a side call reads only the answer
			}
			extra["reasoning"] = r
		}}
	case "google":
		// ai.google.dev/gemini-api/docs/openai: reasoning_effort none|low|medium|high maps to
		// Gemini's thinking; the Pro models cannot stop thinking and take low and high only
		// (ai.google.dev/gemini-api/docs/thinking).
		if geminiPro.MatchString(m) {
			return thinking{allowed: []string{EffortLow, EffortMedium, EffortHigh, EffortMax},
				why: "Gemini's Pro models cannot stop thinking", side: EffortLow,
				words: effortAs(map[string]string{EffortLow: "low", EffortMedium: "high", EffortHigh: "high", EffortMax: "high"})}
		}
		return thinking{side: EffortOff, sideQuiet: true, words: openAIEffort("none", "high")}
	case "openai", "azure":
		return openAIThinking(m)
	case "anthropic":
		return thinking{words: func(e string, req *openai.ChatCompletionRequest, extra map[string]any) {
			budget, ok := anthropicBudgets[e]
			if !ok {
				return // off: thinking is not enabled unless asked for
			}
			extra["thinking"] = map[string]any{"type": "enabled", "budget_tokens": budget}
			req.Temperature = 0 // extended thinking takes only the default temperature
			if req.MaxTokens <= budget {
				req.MaxTokens = budget + anthropicDefaultMaxTokens
			}
		}, sideQuiet: true}
	case "xai":
		// docs.x.ai/developers/model-capabilities/text/reasoning: grok-4.3 none|low|medium|high,
		// grok-4.5 and later low|medium|high (no way to stop), grok-3-mini low|high; the others
		// refuse the parameter ("Model does not support parameter reasoningEffort").
		switch {
		case grokNone.MatchString(m):
			return thinking{side: EffortOff, sideQuiet: true, words: openAIEffort("none", "high")}
		case grokLevels.MatchString(m):
			return thinking{allowed: []string{EffortLow, EffortMedium, EffortHigh, EffortMax}, why: "it cannot stop thinking",
				side: EffortLow, words: openAIEffort("low", "high")}
		case grokLowHigh.MatchString(m):
			return thinking{allowed: []string{EffortLow, EffortMedium, EffortHigh, EffortMax}, why: "it cannot stop thinking",
				side: EffortLow, words: effortAs(map[string]string{EffortLow: "low", EffortMedium: "high", EffortHigh: "high", EffortMax: "high"})}
		}
		return thinking{allowed: []string{}, why: "xAI refuses a reasoning effort for this model (choose its -reasoning or -non-reasoning variant instead)", sideQuiet: true}
	case "aws", "vllm", "lmstudio", "ollama", "litellm", ProviderCustom:
		// gpt-oss thinks at low, medium or high and cannot stop (Bedrock's and vLLM's
		// reasoning_effort, Ollama's think levels).
		if gptOSS.MatchString(m) {
			return thinking{allowed: []string{EffortLow, EffortMedium, EffortHigh, EffortMax}, why: "gpt-oss cannot stop thinking",
				side: EffortLow, words: openAIEffort("low", "high")}
		}
	}
	switch strings.ToLower(strings.TrimSpace(provider)) {
	case "vllm", ProviderCustom:
		// docs.vllm.ai/en/stable/features/reasoning_outputs: Qwen3 (and GLM, on vLLM and SGLang)
		// stop thinking with chat_template_kwargs {enable_thinking: false}; llama.cpp's server
		// takes the same; reasoning_effort reaches templates that read it.
		return thinking{side: EffortOff, sideQuiet: true, words: func(e string, req *openai.ChatCompletionRequest, _ map[string]any) {
			if e == EffortOff {
				req.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
				return
			}
			openAIEffort("none", "high")(e, req, nil)
		}}
	case "ollama", "lmstudio", "litellm":
		// docs.ollama.com/api/openai-compatibility: reasoning_effort, none turning thinking off
		// (Ollama #14820); LiteLLM passes reasoning_effort on in each provider's words; LM Studio
		// gets OpenAI's.
		return thinking{side: EffortOff, sideQuiet: true, words: openAIEffort("none", "high")}
	}
	// Any other provider (aws's other models, unknown ones): OpenAI's words.
	return thinking{words: openAIEffort("none", "high")}
}

// openAIThinking is OpenAI's (and Azure's deployments', named like the model) for model m.
func openAIThinking(m string) thinking {
	switch {
	case openAIChatOnly.MatchString(m):
		return thinking{allowed: []string{}, why: "it does not think", sideQuiet: true}
	case openAIToolsNone.MatchString(m):
		if openAINoNone.MatchString(m) {
			return thinking{allowed: []string{}, why: "OpenAI takes function tools from it only over the Responses API, which the copilot does not speak; choose a model that can turn reasoning off (gpt-6.1-terra, gpt-6-luna, gpt-5.5)"}
		}
		return thinking{allowed: []string{EffortOff}, why: "over chat completions OpenAI refuses function tools with any effort but none, and every turn offers tools",
			always: EffortOff, side: EffortOff, sideQuiet: true, words: openAIEffort("none", "none")}
	case openAIOSeries.MatchString(m):
		return thinking{allowed: []string{EffortLow, EffortMedium, EffortHigh, EffortMax}, why: "OpenAI's o-series cannot stop thinking",
			side: EffortLow, words: openAIEffort("low", "high")}
	case openAIGPT5.MatchString(m):
		return thinking{side: EffortOff, words: openAIEffort("minimal", "high")}
	case openAIGPT51.MatchString(m):
		return thinking{side: EffortOff, sideQuiet: true, words: openAIEffort("none", "high")}
	}
	return thinking{words: openAIEffort("none", "high")}
}
