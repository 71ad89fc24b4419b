package llm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProviderWords(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"error":{"message":"bad tools","type":"invalid_request_error"}}`, "bad tools"},
		{`[{"error":{"code":400,"message":"missing a thought_signature","status":"INVALID_ARGUMENT"}}]`, "missing a thought_signature"},
		{`{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"pass reasoning_content back\"}}","provider_name":"DeepSeek"}}}`,
			"Provider returned error (DeepSeek: pass reasoning_content back)"},
		{`{"error":{"message":"Provider returned error","metadata":{"raw":"Provider returned error"}}}`, "Provider returned error"},
		{`{"error":{"metadata":{"raw":"upstream timed out"}}}`, "upstream timed out"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"message":"context too long"}`, "context too long"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"internal_secret":"x"}`, ""},
		{`[1,2,3]`, ""},
		{`"just a string"`, "just a string"},
		{"Bad Gateway", "Bad Gateway"},
		{"<html><body>502</body></html>", ""},
		{"", ""},
	} {
		require.Equal(t, tc.want, providerWords([]byte(tc.body)), tc.body)
	}
	// An error nested in errors without end is not followed for ever.
	deep := `"innermost"`
	for i := 0; i < 50; i++ {
		deep = `{"error":{"message":"","metadata":{"raw":` + deep + `}}}`
	}
	require.NotPanics(t, func() { providerWords([]byte(deep)) })
	require.Empty(t, strings.TrimSpace(providerWords([]byte(deep))))
}
