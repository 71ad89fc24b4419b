package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// A running row whose workflow has ended (a finalizer that gave up, an API that died after
// creating the turn) does not hold one of the user's running-turn slots: the next message, in
// any session, closes it as failed and starts.
func TestTheRunningTurnLimitDoesNotCountTurnsWhoseWorkflowEnded(t *testing.T) {
	e := newChatEnv(t, func(d *Deps) { d.Limits.MaxRunning = 1 })
	resp, _ := e.post("tok-alice", e.lab, map[string]any{"message": "first"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	first := <-e.turns.start
	firstTurn, err := e.repo.Turn(context.Background(), first.TurnID)
	if err != nil {
		t.Fatal(err)
	}

	// While the first turn's workflow runs, the limit holds.
	resp, _ = e.post("tok-alice", e.lab2, map[string]any{"message": "second"})
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d with a turn running, want 429", resp.StatusCode)
	}
	errorMessage(t, resp)

	// Its workflow ends without its row being closed.
	e.turns.mu.Lock()
	e.turns.ended = map[string]bool{firstTurn.WorkflowID: true}
	e.turns.mu.Unlock()
	resp, _ = e.post("tok-alice", e.lab2, map[string]any{"message": "second"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d once the first turn's workflow ended, want 200: %s", resp.StatusCode, errorMessage(t, resp))
	}
	second := <-e.turns.start
	closed, err := e.repo.Turn(context.Background(), first.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	if closed.Status != domain.TurnFailed || closed.Error != staleMessage {
		t.Fatalf("first turn %s (%q), want failed with the stale message", closed.Status, closed.Error)
	}
	e.turns.finish(t, e.repo, second)
}
