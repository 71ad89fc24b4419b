package api

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateNeverCutsACharacter(t *testing.T) {
	s := "projet-é€✓"
	for n := 0; n < len(s); n++ {
		got := truncate(s, n)
		if !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Fatalf("truncate(%q, %d) = %q", s, n, got)
		}
	}
	if got := truncate("ab€", 3); got != "ab…" {
		t.Fatalf(`truncate("ab€", 3) = %q, want "ab…"`, got)
	}
	if got := truncate("short", 80); got != "short" {
		t.Fatalf("a short string changed: %q", got)
	}
}
