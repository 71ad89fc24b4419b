package respond

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateNeverCutsACharacter(t *testing.T) {
	s := "projet-é€✓"
	for n := 0; n < len(s); n++ {
		got := Truncate(s, n)
		if !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Fatalf("Truncate(%q, %d) = %q", s, n, got)
		}
	}
	if got := Truncate("ab€", 3); got != "ab…" {
		t.Fatalf(`Truncate("ab€", 3) = %q, want "ab…"`, got)
	}
	if got := Truncate("short", 80); got != "short" {
		t.Fatalf("a short string changed: %q", got)
	}
}
