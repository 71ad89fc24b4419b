package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// followSkillReloads makes a worker process reload its skills when an API process announces a
// superadmin's reload, so the turns it runs use the same prompts and forbidden commands. A
// reload that fails here keeps the active skills and is logged (the API already refused a broken
// directory). reloaded, if set, is called after each reload. It returns the function that stops
// following.
func followSkillReloads(events relay.Log, store *skills.Store, log *slog.Logger, reloaded func(error)) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Only announcements made from now on count: the skills were just loaded.
	last := ""
	if evs, err := events.Range(ctx, relay.SkillsStream, "", 0); err == nil && len(evs) > 0 {
		last = evs[len(evs)-1].ID
	}
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			evs, err := events.Wait(ctx, relay.SkillsStream, last, 30*time.Second)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("following skill reloads", "error", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
				}
				continue
			}
			if len(evs) == 0 {
				continue
			}
			last = evs[len(evs)-1].ID
			_, err = store.Reload()
			if err != nil {
				log.Error("reloading skills as announced; the previous skills stay active", "error", err)
			} else {
				log.Info("skills reloaded", "source", store.Dir())
			}
			if reloaded != nil {
				reloaded(err)
			}
		}
	}()
	return func() error {
		cancel()
		<-done
		return nil
	}
}
