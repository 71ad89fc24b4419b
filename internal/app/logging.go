package app

import (
	"context"
	"log/slog"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// turnIDs wraps the Temporal SDK's log handler: a line about a ChatTurn workflow (the SDK adds
// its WorkflowID) also gets the turn's id, the key the API's and the activities' lines use, so
// one search finds a turn everywhere.
type turnIDs struct {
	slog.Handler
	added bool
}

func withTurnIDs(h slog.Handler) slog.Handler { return turnIDs{Handler: h} }

func turnAttr(attrs func(func(slog.Attr) bool)) (slog.Attr, bool) {
	var found slog.Attr
	ok := false
	attrs(func(a slog.Attr) bool {
		if a.Key == "WorkflowID" {
			if turn := workflows.TurnIDOf(a.Value.String()); turn != "" {
				found, ok = slog.String("turn_id", turn), true
				return false
			}
		}
		return true
	})
	return found, ok
}

func (h turnIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	if !h.added {
		if a, ok := turnAttr(func(yield func(slog.Attr) bool) {
			for _, a := range attrs {
				if !yield(a) {
					return
				}
			}
		}); ok {
			return turnIDs{Handler: h.Handler.WithAttrs(append(attrs, a)), added: true}
		}
	}
	return turnIDs{Handler: h.Handler.WithAttrs(attrs), added: h.added}
}

func (h turnIDs) WithGroup(name string) slog.Handler {
	return turnIDs{Handler: h.Handler.WithGroup(name), added: h.added}
}

func (h turnIDs) Handle(ctx context.Context, r slog.Record) error {
	if !h.added {
		if a, ok := turnAttr(r.Attrs); ok {
			r = r.Clone()
			r.AddAttrs(a)
		}
	}
	return h.Handler.Handle(ctx, r)
}
