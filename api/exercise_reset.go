package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Exercises beyond check and hint: how many faults an injection is asked for, and the reset
// that restores the snapshot the injection took first.

// MaxInjectedFaults bounds the faults one injection is asked for; "random" picks 1 to
// randomFaults, as GNS3 3.1's fault dialog offers.
const (
	MaxInjectedFaults = 5
	randomFaults      = 3
)

// injectCount finds the count in GNS3 3.1's fault dialog's message ("Inject 2 network fault(s)
// for troubleshooting practice", "Inject random network fault(s) …").
var injectCount = regexp.MustCompile(`(?i)\binject\s+(\d+|random|an?|one|two|three|four|five)\s+(?:network\s+)?fault`)

var countWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}

// faultCount is how many faults an injection turn must record: the request's count field ("random"
// or 1–MaxInjectedFaults), else the number its message asks for, else one. A count that is out of
// range, or that the message contradicts, is refused with its status and a message.
func faultCount(message string, field json.RawMessage) (int, int, string) {
	fromMessage, random := 0, false
	if m := injectCount.FindStringSubmatch(message); m != nil && message != InjectMessage {
		word := strings.ToLower(m[1])
		if n, err := strconv.Atoi(word); err == nil {
			fromMessage = n
		} else if word == "random" {
			random = true
		} else {
			fromMessage = countWords[word]
		}
	}
	fromField := 0
	if len(field) > 0 && string(field) != "null" {
		var s string
		if json.Unmarshal(field, &s) == nil && strings.EqualFold(strings.TrimSpace(s), "random") {
			random = true
		} else if err := json.Unmarshal(field, &fromField); err != nil || fromField < 1 || fromField > MaxInjectedFaults {
			return 0, http.StatusUnprocessableEntity, fmt.Sprintf("count must be a number from 1 to %d, or \"random\".", MaxInjectedFaults)
		}
		if fromMessage != 0 && fromField != 0 && fromMessage != fromField {
			return 0, http.StatusUnprocessableEntity, fmt.Sprintf("count is %d but the message asks for %d fault(s); send one of them.", fromField, fromMessage)
		}
	}
	n := max(fromField, fromMessage)
	switch {
	case n == 0 && random:
		n = 1 + rand.IntN(randomFaults)
	case n == 0:
		n = 1
	case n > MaxInjectedFaults:
		return 0, http.StatusUnprocessableEntity, fmt.Sprintf("an exercise holds at most %d faults (asked for %d).", MaxInjectedFaults, n)
	}
	return n, 0, ""
}

// planInjection stores what an injection turn was asked for, before its workflow starts, so its
// first model call already knows.
func (t *chatTurn) planInjection(ctx context.Context) error {
	if t.faults == 0 || t.s.deps.Exercises == nil {
		return nil
	}
	return t.s.deps.Exercises.Repo.PlanInjection(ctx, &models.InjectionPlan{TurnID: t.turn.ID, SessionID: t.sess.ThreadID,
		ProjectID: t.params.ProjectID, UserID: t.user.ID, Requested: t.faults})
}

// postExerciseReset is "reset" typed in the session, as a route: the same stream.
func (s *Server) postExerciseReset(c *gin.Context) {
	var body struct {
		ApprovalCards *bool `json:"approval_cards"`
	}
	if c.Request.ContentLength != 0 && !decodeJSON(c, &body, 4<<10) {
		return
	}
	sess, ex, ok := s.sessionExercise(c)
	if !ok {
		return
	}
	s.startReset(c, currentUser(c), sess.ProjectID, ex, "reset", body.ApprovalCards != nil && *body.ApprovalCards)
}

// startReset opens the reset's turn (the request as its message), hands the reset to the
// exercise's workflow and streams the turn: the question when the reset asks, the outcome, done.
func (s *Server) startReset(c *gin.Context, u *auth.Caller, projectID string, ex *models.Exercise, message string, cards bool) {
	switch {
	case ex.Status != domain.ExerciseOpen:
		abort(c, http.StatusConflict, "The exercise is over ("+ex.Status+"); there is nothing to reset.")
		return
	case ex.SnapshotID == "":
		abort(c, http.StatusConflict, "This exercise has no snapshot to go back to (it was injected before exercises kept one); "+
			"restore a snapshot of your own with the lab tools instead.")
		return
	}
	ctx := context.WithoutCancel(c.Request.Context())
	turn, err := s.deps.Repo.StartExchange(ctx, models.ExchangeParams{SessionID: ex.SessionID, UserID: u.ID, ProjectID: projectID,
		ExerciseID: ex.ID, Request: message})
	if errors.Is(err, models.ErrTurnRunning) {
		abort(c, http.StatusConflict, "The copilot is still answering the previous message in this session; wait for it to finish or abort it.")
		return
	}
	if err != nil {
		s.internalError(c, err, "Starting the reset failed")
		return
	}
	// By name: GNS3 gives every snapshot a new id whenever it opens the project again (after a
	// restart, a close, any restore), and the exercise's name is its own.
	snapshot := ex.SnapshotName
	if snapshot == "" {
		snapshot = ex.SnapshotID
	}
	call := relay.ToolCall{ID: workflows.ResetCallID, Type: "function", Function: relay.ToolCallFunction{Name: domain.RestoreSnapshotTool,
		Arguments: fmt.Sprintf(`{"snapshot":%q}`, snapshot), Complete: true}}
	req := workflows.ExerciseRequest{TurnID: turn.ID, Snapshot: snapshot, Approval: s.deps.Work.Approval, ApprovalTimeout: s.deps.Work.ApprovalTimeout}
	err = s.deps.Credentials.Put(ctx, turn.ID, u.Token, s.deps.Work.CredentialTTL)
	for _, p := range []relay.Payload{
		{Type: relay.TypeTurnStarted, SessionID: ex.SessionID, TurnID: turn.ID, Message: message},
		{Type: relay.TypeToolCall, SessionID: ex.SessionID, ToolCall: &call},
		{Type: relay.TypeToolStart, SessionID: ex.SessionID, ToolName: call.Function.Name, ToolCallID: call.ID},
	} {
		if err == nil {
			data, _ := json.Marshal(p)
			_, err = s.deps.Events.Append(ctx, turn.ID, p.Type, data)
		}
	}
	if err == nil {
		_, err = s.deps.Exercises.Control.AskExercise(ctx, ex.ID, workflows.ExerciseResetUpdate, req)
	}
	if err != nil {
		// Nothing was restored: the turn ends at once, saying so.
		if _, ferr := s.deps.Repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: turn.ID, Status: domain.TurnFailed, Error: "the reset could not start"}); ferr != nil {
			s.log.Warn("closing a reset that could not start", "turn", turn.ID, "error", ferr)
		}
		_ = s.deps.Credentials.Delete(ctx, turn.ID)
		var refused *temporal.ApplicationError
		switch {
		case errors.Is(err, durable.ErrExerciseOver):
			abort(c, http.StatusConflict, "The exercise is over; there is nothing to reset.")
		case errors.As(err, &refused):
			abort(c, http.StatusConflict, "The reset was refused: "+refused.Message()+"; nothing was restored.")
		default:
			s.internalError(c, err, "Starting the reset failed; nothing was restored")
		}
		return
	}
	s.streamTurn(c, ex.SessionID, turn.ID, "", cards)
}

// abortReset stops a reset's turn that waits for its decision, as a rejection; one whose
// restore is already running goes on. It reports whether the turn was a reset's.
func (s *Server) abortReset(c *gin.Context, sess *models.ChatSession, t *models.ChatTurn) bool {
	if t.Mode != models.ExerciseRequestMode {
		return false
	}
	var pending []models.Approval
	var err error
	if s.replies != nil {
		pending, err = s.replies.Repo.PendingForTurn(c.Request.Context(), t.ID)
	}
	if err != nil || len(pending) == 0 {
		abort(c, http.StatusConflict, "The reset is being applied and cannot be stopped now; it ends by itself.")
		return true
	}
	u := currentUser(c)
	d := workflows.ApprovalDecision{ApprovalID: pending[0].ID, Decision: workflows.DecisionReject, Comment: workflows.CommentTurnAborted,
		UserID: u.ID, Username: u.Username}
	if status, msg := s.replies.hand(c.Request.Context(), &pending[0], d); status != 0 {
		abort(c, status, msg)
		return true
	}
	c.JSON(http.StatusAccepted, gin.H{"status": "ok", "session_id": sess.ThreadID, "turn_id": t.ID})
	return true
}
