package memtrim

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile reads the file-backed part of this process's resident set.
func rssFile(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(line, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// Issue 36: the binary's code that starting mapped goes back to the page cache, and the process
// goes on running (what it needs comes back as minor faults).
func TestDropIdleCodePages(t *testing.T) {
	before := rssFile(t)
	dropped := DropIdleCodePages()
	after := rssFile(t)
	if dropped <= 0 || after >= before {
		t.Fatalf("dropped %d bytes; RssFile %d -> %d", dropped, before, after)
	}
	// Still working: run code, and again.
	if got := strconv.Itoa(len(strings.Repeat("x", 3))); got != "3" {
		t.Fatal(got)
	}
	_ = DropIdleCodePages()
	t.Logf("dropped %d KB of the test binary's pages; RssFile %d -> %d KB", dropped>>10, before>>10, after>>10)
}
