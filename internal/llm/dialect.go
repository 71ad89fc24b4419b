package llm

import (
	"encoding/json"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

// A dialect is what a provider and model add to OpenAI's chat-completions wire. Every dialect
// reads every reasoning field a provider may send (reasoning_content, reasoning,
// reasoning_details, extra_content), so reasoning never lands in the answer whatever the
// configuration says; dialects differ in what they send back and in whether reasoning may come
// inside the content as <think>…</think>.
type dialect struct {
	name string
	// replay is what the provider needs back with earlier assistant messages.
	replay replayKind
	// think: reasoning may arrive inside content, between <think> tags (local servers without a
	// reasoning parser). Such servers' templates drop past reasoning from the history, so none is
	// sent back (docs/configuration.md).
	think bool
}

type replayKind int

const (
	// replayNone sends nothing back.
	replayNone replayKind = iota
	// replayReasoningContent sends reasoning_content on every assistant message between two user
	// messages where the model called tools: DeepSeek's thinking mode refuses the request
	// otherwise, and Qwen3's and GLM's templates on vLLM and SGLang read it for the turn in
	// progress.
	replayReasoningContent
	// replayGemini sends each tool call's extra_content (Gemini 3's thought signature) back
	// unchanged; Gemini validates the calls of the turn in progress.
	replayGemini
	// replayOpenRouter sends reasoning and reasoning_details back unchanged and in order, which
	// OpenRouter passes on to the model behind it.
	replayOpenRouter
)

var (
	plainDialect      = dialect{name: "openai"}
	reasoningContent  = dialect{name: "reasoning_content", replay: replayReasoningContent}
	geminiDialect     = dialect{name: "gemini", replay: replayGemini}
	openRouterDialect = dialect{name: "openrouter", replay: replayOpenRouter}
	thinkTags         = dialect{name: "think_tags", think: true}
	reasoningOrTags   = dialect{name: "reasoning_content+think_tags", replay: replayReasoningContent, think: true}
)

// reasoningContentModels are thinking models that need reasoning_content back with their tool
// calls whatever gateway serves them (DeepSeek V4 and V4.1, under DeepSeek's current name
// deepseek-flash and its legacy reasoner name, Moonshot's Kimi thinking models).
var reasoningContentModels = regexp.MustCompile(`(?i)deepseek[-_ ]?v4|deepseek-flash|deepseek-reasoner|kimi-k2[-.]?(thinking|5|6)|kimi.*thinking`)

// dialectRules choose a configuration's dialect: the first rule whose provider (when set) and
// model pattern (when set) both match.
var dialectRules = []struct {
	provider string
	model    *regexp.Regexp
	dialect  dialect
}{
	{provider: "openrouter", dialect: openRouterDialect},
	{provider: "google", dialect: geminiDialect},
	{provider: "deepseek", dialect: reasoningContent},
	{provider: "vllm", dialect: reasoningOrTags},
	{model: reasoningContentModels, dialect: reasoningContent},
	{provider: "ollama", dialect: thinkTags},
	{provider: "lmstudio", dialect: thinkTags},
	{provider: "litellm", dialect: thinkTags},
	{provider: llmconfig.ProviderCustom, dialect: thinkTags},
}

// dialectFor is the dialect of s's provider and model.
func dialectFor(s llmconfig.Settings) dialect {
	provider := strings.ToLower(strings.TrimSpace(s.Provider))
	for _, r := range dialectRules {
		if r.provider != "" && r.provider != provider {
			continue
		}
		if r.model != nil && !r.model.MatchString(s.Model) {
			continue
		}
		return r.dialect
	}
	return plainDialect
}

// omitsOpeningTag are thinking models whose chat templates put the opening <think> into the
// prompt, so their output starts with reasoning and only the closing tag shows where it ends.
var omitsOpeningTag = regexp.MustCompile(`(?i)deepseek-r1|r1-distill|qwq|thinking|qwen3\.[5-9]`)

// geminiValidates are the Gemini models that refuse a tool call of the turn in progress without
// its thought signature.
var geminiValidates = regexp.MustCompile(`(?i)gemini-[3-9]`)

// skipSignature is the value Google's thought-signature guide gives for a function call of the
// turn in progress that no Gemini 3 model made (one from another model, or whose signature was
// lost), so that its validation lets it through.
const skipSignature = "skip_thought_signature_validator"

// Message is one message of a request: OpenAI's fields, and what the dialect of the model it is
// for sends back with it. ReasoningContent holds the reasoning text that goes back, so that the
// context window counts it.
type Message struct {
	openai.ChatCompletionMessage
	replay *replay
	// context is the model-context text added to the end of Content (Messages); restate is what
	// the model-context rows before the message amount to, for a request that starts with it.
	context, restate string
}

// replay is what goes on the wire beside an assistant message's OpenAI fields.
type replay struct {
	// field names the field the reasoning text is sent in ("reasoning_content", "reasoning"),
	// sent also when the text is empty; "" sends none.
	field   string
	details []rawJSON
	extra   rawJSON
	// calls holds each tool call's extra_content, by call id.
	calls map[string]rawJSON
}

// Text is a message of role with content and nothing else: a system prompt, a user's words.
func Text(role, content string) Message {
	return Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: role, Content: content}}
}

// OpenAI returns the messages' OpenAI fields, as the context window counts them.
func OpenAI(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m.ChatCompletionMessage
	}
	return out
}

func (m Message) wire() wireMessage {
	w := wireMessage{Role: m.Role, Content: m.Content, Refusal: m.Refusal, Name: m.Name, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		w.ToolCalls = append(w.ToolCalls, wireToolCall{ID: c.ID, Type: c.Type, Function: c.Function})
	}
	r := m.replay
	if r == nil {
		return w
	}
	text := m.ReasoningContent
	switch r.field {
	case "reasoning_content":
		w.ReasoningContent = &text
	case "reasoning":
		w.Reasoning = &text
	}
	w.ReasoningDetails = r.details
	w.ExtraContent = r.extra
	for i := range w.ToolCalls {
		w.ToolCalls[i].ExtraContent = r.calls[w.ToolCalls[i].ID]
	}
	return w
}

// state is what one assistant message leaves for its provider's later calls, stored as JSON in
// the message's reasoning_state. Every provider value in it is kept exactly as received.
type state struct {
	Source source `json:"source"`
	// Details are OpenRouter's reasoning_details, each whole (its streamed fragments joined), in
	// order.
	Details []rawJSON `json:"details,omitempty"`
	// Calls holds each tool call's extra_content (Gemini's thought signature), by call id.
	Calls map[string]rawJSON `json:"calls,omitempty"`
	// Extra is the message's own extra_content (a signature on an answer without tool calls).
	Extra rawJSON `json:"extra,omitempty"`
	// Unknown keeps reasoning fields of shapes the copilot does not know, by field name, each
	// value as it arrived, in order. They are kept, never sent back: where they would go is
	// unknown too.
	Unknown map[string][]rawJSON `json:"unknown,omitempty"`
}

// source is the configuration that produced a state: it goes back to that provider, endpoint
// and model only.
type source struct {
	Provider string `json:"provider"`
	BaseURL  string `json:"base_url"`
	Model    string `json:"model"`
	ConfigID string `json:"config_id,omitempty"`
}

func sourceOf(s llmconfig.Settings) source {
	return source{Provider: strings.ToLower(strings.TrimSpace(s.Provider)), BaseURL: strings.TrimRight(s.BaseURL, "/"),
		Model: s.Model, ConfigID: s.ConfigID}
}

// made reports whether s is the configuration that produced the state: same provider, endpoint
// and model (a changed key or temperature does not matter to the provider).
func (src source) made(s llmconfig.Settings) bool {
	o := sourceOf(s)
	return src.Provider == o.Provider && src.BaseURL == o.BaseURL && src.Model == o.Model
}

// decodeState reads a stored state; one that cannot be read is none (it is only ever sent
// back, and then not at all).
func decodeState(stored string) (state, bool) {
	if stored == "" {
		return state{}, false
	}
	var st state
	if err := json.Unmarshal([]byte(stored), &st); err != nil {
		return state{}, false
	}
	return st, true
}
