package llmconfig

import (
	"regexp"
	"strings"
	"time"
)

// Retirement is what a provider says of a model id it retires: from when requests to it fail (or
// go to another model), and what to use instead.
type Retirement struct {
	// Since is the shutdown date; before it the model is only deprecated.
	Since time.Time
	// Instead names the model(s) to configure in its place.
	Instead string
	// Note says more where the id still answers (served by another model).
	Note string
	// Source is the provider's page that says so.
	Source string
}

// Retired reports whether the date has passed: requests to the id fail (or are served by
// another model) from then on.
func (r Retirement) Retired(now time.Time) bool { return !now.Before(r.Since) }

type retirement struct {
	providers []string // "" matches any provider (the id is the vendor's own, wherever it is served)
	model     *regexp.Regexp
	r         Retirement
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic("llmconfig: retirement date " + s + ": " + err.Error())
	}
	return t
}

const (
	deepseekNews   = "https://api-docs.deepseek.com/ (Your First API Call; news260424)"
	openAIDeprec   = "https://developers.openai.com/api/docs/deprecations"
	geminiDeprec   = "https://ai.google.dev/gemini-api/docs/deprecations"
	claudeDeprec   = "https://platform.claude.com/docs/en/about-claude/model-deprecations"
	openAIReplaces = "gpt-6.1-terra or gpt-6-luna (they can turn reasoning off, which tools over chat completions need)"
)

// retirements are the model ids the providers' own deprecation pages list as shut down or
// scheduled, as of 2026-12 (docs/configuration.md, "A current catalogue").
var retirements = []retirement{
	{[]string{"deepseek"}, regexp.MustCompile(`^deepseek-(chat|reasoner)$`),
		Retirement{Since: day("2026-07-24"), Instead: "deepseek-flash", Source: deepseekNews,
			Note: "deepseek-reasoner's thinking is now a request setting: reasoning_effort (its default thinks)"}},
	{[]string{"deepseek"}, regexp.MustCompile(`^deepseek-v4-flash$`),
		Retirement{Since: day("2026-09-10"), Instead: "deepseek-flash", Source: deepseekNews,
			Note: "the old name is still accepted and served by DeepSeek-V4.1-Flash"}},
	{[]string{"deepseek"}, regexp.MustCompile(`^deepseek-v4-pro$`),
		Retirement{Since: day("2026-09-14"), Instead: "deepseek-flash", Source: deepseekNews,
			Note: "requests to it are routed to DeepSeek-V4.1-Flash and billed at its price until a V4.1 Pro is released"}},

	{[]string{"openai", "azure"}, regexp.MustCompile(`^(gpt-3\.5-turbo(-\d+)?|gpt-4|gpt-4-0613|gpt-4-1106-preview|gpt-4-turbo(-.+)?|gpt-4o-2024-05-13|` +
		`(o1|o1-pro|o3-mini|o4-mini|gpt-4\.1-nano)(-\d{4}-\d{2}-\d{2})?)$`),
		Retirement{Since: day("2026-10-23"), Instead: openAIReplaces, Source: openAIDeprec}},
	{[]string{"openai", "azure"}, regexp.MustCompile(`^(gpt-5|gpt-5-mini|gpt-5-nano|gpt-5-pro|o3|o3-pro)(-\d{4}-\d{2}-\d{2})?$`),
		Retirement{Since: day("2026-12-11"), Instead: openAIReplaces, Source: openAIDeprec}},
	{[]string{"openai", "azure"}, regexp.MustCompile(`^(gpt-4o|gpt-4o-mini|gpt-4\.1|gpt-4\.1-mini)(-\d{4}-\d{2}-\d{2})?$`),
		Retirement{Since: day("2027-01-14"), Instead: "gpt-6-luna", Source: openAIDeprec}},

	{[]string{"google"}, regexp.MustCompile(`^gemini-(1\.0|1\.5|2\.0)-`),
		Retirement{Since: day("2026-06-01"), Instead: "gemini-3.5-flash-lite or gemini-3.8-flash", Source: geminiDeprec}},
	{[]string{"google"}, regexp.MustCompile(`^gemini-2\.5-pro($|-)`),
		Retirement{Since: day("2026-12-01"), Instead: "gemini-3.8-flash", Source: geminiDeprec}},
	{[]string{"google"}, regexp.MustCompile(`^gemini-2\.5-flash$`),
		Retirement{Since: day("2026-12-01"), Instead: "gemini-3.5-flash-lite", Source: geminiDeprec}},
	{[]string{"google"}, regexp.MustCompile(`^gemini-3-pro-preview$`),
		Retirement{Since: day("2026-03-09"), Instead: "gemini-4-argon", Source: geminiDeprec}},

	{[]string{"anthropic"}, regexp.MustCompile(`^claude-(3-|3\.)`),
		Retirement{Since: day("2026-02-19"), Instead: "claude-sonnet-5 or claude-haiku-4-5", Source: claudeDeprec}},
	{[]string{"anthropic"}, regexp.MustCompile(`^claude-(sonnet|opus)-4(-0|-20250514)?$`),
		Retirement{Since: day("2026-06-15"), Instead: "claude-sonnet-5 or claude-opus-5-5", Source: claudeDeprec}},
}

// RetirementOf is what the provider's deprecation pages say of the model id, if anything.
func RetirementOf(provider, model string) (Retirement, bool) {
	p := strings.ToLower(strings.TrimSpace(provider))
	m := strings.TrimSpace(model)
	for _, r := range retirements {
		if !contains(r.providers, p) {
			continue
		}
		if r.model.MatchString(m) {
			return r.r, true
		}
	}
	return Retirement{}, false
}
