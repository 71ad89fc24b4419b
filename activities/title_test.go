package activities

import (
	"testing"
	"unicode/utf8"
)

func TestClipNeverCutsACharacter(t *testing.T) {
	s := "Ré-seau €uro ✓" // 1-, 2- and 3-byte characters
	for n := 0; n <= len(s)+1; n++ {
		got := clip(s, n)
		if !utf8.ValidString(got) || len(got) > n && n < len(s) {
			t.Fatalf("clip(%q, %d) = %q", s, n, got)
		}
		if n >= len(s) && got != s {
			t.Fatalf("clip(%q, %d) = %q, want it whole", s, n, got)
		}
	}
	if got := clip("ab€", 4); got != "ab" {
		t.Fatalf(`clip("ab€", 4) = %q, want "ab"`, got)
	}
}
