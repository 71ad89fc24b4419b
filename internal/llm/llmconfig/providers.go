package llmconfig

import "strings"

// Preset is a provider the copilot knows: every one speaks the OpenAI chat-completions API at
// its base URL, so choosing one fills the base URL and says whether a key is needed. What a
// provider does differently from OpenAI is handled by ShapeRequest.
type Preset struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// BaseURL is filled in when a configuration names this provider without a base URL; ""
	// means the base URL is the user's own (Azure resource, custom endpoint) and must be given.
	BaseURL         string `json:"base_url"`
	BaseURLRequired bool   `json:"base_url_required"`
	BaseURLExample  string `json:"base_url_example,omitempty"`
	APIKeyRequired  bool   `json:"api_key_required"`
	// Local providers run next to the copilot; their default base URL is localhost as seen
	// from the copilot's own host.
	Local         bool     `json:"local"`
	ExampleModels []string `json:"example_models"`
	Notes         string   `json:"notes,omitempty"`
}

// ProviderCustom is any other OpenAI-compatible endpoint; it needs a base URL.
const ProviderCustom = "custom"

// presets are the providers' base URLs and example models as their own documentation gives
// them, checked 2026-12 (docs/configuration.md, "A current catalogue", names each page).
var presets = []Preset{
	{ID: "openai", Label: "OpenAI", BaseURL: "https://api.openai.com/v1", APIKeyRequired: true,
		ExampleModels: []string{"gpt-6.1-terra", "gpt-6-luna", "gpt-5.5"},
		Notes: "Over chat completions, which the copilot speaks, OpenAI takes function tools from its reasoning models only with " +
			"reasoning_effort none, so these think not at all here; GPT-6.2 Astra and Sol, which cannot, take tools only over the Responses API."},
	{ID: "azure", Label: "Azure OpenAI", BaseURLRequired: true, BaseURLExample: "https://YOUR-RESOURCE.openai.azure.com",
		APIKeyRequired: true, ExampleModels: []string{"your-deployment-name"},
		Notes: "The base URL is your resource's endpoint and the model is the name of your deployment; a deployment named like " +
			"an OpenAI reasoning model is sent what that model accepts."},
	{ID: "anthropic", Label: "Anthropic (Claude)", BaseURL: "https://api.anthropic.com/v1", APIKeyRequired: true,
		ExampleModels: []string{"claude-sonnet-5", "claude-opus-5-5", "claude-haiku-4-5"},
		Notes: "Anthropic's OpenAI-compatible API with a Claude API key. Temperatures above 1 are sent as 1, a " +
			"configuration without max_tokens gets 4096 (Claude needs a limit), and a reasoning effort turns on extended thinking with a budget."},
	{ID: "google", Label: "Google Gemini", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai",
		APIKeyRequired: true, ExampleModels: []string{"gemini-3.8-flash", "gemini-4-argon", "gemini-3.5-flash-lite"},
		Notes: "Gemini's OpenAI-compatible endpoint with a Gemini API key (Google AI Studio). Tool schemas are sent " +
			"without the JSON-schema keywords Gemini refuses, and without stream_options; each tool call's thought signature goes back with it."},
	{ID: "xai", Label: "xAI (Grok)", BaseURL: "https://api.x.ai/v1", APIKeyRequired: true,
		ExampleModels: []string{"grok-4.5", "grok-4.3"}},
	{ID: "aws", Label: "AWS Bedrock", BaseURL: "https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1",
		BaseURLExample: "https://bedrock-runtime.REGION.amazonaws.com/openai/v1", APIKeyRequired: true,
		ExampleModels: []string{"openai.gpt-oss-120b-1:0", "openai.gpt-oss-20b-1:0"},
		Notes: "Bedrock's OpenAI-compatible endpoint with a Bedrock API key (not an access key pair); put your " +
			"region in the base URL. Requests are sent without stream_options."},
	{ID: "deepseek", Label: "DeepSeek", BaseURL: "https://api.deepseek.com", APIKeyRequired: true,
		ExampleModels: []string{"deepseek-flash"},
		Notes: "deepseek-flash is DeepSeek-V4.1-Flash; deepseek-v4-pro is routed to it until a V4.1 Pro is released. " +
			"It thinks by default (reasoning_effort sets how much, off turns it off), and its reasoning goes back with every tool call."},
	{ID: "openrouter", Label: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1", APIKeyRequired: true,
		ExampleModels: []string{"deepseek/deepseek-v4.1-flash", "openai/gpt-5.6-terra", "deepseek/deepseek-v4-flash:free"},
		Notes:         "Model names carry the vendor, as in deepseek/deepseek-v4.1-flash; the :free variants cost nothing."},
	{ID: "ollama", Label: "Ollama", BaseURL: "http://localhost:11434/v1", Local: true,
		ExampleModels: []string{"qwen3:8b", "gpt-oss:20b", "qwen3:30b"},
		Notes:         "Pick a model that supports tool calling; Ollama's own context default is small, so set context_limit to what you run it with."},
	{ID: "lmstudio", Label: "LM Studio", BaseURL: "http://localhost:1234/v1", Local: true,
		ExampleModels: []string{"qwen/qwen3-8b", "openai/gpt-oss-20b"}},
	{ID: "vllm", Label: "vLLM", BaseURL: "http://localhost:8000/v1", Local: true,
		ExampleModels: []string{"Qwen/Qwen3-8B", "openai/gpt-oss-20b"},
		Notes: "Start vLLM with --enable-auto-tool-choice and a --tool-call-parser for tool calls to work, and with a " +
			"--reasoning-parser (qwen3 for Qwen3) so its reasoning comes apart from the answer."},
	{ID: "litellm", Label: "LiteLLM proxy", BaseURL: "http://localhost:4000/v1", Local: true,
		ExampleModels: []string{"gpt-6.1-terra", "claude-sonnet-5"},
		Notes:         "The model is a model name of your LiteLLM proxy's configuration; the key is a LiteLLM virtual key if the proxy requires one."},
	{ID: ProviderCustom, Label: "Other OpenAI-compatible endpoint", BaseURLRequired: true,
		BaseURLExample: "https://llm.example.com/v1", ExampleModels: []string{},
		Notes: "Any server that speaks the OpenAI chat-completions API with tool calls; the base URL usually ends in /v1."},
}

// Presets lists the known providers, in the order a person would look for them.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	copy(out, presets)
	for i := range out {
		out[i].ExampleModels = append([]string{}, presets[i].ExampleModels...)
	}
	return out
}

// PresetFor returns the preset of a provider name (case-insensitive).
func PresetFor(provider string) (Preset, bool) {
	p := strings.ToLower(strings.TrimSpace(provider))
	for _, pr := range presets {
		if pr.ID == p {
			return pr, true
		}
	}
	return Preset{}, false
}

func providerIDs() []string {
	ids := make([]string, len(presets))
	for i, p := range presets {
		ids[i] = p.ID
	}
	return ids
}
