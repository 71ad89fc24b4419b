package fakeopenai

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Provider is a provider whose wire differs from OpenAI's in how a thinking model's reasoning
// travels. Emulate makes the fake keep that provider's documented contract: it streams the
// reasoning of a Reply the way the provider does, and refuses a request the way the provider
// refuses it when the client did not send back what the provider needs. Each is built from the
// provider's own documentation (facts only), cited on its constant.
type Provider string

const (
	// OpenAI is the plain wire: no reasoning is streamed, none is needed back.
	OpenAI Provider = ""

	// DeepSeekThinking is DeepSeek V4 in thinking mode (its default). Reasoning streams as
	// delta.reasoning_content before the answer. Between two user messages where the model
	// called tools, every assistant message must carry reasoning_content in every later request;
	// one that lacks it is refused with HTTP 400 and DeepSeek's invalid_request_error (DeepSeek
	// API docs, guides/thinking_mode; the error body as users report it, e.g. opencode #25058).
	// reasoning_content sent elsewhere is ignored.
	DeepSeekThinking Provider = "deepseek-thinking"

	// Gemini3 is a Gemini 3 model on Google's OpenAI-compatible endpoint. Every response with
	// function calls carries a thought signature in extra_content.google.thought_signature: on the
	// first call only when the calls are parallel, on each step's first call when they are
	// sequential; an answer without calls carries one on the message. The calls of the turn in
	// progress (after the last user message) are validated: the first call of each step must
	// carry its signature, else HTTP 400 with Google's error body, a JSON array (Gemini API docs,
	// thought-signatures and openai pages; the message as continue #8785 reports it).
	// Google's documented placeholder "skip_thought_signature_validator" passes for calls no
	// Gemini 3 model made. Earlier turns are not validated.
	Gemini3 Provider = "gemini-3"

	// OpenRouterDeepSeek is OpenRouter in front of DeepSeek V4. SSE comment lines
	// (": OPENROUTER PROCESSING") come before and between the data; reasoning streams as
	// delta.reasoning and as delta.reasoning_details fragments of type reasoning.text sharing
	// index 0 (OpenRouter docs: api-reference/streaming, use-cases/reasoning-tokens). OpenRouter
	// hands reasoning (or reasoning_details) back to DeepSeek as reasoning_content, so DeepSeek's
	// rule holds; its refusal comes back in OpenRouter's error object with the upstream's own
	// body in error.metadata.raw (OpenRouter docs: errors; opencode #24569).
	OpenRouterDeepSeek Provider = "openrouter-deepseek"

	// OpenRouterSigned is OpenRouter in front of a model that signs its reasoning (Anthropic's
	// extended thinking): reasoning_details carry a reasoning.text with a signature and a
	// reasoning.encrypted with opaque data, which must come back unchanged and in order. In the
	// turn in progress, the last assistant message with tool calls must start with them, and
	// what comes back is checked: missing details and altered ones are refused as Anthropic
	// refuses them, inside OpenRouter's error object (OpenRouter docs: use-cases/reasoning-tokens,
	// preserving reasoning blocks; Anthropic's wording as users report it).
	OpenRouterSigned Provider = "openrouter-signed"

	// VLLMReasoning is vLLM with a reasoning parser (Qwen3, GLM): reasoning streams as
	// delta.reasoning, the name current vLLM gives what it first called reasoning_content (vLLM
	// docs, features/reasoning_outputs). Its request model is validated: a reasoning field that is
	// not a string is refused with HTTP 400.
	VLLMReasoning Provider = "vllm-reasoning"

	// LlamaCppThink is llama.cpp's server without a reasoning parser (--reasoning-format none),
	// as LM Studio and some Ollama builds also behave: the reasoning comes inside the content as
	// <think>…</think>, its tags cut across chunks. It refuses nothing more than OpenAI's checks:
	// Qwen3's and DeepSeek-R1's templates drop past reasoning from the history themselves.
	LlamaCppThink Provider = "llamacpp-think"

	// LlamaCppThinkOpenInPrompt is LlamaCppThink for a model whose template puts the opening
	// <think> into the prompt (DeepSeek-R1, the Qwen3 thinking releases): the content starts with
	// the reasoning and only </think> ends it (llama.cpp #23320).
	LlamaCppThinkOpenInPrompt Provider = "llamacpp-think-open-in-prompt"
)

// Emulate makes the fake behave as p; OpenAI restores the plain wire.
func (s *Server) Emulate(p Provider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provider = p
}

// Emulating returns the provider the fake behaves as.
func (s *Server) Emulating() Provider {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provider
}

// providerError is a refusal in a provider's own body shape.
type providerError struct {
	status int
	body   any
}

// DeepSeekReasoningMissing is DeepSeek's refusal of a request that did not send
// reasoning_content back.
const DeepSeekReasoningMissing = "The `reasoning_content` in the thinking mode must be passed back to the API."

// GeminiSignatureMissing begins Google's refusal of a function call without its signature.
const GeminiSignatureMissing = "Function call is missing a thought_signature in functionCall parts."

// Thinker is an emulated provider of a thinking model with the configuration a user would save
// for it in the copilot (its provider and model).
type Thinker struct {
	Name     string
	Emulate  Provider
	Provider string
	Model    string
}

// Thinkers are the emulated providers of thinking models, each with a configuration of its own.
var Thinkers = []Thinker{
	{"DeepSeek V4 thinking", DeepSeekThinking, "deepseek", "deepseek-v4-pro"},
	{"Gemini 3", Gemini3, "google", "gemini-3-pro-preview"},
	{"OpenRouter in front of DeepSeek", OpenRouterDeepSeek, "openrouter", "deepseek/deepseek-v4-pro"},
	{"OpenRouter in front of a signing model", OpenRouterSigned, "openrouter", "anthropic/claude-sonnet-4.5"},
	{"vLLM with a reasoning parser", VLLMReasoning, "vllm", "Qwen/Qwen3-8B"},
	{"llama.cpp with <think> in the content", LlamaCppThink, "custom", "qwen3-8b"},
	{"llama.cpp with the opening tag in the prompt", LlamaCppThinkOpenInPrompt, "custom", "DeepSeek-R1-Distill-Qwen-7B"},
}

// AnthropicThinkingMissing and AnthropicSignatureInvalid begin Anthropic's refusals that
// OpenRouterSigned passes on.
const (
	AnthropicThinkingMissing  = "Expected `thinking` or `redacted_thinking`, but found `tool_use`."
	AnthropicSignatureInvalid = "Invalid `signature` in `thinking` block"
)

// thinksNot reports whether the request switches p's thinking off: the model then writes no
// reasoning (a Reply's Reasoning is not sent). DeepSeek's thinking {type: disabled}, OpenRouter's
// reasoning {effort: none} (or exclude, which leaves the reasoning out of the answer), vLLM's
// chat_template_kwargs {enable_thinking: false}.
func thinksNot(p Provider, rec Request) bool {
	switch p {
	case DeepSeekThinking:
		return rec.ThinkingType() == "disabled"
	case OpenRouterDeepSeek, OpenRouterSigned:
		var rc struct {
			Effort  string `json:"effort"`
			Exclude bool   `json:"exclude"`
		}
		_ = json.Unmarshal(rec.ReasoningConfig, &rc)
		return rc.Effort == "none" || rc.Exclude
	case VLLMReasoning:
		var kw struct {
			EnableThinking *bool `json:"enable_thinking"`
		}
		_ = json.Unmarshal(rec.ChatTemplateKwargs, &kw)
		return kw.EnableThinking != nil && !*kw.EnableThinking
	}
	return false
}

// refuse applies p's own checks to a request OpenAI's checks let through.
func (s *Server) refuse(p Provider, rec Request) *providerError {
	switch p {
	case DeepSeekThinking:
		if thinksNot(p, rec) {
			return nil // non-thinking mode reads no reasoning_content
		}
		if at := missingReasoningContent(rec); at >= 0 {
			return deepSeekError()
		}
	case OpenRouterDeepSeek:
		if at := missingReasoningContent(rec); at >= 0 {
			raw, _ := json.Marshal(deepSeekError().body)
			return openRouterError(string(raw), "DeepSeek")
		}
	case Gemini3:
		return s.refuseUnsignedCalls(rec)
	case OpenRouterSigned:
		return s.refuseUnsignedThinking(rec)
	case VLLMReasoning:
		for i, m := range rec.Messages {
			for field, raw := range map[string]json.RawMessage{"reasoning_content": m.ReasoningContent, "reasoning": m.Reasoning} {
				var str string
				if raw != nil && string(raw) != "null" && json.Unmarshal(raw, &str) != nil {
					return &providerError{status: http.StatusBadRequest, body: map[string]any{"error": map[string]any{
						"message": fmt.Sprintf("1 validation error for ChatCompletionRequest\nmessages.%d.assistant.%s\n  Input should be a valid string", i, field),
						"type":    "BadRequestError", "param": nil, "code": 400}}}
				}
			}
		}
	}
	return nil
}

func deepSeekError() *providerError {
	return &providerError{status: http.StatusBadRequest, body: map[string]any{"error": map[string]any{
		"message": DeepSeekReasoningMissing, "type": "invalid_request_error", "param": nil, "code": "invalid_request_error"}}}
}

func openRouterError(raw, provider string) *providerError {
	return &providerError{status: http.StatusBadRequest, body: map[string]any{"error": map[string]any{
		"message": "Provider returned error", "code": 400, "metadata": map[string]any{"raw": raw, "provider_name": provider}}}}
}

// exchanges cuts a conversation into its user messages and what followed each: [start, end)
// index ranges.
func exchanges(msgs []Message) [][2]int {
	var out [][2]int
	start := 0
	for i := 1; i <= len(msgs); i++ {
		if i == len(msgs) || msgs[i].Role == "user" {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	return out
}

// missingReasoningContent is DeepSeek's rule: the index of the first assistant message, in an
// exchange where the model called tools, that carries no reasoning back (reasoning_content, or
// through OpenRouter reasoning or reasoning_details); -1 when there is none.
func missingReasoningContent(rec Request) int {
	for _, ex := range exchanges(rec.Messages) {
		tools := false
		for _, m := range rec.Messages[ex[0]:ex[1]] {
			tools = tools || len(m.ToolCalls) > 0
		}
		if !tools {
			continue
		}
		for i := ex[0]; i < ex[1]; i++ {
			m := rec.Messages[i]
			if m.Role != "assistant" {
				continue
			}
			_, sent := m.ReasoningText()
			if !sent && (m.ReasoningDetails == nil || string(m.ReasoningDetails) == "null") {
				return i
			}
		}
	}
	return -1
}

// currentTurn is the index of the first message after the last user message.
func currentTurn(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return i + 1
		}
	}
	return 0
}

// GeminiSkipSignature is the placeholder Google documents for calls no Gemini 3 model made.
const GeminiSkipSignature = "skip_thought_signature_validator"

func (s *Server) refuseUnsignedCalls(rec Request) *providerError {
	for i := currentTurn(rec.Messages); i < len(rec.Messages); i++ {
		m := rec.Messages[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		first := m.ToolCalls[0]
		sig := first.ThoughtSignature()
		if sig == GeminiSkipSignature || (sig != "" && sig == s.sign("gemini", first.ID, first.Name, first.Arguments)) {
			continue
		}
		msg := GeminiSignatureMissing + " This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. " +
			fmt.Sprintf("Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", first.Name, i+1)
		if sig != "" {
			msg = "Corrupted thought signature."
		}
		return &providerError{status: http.StatusBadRequest, body: []any{map[string]any{"error": map[string]any{
			"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}}}
	}
	return nil
}

func (s *Server) refuseUnsignedThinking(rec Request) *providerError {
	anthropic := func(i int, message string) *providerError {
		raw, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error",
			"message": fmt.Sprintf("messages.%d.content.0: %s", i, message)}})
		return openRouterError(string(raw), "Anthropic")
	}
	last := -1
	for i := currentTurn(rec.Messages); i < len(rec.Messages); i++ {
		m := rec.Messages[i]
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			last = i
		}
		if m.Role != "assistant" || m.ReasoningDetails == nil || string(m.ReasoningDetails) == "null" {
			continue
		}
		if !s.verifyDetails(m.ReasoningDetails) {
			return anthropic(i, AnthropicSignatureInvalid)
		}
	}
	if last >= 0 {
		d := rec.Messages[last].ReasoningDetails
		if d == nil || string(d) == "null" || string(d) == "[]" {
			return anthropic(last, AnthropicThinkingMissing+" When `thinking` is enabled, a final `assistant` message must start with a thinking block.")
		}
	}
	return nil
}

// verifyDetails checks details as OpenRouterSigned issued them: a signed reasoning.text, then
// the encrypted detail made from the same text, in that order, unchanged.
func (s *Server) verifyDetails(raw json.RawMessage) bool {
	var details []struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
		Index     *int   `json:"index"`
	}
	if json.Unmarshal(raw, &details) != nil || len(details) != 2 {
		return false
	}
	text, enc := details[0], details[1]
	return text.Type == "reasoning.text" && enc.Type == "reasoning.encrypted" &&
		text.Signature == s.sign("thinking", text.Text) && enc.Data == s.sign("encrypted", text.Text)
}

// sign is the fake's signature of parts, which only it can make: a client can only send back
// what it received.
func (s *Server) sign(parts ...string) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(strings.Join(parts, "\x00")))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func newKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}
