package app

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

func rssFile(t *testing.T) int64 {
	t.Helper()
	m, ok := procfs.ReadMemory(os.Getpid())
	if !ok {
		t.Fatal("no resident set in /proc/self/status")
	}
	return m.File
}

// Issue 36: the binary's code that starting mapped goes back to the page cache, and the process
// goes on running (what it needs comes back as minor faults).
func TestDropIdleCodePages(t *testing.T) {
	before := rssFile(t)
	dropped := dropIdleCodePages()
	after := rssFile(t)
	if dropped <= 0 || after >= before {
		t.Fatalf("dropped %d bytes; RssFile %d -> %d", dropped, before, after)
	}
	// Still working: run code, and again.
	if got := strconv.Itoa(len(strings.Repeat("x", 3))); got != "3" {
		t.Fatal(got)
	}
	_ = dropIdleCodePages()
	t.Logf("dropped %d KB of the test binary's pages; RssFile %d -> %d KB", dropped>>10, before>>10, after>>10)
}
