package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

func TestWorkersFollowAnnouncedSkillReloads(t *testing.T) {
	dir := t.TempDir()
	prompt := filepath.Join(dir, "prompts", "lab_automation_assistant.md")
	if err := os.MkdirAll(filepath.Dir(prompt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prompt, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	events := relay.NewMemory(relay.MemoryOptions{})
	ctx := context.Background()
	// An announcement from before the worker started is not replayed.
	if _, err := events.Append(ctx, relay.SkillsStream, relay.TypeSkillsReload, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	store, err := skills.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := store.Current()
	reloads := make(chan error, 4)
	stop := followSkillReloads(events, store, slog.New(slog.NewTextHandler(io.Discard, nil)), func(err error) { reloads <- err })
	defer stop()

	if err := os.WriteFile(prompt, []byte("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Append(ctx, relay.SkillsStream, relay.TypeSkillsReload, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reloads:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not reload after the announcement")
	}
	if got := store.Current().SystemPrompt(tools.LabAutomation); got != "after" {
		t.Fatalf("prompt after the reload: %q", got)
	}
	select {
	case err := <-reloads:
		t.Fatalf("one announcement, two reloads (the one from before the start was replayed): %v", err)
	default:
	}
	if before.SystemPrompt(tools.LabAutomation) != "before" {
		t.Fatal("the old set must not change in place")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
