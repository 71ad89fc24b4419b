package contextwindow

import "math"

// Context strategies: the share of the context window a request may fill. The rest is left for
// the answer and for the error of every estimate.
const (
	Conservative = "conservative"
	Balanced     = "balanced"
	Aggressive   = "aggressive"
)

var ratios = map[string]float64{Conservative: 0.60, Balanced: 0.75, Aggressive: 0.85}

// Strategies lists the strategy names, most cautious first.
func Strategies() []string { return []string{Conservative, Balanced, Aggressive} }

// ValidStrategy reports whether name is one of Strategies.
func ValidStrategy(name string) bool { _, ok := ratios[name]; return ok }

// Ratio is the share of the window a strategy allows; an unknown or empty name is Balanced.
func Ratio(strategy string) float64 {
	if r, ok := ratios[strategy]; ok {
		return r
	}
	return ratios[Balanced]
}

// DefaultContextLimitK is the window assumed, in thousands of tokens, when a configuration does
// not say: small enough for the common local models served with a 32K window, and a
// conservative under-use of the larger hosted ones.
const DefaultContextLimitK = 32

// Budget is how many tokens the conversation (every message but the system prompt) may take:
// contextLimitK × 1000 × the strategy's ratio, minus the system prompt and the tool schemas.
// contextLimitK ≤ 0 means unknown and uses DefaultContextLimitK. The result is never negative;
// 0 means only the current turn can be sent.
func Budget(contextLimitK int, strategy string, systemTokens, toolSchemaTokens int) int {
	if contextLimitK <= 0 {
		contextLimitK = DefaultContextLimitK
	}
	b := int(math.Floor(float64(contextLimitK)*1000*Ratio(strategy))) - systemTokens - toolSchemaTokens
	if b < 0 {
		return 0
	}
	return b
}
