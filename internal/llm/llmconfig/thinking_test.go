package llmconfig

import (
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

// shaped is what a call with this effort sends of its thinking: reasoning_effort,
// chat_template_kwargs and the fields beside go-openai's, as JSON.
func shaped(t *testing.T, provider, model, effort string, purpose Purpose) string {
	t.Helper()
	req := openai.ChatCompletionRequest{Model: model, MaxTokens: 1000}
	extra := ShapeThinking(Settings{Provider: provider, Model: model, ReasoningEffort: effort}, &req, purpose)
	out := map[string]any{}
	if req.ReasoningEffort != "" {
		out["reasoning_effort"] = req.ReasoningEffort
	}
	if req.ChatTemplateKwargs != nil {
		out["chat_template_kwargs"] = req.ChatTemplateKwargs
	}
	for k, v := range extra {
		out[k] = v
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

// Each provider is told the effort in its own words, as its documentation gives them.
func TestEffortsInEachProvidersWords(t *testing.T) {
	for _, tc := range []struct {
		provider, model, effort, want string
	}{
		{"deepseek", "deepseek-flash", "", `{}`},
		{"deepseek", "deepseek-flash", "off", `{"thinking":{"type":"disabled"}}`},
		{"deepseek", "deepseek-flash", "low", `{"reasoning_effort":"low","thinking":{"type":"enabled"}}`},
		{"deepseek", "deepseek-flash", "medium", `{"reasoning_effort":"high","thinking":{"type":"enabled"}}`},
		{"deepseek", "deepseek-v4-pro", "max", `{"reasoning_effort":"max","thinking":{"type":"enabled"}}`},
		{"openrouter", "deepseek/deepseek-v4.1-flash", "off", `{"reasoning":{"effort":"none"}}`},
		{"openrouter", "anthropic/claude-opus-5-5", "max", `{"reasoning":{"effort":"xhigh"}}`},
		{"google", "gemini-3.8-flash", "off", `{"reasoning_effort":"none"}`},
		{"google", "gemini-3.8-flash", "medium", `{"reasoning_effort":"medium"}`},
		{"google", "gemini-3.1-pro-preview", "medium", `{"reasoning_effort":"high"}`},
		{"openai", "gpt-6.1-terra", "", `{"reasoning_effort":"none"}`},
		{"openai", "gpt-5.5", "off", `{"reasoning_effort":"none"}`},
		{"openai", "gpt-5-mini", "off", `{"reasoning_effort":"minimal"}`},
		{"openai", "gpt-5.1", "max", `{"reasoning_effort":"high"}`},
		{"openai", "o3", "low", `{"reasoning_effort":"low"}`},
		{"azure", "gpt-6-luna", "", `{"reasoning_effort":"none"}`},
		{"anthropic", "claude-sonnet-5", "off", `{}`},
		{"anthropic", "claude-sonnet-5", "high", `{"thinking":{"budget_tokens":16384,"type":"enabled"}}`},
		{"xai", "grok-4.3", "off", `{"reasoning_effort":"none"}`},
		{"xai", "grok-4.5", "max", `{"reasoning_effort":"high"}`},
		{"ollama", "qwen3:8b", "off", `{"reasoning_effort":"none"}`},
		{"ollama", "gpt-oss:20b", "low", `{"reasoning_effort":"low"}`},
		{"vllm", "Qwen/Qwen3-8B", "off", `{"chat_template_kwargs":{"enable_thinking":false}}`},
		{"vllm", "Qwen/Qwen3-8B", "high", `{"reasoning_effort":"high"}`},
		{"vllm", "openai/gpt-oss-120b", "max", `{"reasoning_effort":"high"}`},
		{"aws", "openai.gpt-oss-120b-1:0", "medium", `{"reasoning_effort":"medium"}`},
		{"custom", "qwen3-8b", "off", `{"chat_template_kwargs":{"enable_thinking":false}}`},
		{"litellm", "claude-sonnet-5", "low", `{"reasoning_effort":"low"}`},
	} {
		require.Equal(t, tc.want, shaped(t, tc.provider, tc.model, tc.effort, ForTurn), "%s %s %q", tc.provider, tc.model, tc.effort)
	}
}

// A side call (the title) thinks as little as the provider allows, whatever the turn's effort,
// and leaves room for a thought where the model cannot help thinking.
func TestSideCallsThinkLittle(t *testing.T) {
	for _, tc := range []struct {
		provider, model, want string
		tokens                int
	}{
		{"deepseek", "deepseek-flash", `{"thinking":{"type":"disabled"}}`, 24},
		{"openrouter", "deepseek/deepseek-v4.1-flash", `{"reasoning":{"effort":"minimal","exclude":true}}`, 24 + sideThinkingTokens},
		{"google", "gemini-3.8-flash", `{"reasoning_effort":"none"}`, 24},
		{"google", "gemini-3.1-pro-preview", `{"reasoning_effort":"low"}`, 24 + sideThinkingTokens},
		{"openai", "gpt-6.1-terra", `{"reasoning_effort":"none"}`, 24},
		{"openai", "gpt-5", `{"reasoning_effort":"minimal"}`, 24 + sideThinkingTokens},
		{"openai", "o4-mini", `{"reasoning_effort":"low"}`, 24 + sideThinkingTokens},
		{"xai", "grok-4.5", `{"reasoning_effort":"low"}`, 24 + sideThinkingTokens},
		{"ollama", "qwen3:8b", `{"reasoning_effort":"none"}`, 24},
		{"vllm", "Qwen/Qwen3-8B", `{"chat_template_kwargs":{"enable_thinking":false}}`, 24},
		{"anthropic", "claude-sonnet-5", `{}`, 24},
		{"aws", "openai.gpt-oss-120b-1:0", `{"reasoning_effort":"low"}`, 24 + sideThinkingTokens},
	} {
		require.JSONEq(t, tc.want, shaped(t, tc.provider, tc.model, EffortMax, ForSide), "%s %s", tc.provider, tc.model)
		require.Equal(t, tc.tokens, SideTokens(Settings{Provider: tc.provider, Model: tc.model}, 24), "%s %s", tc.provider, tc.model)
	}
}

// An effort that is none of the copilot's words, or that the provider and model cannot take, is
// refused with the allowed ones.
func TestEffortValidation(t *testing.T) {
	require.NoError(t, ValidateEffort("deepseek", "deepseek-flash", ""))
	require.NoError(t, ValidateEffort("deepseek", "deepseek-flash", "max"))
	require.EqualError(t, ValidateEffort("deepseek", "deepseek-flash", "ultra"),
		`reasoning_effort "ultra" is not one of off, low, medium, high, max (or null for the provider's default)`)
	require.ErrorContains(t, ValidateEffort("google", "gemini-3.1-pro-preview", "off"),
		"cannot stop thinking. Allowed: low, medium, high, max (or null for the provider's default)")
	require.ErrorContains(t, ValidateEffort("openai", "gpt-5.5", "high"), "Allowed: off (or null")
	require.ErrorContains(t, ValidateEffort("openai", "gpt-4.1", "low"), "it does not think. Allowed: none: leave it null")
	require.ErrorContains(t, ValidateEffort("openai", "gpt-6.2-sol", "off"), "Responses API")
	require.ErrorContains(t, ValidateEffort("xai", "grok-4", "low"), "xAI refuses a reasoning effort")
	require.Equal(t, "high", NormalizeEffort(" High "))
	require.Equal(t, "", NormalizeEffort("default"))
}

// OpenAI's reasoning models get max_completion_tokens and the default temperature, whatever the
// configuration says, as they (and go-openai's check of them) refuse anything else.
func TestReasoningModelsGetWhatTheyAccept(t *testing.T) {
	for _, model := range []string{"gpt-5.5", "gpt-6.1-terra", "o3", "gpt-5-mini"} {
		req := openai.ChatCompletionRequest{Model: model, MaxTokens: 800, Temperature: 0.7}
		ShapeRequest(Settings{Provider: "openai", Model: model}, &req)
		require.Zero(t, req.MaxTokens, model)
		require.Equal(t, 800, req.MaxCompletionTokens, model)
		require.Zero(t, req.Temperature, model)
		require.NoError(t, openai.NewReasoningValidator().Validate(req), model)
	}
	req := openai.ChatCompletionRequest{Model: "gpt-4.1", MaxTokens: 800, Temperature: 0.7}
	ShapeRequest(Settings{Provider: "openai", Model: "gpt-4.1"}, &req)
	require.Equal(t, 800, req.MaxTokens)
	require.InDelta(t, 0.7, req.Temperature, 1e-6)

	// Anthropic's extended thinking needs room beyond its budget, at the default temperature.
	req = openai.ChatCompletionRequest{Model: "claude-sonnet-5", MaxTokens: 4096, Temperature: 0.7}
	s := Settings{Provider: "anthropic", Model: "claude-sonnet-5", ReasoningEffort: EffortHigh}
	ShapeRequest(s, &req)
	ShapeThinking(s, &req, ForTurn)
	require.Greater(t, req.MaxTokens, anthropicBudgets[EffortHigh])
	require.Zero(t, req.Temperature)
}
