package llmconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The retired ids are told from the current ones, by the dates the providers give.
func TestRetirementOf(t *testing.T) {
	now := day("2026-12-06")
	for _, tc := range []struct {
		provider, model string
		retired         bool   // shut down by now
		instead         string // "" for a model nobody retires
	}{
		{"deepseek", "deepseek-chat", true, "deepseek-flash"},
		{"deepseek", "deepseek-reasoner", true, "deepseek-flash"},
		{"deepseek", "deepseek-flash", false, ""},
		{"openai", "gpt-4o-mini", false, "gpt-6-luna"},
		{"openai", "gpt-4.1", false, "gpt-6-luna"},
		{"openai", "o4-mini", true, openAIReplaces},
		{"openai", "gpt-4-turbo-2024-04-09", true, openAIReplaces},
		{"openai", "gpt-5", false, openAIReplaces},
		{"openai", "gpt-5.5", false, ""},
		{"openai", "gpt-6.1-terra", false, ""},
		{"azure", "o1", true, openAIReplaces},
		{"google", "gemini-2.0-flash", true, "gemini-3.5-flash-lite or gemini-3.8-flash"},
		{"google", "gemini-2.5-pro", true, "gemini-3.8-flash"},
		{"google", "gemini-2.5-flash-lite", false, ""},
		{"google", "gemini-3.8-flash", false, ""},
		{"anthropic", "claude-3-5-sonnet-20241022", true, "claude-sonnet-5 or claude-haiku-4-5"},
		{"anthropic", "claude-sonnet-4-20250514", true, "claude-sonnet-5 or claude-opus-5-5"},
		{"anthropic", "claude-sonnet-4-5", false, ""},
		{"openrouter", "deepseek-chat", false, ""},
	} {
		r, ok := RetirementOf(tc.provider, tc.model)
		if tc.instead == "" {
			require.False(t, ok, "%s %s", tc.provider, tc.model)
			continue
		}
		require.True(t, ok, "%s %s", tc.provider, tc.model)
		require.Equal(t, tc.instead, r.Instead, tc.model)
		require.Equal(t, tc.retired, r.Retired(now), tc.model)
		require.NotEmpty(t, r.Source)
	}
	// Every example a preset offers is current.
	for _, p := range Presets() {
		for _, m := range p.ExampleModels {
			r, ok := RetirementOf(p.ID, m)
			require.False(t, ok && r.Retired(time.Now()), "preset %s offers %s, retired on %s", p.ID, m, r.Since.Format(time.DateOnly))
		}
	}
}
