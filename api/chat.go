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

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// chatRequest is the ChatRequest of GNS3's own copilot. Pointers tell "absent" from zero values.
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
	// Count is how many faults an injection is asked for (1 to MaxInjectedFaults, or "random");
	// only the inject route takes it.
	Count json.RawMessage `json:"count"`
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
	if forcedMode == "" && s.answerTypedRequest(c, u, project.ProjectID, sessionID, *req.Message, req.cards()) {
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
	t, ok := s.newChatTurn(ctx, c, u, forcedMode)
	if !ok {
		return
	}
	if t.mode == domain.ModeTroubleshootingInjection {
		if t.faults, status, problem = faultCount(*req.Message, req.Count); status != 0 {
			abort(c, status, problem)
			return
		}
	} else if len(req.Count) > 0 && string(req.Count) != "null" {
		abort(c, http.StatusUnprocessableEntity, "count is for fault injections (…/chat/inject) only.")
		return
	}
	t.params = models.StartTurnParams{
		SessionID: sessionID, UserID: u.ID, ProjectID: project.ProjectID, Message: *req.Message,
		Mode: t.mode, LLMConfigID: t.llm.ConfigID, Temperature: req.Temperature,
		InitialTitle: initialTitle(*req.Message), WorkflowID: workflows.WorkflowID, MaxRunningPerUser: maxRunning,
	}
	t.projectName = project.Name
	err := s.launcher.Launch(ctx, t, u.Token)
	var step *durable.StepError
	var limit *models.LimitError
	switch {
	case errors.As(err, &step):
		abort(c, http.StatusServiceUnavailable, step.What+"; nothing was saved, try again in a moment.")
		return
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
	s.turnStarted(c, t.in)
	s.streamTurn(c, t.sess.ThreadID, t.turn.ID, "", req.cards())
}

// chatTurn is a chat turn being launched (durable.Work): its row and first message, then its
// first event and its ChatTurn workflow.
type chatTurn struct {
	s        *Server
	user     *auth.Caller
	llm      llmconfig.Settings
	mode     string
	approval string
	// skipApproval marks an injection turn (workflows.ChatTurnInput.SkipApproval), faults how
	// many faults it must record.
	skipApproval bool
	faults       int
	projectName  string
	params       models.StartTurnParams

	// Set by Claim and Start.
	sess    *models.ChatSession
	turn    *models.ChatTurn
	created bool
	in      workflows.ChatTurnInput
}

// newChatTurn chooses the turn's LLM configuration, mode and approval policy; false means the
// answer has been sent.
func (s *Server) newChatTurn(ctx context.Context, c *gin.Context, u *auth.Caller, forcedMode string) (*chatTurn, bool) {
	llm, err := s.deps.LLM.Choose(ctx, u.ID, u.GNS3)
	if err != nil {
		var bad *llmconfig.BadConfigError
		if errors.Is(err, llmconfig.ErrNotConfigured) || errors.As(err, &bad) {
			abort(c, http.StatusBadRequest, err.Error())
			return nil, false
		}
		abortGNS3(c, err, "Choosing your LLM configuration")
		return nil, false
	}
	t := &chatTurn{s: s, user: u, llm: llm, mode: llm.CopilotMode, approval: s.deps.Work.Approval}
	if t.mode == "" {
		t.mode = domain.ModeTeachingAssistant
	}
	if forcedMode != "" {
		t.mode = forcedMode
		// An injection turn breaks the lab on purpose: nobody is asked to approve that (the
		// forbidden-command list still applies to every line). The empty setting keeps a worker
		// that does not know SkipApproval from asking.
		t.approval = ""
		t.skipApproval = true
	}
	return t, true
}

func (t *chatTurn) ID() string   { return t.turn.ID }
func (t *chatTurn) Noun() string { return "turn" }

func (t *chatTurn) Claim(ctx context.Context) (err error) {
	t.sess, t.turn, t.created, err = t.s.deps.Repo.StartTurn(ctx, t.params)
	return err
}

// Repair closes the session's running turn or the user's running turns when their workflows are
// gone, so that this message goes on.
func (t *chatTurn) Repair(ctx context.Context, err error) bool {
	var limit *models.LimitError
	switch {
	case errors.Is(err, models.ErrTurnRunning) && t.params.SessionID != "":
		closed, cerr := t.s.closeStaleTurnOf(ctx, t.params.SessionID)
		if cerr != nil {
			t.s.log.Warn("checking whether the running turn is stale", "session", t.params.SessionID, "error", cerr)
		}
		return closed
	case errors.As(err, &limit):
		// Rows of turns whose workflows have ended must not count against the user's limit.
		closed, cerr := t.s.closeStaleTurnsOfUser(ctx, t.user.ID)
		if cerr != nil {
			t.s.log.Warn("checking whether the user's running turns are stale", "user", t.user.ID, "error", cerr)
			return false
		}
		return closed > 0
	}
	return false
}

// Start writes the turn's first event, which a stream opened on it replays, and starts its
// workflow.
func (t *chatTurn) Start(ctx context.Context) error {
	s, sess, turn := t.s, t.sess, t.turn
	started, _ := json.Marshal(relay.Payload{Type: relay.TypeTurnStarted, SessionID: sess.ThreadID, TurnID: turn.ID, Title: sess.Title, Message: t.params.Message})
	if _, err := s.deps.Events.Append(ctx, turn.ID, relay.TypeTurnStarted, started); err != nil {
		return &durable.StepError{What: "The event log is unavailable", Err: err}
	}
	if err := t.planInjection(ctx); err != nil {
		return &durable.StepError{What: "The exercise could not be planned", Err: err}
	}
	w := s.deps.Work
	t.in = workflows.ChatTurnInput{SessionID: sess.ThreadID, TurnID: turn.ID, ProjectID: t.params.ProjectID, UserID: t.user.ID,
		Mode: t.mode, DeviceConcurrency: w.DeviceConcurrency, Approval: t.approval, ApprovalTimeout: w.ApprovalTimeout,
		SkipApproval: t.skipApproval, CredentialTTL: w.CredentialTTL}
	desc := durable.DescribeTurn(turn.Seq, t.in, t.projectName, t.user.Username, t.llm.Provider, t.llm.Model)
	return s.deps.Turns.StartTurn(ctx, turn.WorkflowID, t.in, desc)
}

func (t *chatTurn) Abandon(ctx context.Context, _ string) error {
	return t.s.deps.Repo.AbandonTurn(ctx, t.turn, t.created)
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
	if errors.Is(err, models.ErrNotFound) || (err == nil && t.Status != domain.TurnRunning) {
		abort(c, http.StatusConflict, "No turn is running in this session.")
		return
	}
	if err != nil {
		s.internalError(c, err, "Loading the session's turn failed")
		return
	}
	if s.abortReset(c, sess, t) {
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
	if !exists && t.Status != domain.TurnRunning {
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
			abort(c, http.StatusBadRequest, "Last-Event-ID '"+respond.Truncate(last, 40)+"' is not an event id of this stream.")
			return
		}
	}
	cards := c.Query("approval_cards")
	s.streamTurn(c, sess.ThreadID, t.ID, last, cards == "1" || cards == "true")
}
