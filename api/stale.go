package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// staleMessage is what the user reads about a turn that was closed this way.
const staleMessage = "The copilot stopped answering this message without finishing it (the service was interrupted); it was closed so that you can go on. Send the message again if you still need an answer."

// closeIfStale closes t as failed when its row says running but its workflow has ended or never
// started (a finalize that gave up, or an API that died between creating the turn and starting
// its workflow), so that the session never answers 409 forever. It reports whether t was
// closed (by this call or meanwhile by its own finalizer).
func (s *Server) closeIfStale(ctx context.Context, t *models.ChatTurn) (bool, error) {
	if t.Status != domain.TurnRunning {
		return true, nil
	}
	if gone, err := s.launcher.Gone(ctx, t.WorkflowID, t.CreatedAt); err != nil || !gone {
		return false, err
	}
	applied, err := s.deps.Repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: t.ID, Status: domain.TurnFailed, Error: staleMessage})
	if err != nil {
		return false, err
	}
	s.log.Warn("closed a turn whose workflow had ended while its row said running", "turn", t.ID, "workflow", t.WorkflowID, "applied", applied)
	// Anyone following the turn's stream learns it ended.
	if applied {
		msg, _ := json.Marshal(relay.Payload{Type: relay.TypeError, SessionID: t.SessionID, Error: staleMessage})
		if _, err := s.deps.Events.Append(ctx, t.ID, relay.TypeError, msg); err != nil {
			s.log.Warn("announcing a closed turn", "turn", t.ID, "error", err)
		}
	}
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, SessionID: t.SessionID, TurnID: t.ID,
		Status: domain.TurnFailed, Error: staleMessage})
	if _, _, err := s.deps.Events.AppendTerminal(ctx, t.ID, relay.TypeDone, done, time.Hour); err != nil {
		s.log.Warn("ending a closed turn's stream", "turn", t.ID, "error", err)
	}
	return true, nil
}

// closeStaleTurnOf closes the session's latest turn if it is stale (see closeIfStale).
func (s *Server) closeStaleTurnOf(ctx context.Context, sessionID string) (bool, error) {
	t, err := s.deps.Repo.LatestTurn(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return s.closeIfStale(ctx, t)
}

// closeStaleTurnsOfUser closes every stale turn (see closeIfStale) among the user's running
// ones and says how many it closed, so that the per-user limit counts only turns that run.
func (s *Server) closeStaleTurnsOfUser(ctx context.Context, userID string) (int, error) {
	turns, err := s.deps.Repo.RunningTurns(ctx, userID)
	if err != nil {
		return 0, err
	}
	closed := 0
	for i := range turns {
		ok, err := s.closeIfStale(ctx, &turns[i])
		if err != nil {
			return closed, err
		}
		if ok {
			closed++
		}
	}
	return closed, nil
}
