package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/relay"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// chatRequest is the seed's ChatRequest. Pointers tell "absent" from zero values.
type chatRequest struct {
	Message     *string  `json:"message"`
	SessionID   *string  `json:"session_id"`
	Stream      *bool    `json:"stream"`
	Temperature *float64 `json:"temperature"`
	Mode        *string  `json:"mode"`
	// ApprovalCards says the client shows approval cards with buttons (our page): its stream
	// then stays open while a turn waits for a decision. Without it the question comes as
	// content and the stream ends (approval_reply.go).
	ApprovalCards *bool `json:"approval_cards"`
}

func (req chatRequest) cards() bool { return req.ApprovalCards != nil && *req.ApprovalCards }

func (s *Server) postStream(c *gin.Context) { s.startTurn(c, "", "") }

// startTurn starts a turn and streams it. forcedMode, when set, replaces the mode of the user's
// LLM configuration (the inject route's), and defaultMessage stands in for a missing message.
func (s *Server) startTurn(c *gin.Context, forcedMode, defaultMessage string) {
	var req chatRequest
	if !decodeJSON(c, &req, int64(s.deps.MaxMessageBytes)+16<<10) {
		return
	}
	if defaultMessage != "" && (req.Message == nil || strings.TrimSpace(*req.Message) == "") {
		req.Message = &defaultMessage
	}
	sessionID, status, problem := req.check(s.deps.MaxMessageBytes)
	if status != 0 {
		abort(c, status, problem)
		return
	}

	u := currentUser(c)
	project := currentProject(c)
	if forcedMode == "" && s.answerTypedRequest(c, u, project.ProjectID, sessionID, *req.Message) {
		return
	}
	if forcedMode == "" && s.answerApprovalByReply(c, u, project.ProjectID, sessionID, *req.Message, req.cards()) {
		return
	}
	maxRunning, admitted := s.admitTurn(c, u)
	if !admitted {
		return
	}
	// Setting the turn up must not be cut short by a client that hangs up: the turn is either
	// fully started or fully undone.
	ctx := context.WithoutCancel(c.Request.Context())

	llm, err := s.deps.LLM.Choose(ctx, u.ID, u.GNS3)
	if err != nil {
		if errors.Is(err, llmconfig.ErrNotConfigured) {
			abort(c, http.StatusBadRequest, err.Error())
			return
		}
		var bad *llmconfig.BadConfigError
		if errors.As(err, &bad) {
			abort(c, http.StatusBadRequest, err.Error())
			return
		}
		abortGNS3(c, err, "Choosing your LLM configuration")
		return
	}
	mode := llm.CopilotMode
	if mode == "" {
		mode = "teaching_assistant"
	}
	approval := s.deps.Approval
	if forcedMode != "" {
		mode = forcedMode
		// An injection turn breaks the lab on purpose: nobody is asked to approve that (the
		// forbidden-command list still applies to every line). The empty setting keeps a worker
		// that does not know SkipApproval from asking.
		approval = ""
	}

	params := models.StartTurnParams{
		SessionID: sessionID, UserID: u.ID, ProjectID: project.ProjectID, Message: *req.Message,
		Mode: mode, LLMConfigID: llm.ConfigID, Temperature: req.Temperature,
		InitialTitle: initialTitle(*req.Message), WorkflowID: workflows.WorkflowID, MaxRunningPerUser: maxRunning,
	}
	sess, turn, created, err := s.deps.Repo.StartTurn(ctx, params)
	if errors.Is(err, models.ErrTurnRunning) && sessionID != "" {
		// The running turn may be one whose workflow is long gone: then it is closed and this
		// message goes on.
		if closed, cerr := s.closeStaleTurnOf(ctx, sessionID); cerr != nil {
			s.log.Warn("checking whether the running turn is stale", "session", sessionID, "error", cerr)
		} else if closed {
			sess, turn, created, err = s.deps.Repo.StartTurn(ctx, params)
		}
	}
	var limit *models.TurnLimitError
	if errors.As(err, &limit) {
		// Rows of turns whose workflows have ended must not count against the user's limit.
		if closed, cerr := s.closeStaleTurnsOfUser(ctx, u.ID); cerr != nil {
			s.log.Warn("checking whether the user's running turns are stale", "user", u.ID, "error", cerr)
		} else if closed > 0 {
			sess, turn, created, err = s.deps.Repo.StartTurn(ctx, params)
		}
	}
	switch {
	case errors.As(err, &limit):
		tooMany(c, turnRetryAfter, fmt.Sprintf("You already have %d turns running (at most %d at once per user, across all your sessions); "+
			"wait for one to finish or abort it.", limit.Running, limit.Max))
		return
	case errors.Is(err, models.ErrNotFound):
		abort(c, http.StatusNotFound, "Session '"+sessionID+"' not found.")
		return
	case errors.Is(err, models.ErrTurnRunning):
		abort(c, http.StatusConflict, "The copilot is still answering the previous message in this session; wait for it to finish or abort it.")
		return
	case err != nil:
		s.internalError(c, err, "Starting the turn failed")
		return
	}

	undo := func(what string, cause error) {
		_ = s.deps.Credentials.Delete(ctx, turn.ID)
		if err := s.deps.Repo.AbandonTurn(ctx, turn, created); err != nil {
			s.log.Error("undoing a turn that could not start", "turn", turn.ID, "error", err)
		}
		s.log.Error(what, "turn", turn.ID, "error", cause)
		abort(c, http.StatusServiceUnavailable, what+"; nothing was saved, try again in a moment.")
	}
	if err := s.deps.Credentials.Put(ctx, turn.ID, u.Token, s.deps.CredentialTTL); err != nil {
		undo("Storing the turn's credentials failed", err)
		return
	}
	started, _ := json.Marshal(relay.Payload{Type: relay.TypeTurnStarted, SessionID: sess.ThreadID, TurnID: turn.ID, Title: sess.Title, Message: *req.Message})
	if _, err := s.deps.Events.Append(ctx, turn.ID, relay.TypeTurnStarted, started); err != nil {
		undo("The event log is unavailable", err)
		return
	}
	in := workflows.ChatTurnInput{SessionID: sess.ThreadID, TurnID: turn.ID, ProjectID: project.ProjectID, UserID: u.ID,
		Mode: mode, DeviceConcurrency: s.deps.DeviceConcurrency, Approval: approval, ApprovalTimeout: s.deps.ApprovalTimeout,
		SkipApproval: forcedMode != "", CredentialTTL: s.deps.CredentialTTL}
	desc := describeTurn(turn.Seq, in, project.Name, u.Username, llm.Provider, llm.Model)
	if err := s.deps.Turns.StartTurn(ctx, turn.WorkflowID, in, desc); err != nil {
		undo("The workflow engine did not accept the turn", err)
		return
	}
	s.turnStarted(c, in)
	s.streamTurn(c, sess.ThreadID, turn.ID, "", req.cards())
}

// check finds the first problem of a chat request before anything is stored or started: its
// HTTP status and message, or status 0. sessionID is the requested session in canonical form
// ("" for a new session with an id of the server's choosing).
func (req chatRequest) check(maxMessageBytes int) (sessionID string, status int, problem string) {
	if req.Message == nil || strings.TrimSpace(*req.Message) == "" {
		return "", http.StatusUnprocessableEntity, "message is required and must not be empty."
	}
	if len(*req.Message) > maxMessageBytes {
		return "", http.StatusRequestEntityTooLarge, fmt.Sprintf("message is %d bytes long; the limit is %d bytes.", len(*req.Message), maxMessageBytes)
	}
	if !utf8.ValidString(*req.Message) {
		return "", http.StatusUnprocessableEntity, "message must be valid UTF-8 text."
	}
	if req.SessionID != nil && *req.SessionID != "" {
		id, err := uuid.Parse(*req.SessionID)
		if err != nil || id == uuid.Nil {
			return "", http.StatusUnprocessableEntity, "session_id must be a UUID: one of your sessions, a new one you chose, or omitted to start a new session."
		}
		// A new id chosen by the client (GNS3's web UI does that) names the session it creates,
		// in the canonical form every session id has.
		sessionID = id.String()
	}
	if req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) {
		return "", http.StatusUnprocessableEntity, "temperature must be between 0 and 2."
	}
	if req.Mode != nil && *req.Mode != "" && *req.Mode != "text" {
		return "", http.StatusUnprocessableEntity, "mode must be \"text\" (the only interaction mode)."
	}
	return sessionID, 0, ""
}

// initialTitle names a new session after its first message until a better title is generated.
func initialTitle(msg string) string {
	t := strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(t) > 50 {
		r := []rune(t)
		t = string(r[:48]) + "…"
	}
	if t == "" {
		return "New Conversation"
	}
	return t
}

func (s *Server) abortTurn(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	t, err := s.deps.Repo.LatestTurn(c.Request.Context(), sess.ThreadID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && t.Status != models.TurnRunning) {
		abort(c, http.StatusConflict, "No turn is running in this session.")
		return
	}
	if err != nil {
		s.internalError(c, err, "Loading the session's turn failed")
		return
	}
	if closed, err := s.closeIfStale(c.Request.Context(), t); err != nil {
		s.log.Warn("checking whether the running turn is stale", "turn", t.ID, "error", err)
	} else if closed {
		// The same answer as a stop, plus what happened: nothing was running any more.
		c.JSON(http.StatusAccepted, gin.H{"status": "ok", "session_id": sess.ThreadID, "turn_id": t.ID, "closed": true, "message": staleMessage})
		return
	}
	if err := s.deps.Turns.CancelTurn(c.Request.Context(), t.WorkflowID); err != nil {
		s.internalError(c, err, "Cancelling the turn failed")
		return
	}
	// The workflow's cancellation reaches a running activity only with its next heartbeat;
	// the control stream stops it at once.
	ev, _ := json.Marshal(relay.Payload{Type: relay.TypeCancelRequested, SessionID: sess.ThreadID, TurnID: t.ID})
	if _, err := s.deps.Events.Append(c.Request.Context(), relay.ControlStream(t.ID), relay.TypeCancelRequested, ev); err != nil {
		s.log.Warn("announcing an abort on the control stream", "turn", t.ID, "error", err)
	}
	// GNS3's own copilot answers {"status": "ok", "session_id": …}; its web UI may read it.
	c.JSON(http.StatusAccepted, gin.H{"status": "ok", "session_id": sess.ThreadID, "turn_id": t.ID})
}

// joinStream lets a client that lost its stream (a page reload, a dropped connection) rejoin the
// running or last turn and replay what it missed after Last-Event-ID.
func (s *Server) joinStream(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	t, err := s.deps.Repo.LatestTurn(ctx, sess.ThreadID)
	if errors.Is(err, models.ErrNotFound) {
		c.Status(http.StatusNoContent)
		return
	}
	if err != nil {
		s.internalError(c, err, "Loading the session's turn failed")
		return
	}
	exists, err := s.deps.Events.Exists(ctx, t.ID)
	if err != nil {
		s.internalError(c, err, "Reading the event log failed")
		return
	}
	// A running turn whose log is still empty (its first event not yet written, or a log that
	// came back empty after a restart) is followed: its events are on their way.
	if !exists && t.Status != models.TurnRunning {
		c.Status(http.StatusNoContent)
		return
	}
	if !exists {
		// Nothing will ever be written for a turn whose workflow is gone: close it, which
		// writes its end, instead of waiting forever.
		if _, err := s.closeIfStale(ctx, t); err != nil {
			s.log.Warn("checking whether the running turn is stale", "turn", t.ID, "error", err)
		}
	}
	last := c.GetHeader("Last-Event-ID")
	if last == "" {
		last = c.Query("last_event_id")
	}
	if last != "" {
		if _, err := s.deps.Events.Range(ctx, t.ID, last, 1); errors.Is(err, relay.ErrInvalidID) {
			abort(c, http.StatusBadRequest, "Last-Event-ID '"+Truncate(last, 40)+"' is not an event id of this stream.")
			return
		}
	}
	cards := c.Query("approval_cards")
	s.streamTurn(c, sess.ThreadID, t.ID, last, cards == "1" || cards == "true")
}
