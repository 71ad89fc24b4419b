package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// InjectMessage is the message of an inject request that brings none, as GNS3's own copilot
// words it.
const InjectMessage = "Inject a network fault for troubleshooting practice"

// ExerciseControl hands a student's check, hint or give-up to the exercise's workflow.
type ExerciseControl interface {
	AskExercise(ctx context.Context, workflowID, update string, req workflows.ExerciseRequest) (workflows.ExerciseAnswer, error)
}

// Exercises is what the exercise routes need; nil in Deps leaves them (and /chat/inject) out.
type Exercises struct {
	Repo    models.ExerciseRepository
	Control ExerciseControl
}

// exerciseAskTimeout bounds a check, which runs show commands on the lab's devices.
const exerciseAskTimeout = 3 * time.Minute

// exerciseCredentialTTL is how long the asker's credential stays stored for one check.
const exerciseCredentialTTL = 10 * time.Minute

// postInject is /stream in troubleshooting_injection mode: same body and SSE, a default message.
func (s *Server) postInject(c *gin.Context) {
	s.startTurn(c, string(tools.TroubleshootingInjection), InjectMessage)
}

func (s *Server) getExercise(c *gin.Context) {
	if _, ex, ok := s.sessionExercise(c); ok {
		c.JSON(http.StatusOK, exerciseView(ex))
	}
}

// sessionExercise loads the route's session and its latest exercise; false means the answer
// (not found, or a failure) has been sent.
func (s *Server) sessionExercise(c *gin.Context) (*models.ChatSession, *models.Exercise, bool) {
	sess, ok := s.session(c)
	if !ok {
		return nil, nil, false
	}
	ex, err := s.deps.Exercises.Repo.Latest(c.Request.Context(), sess.ThreadID)
	if errors.Is(err, models.ErrNotFound) {
		abort(c, http.StatusNotFound, "This session has no exercise; start one with POST …/chat/inject.")
		return nil, nil, false
	}
	if err != nil {
		s.internalError(c, err, "Loading the exercise failed")
		return nil, nil, false
	}
	return sess, ex, true
}

func exerciseView(ex *models.Exercise) gin.H { return ex.View() }

// exerciseAnswer is the answer to a check, hint or give-up, as JSON and in exercise_checked.
type exerciseAnswer struct {
	Request  string `json:"request"`
	Status   string `json:"status"`
	Fixed    bool   `json:"fixed"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	Exercise gin.H  `json:"exercise"`
}

func (s *Server) exerciseRequest(update string) gin.HandlerFunc {
	return func(c *gin.Context) {
		sess, ok := s.session(c)
		if !ok {
			return
		}
		ans, status, msg := s.askExercise(c.Request.Context(), currentUser(c), sess.ThreadID, update)
		if status != http.StatusOK {
			if status == http.StatusInternalServerError {
				s.log.Error("asking the exercise", "session", sess.ThreadID, "request", update, "error", msg)
				msg = "The exercise could not answer just now; try again in a moment."
			}
			abort(c, status, msg)
			return
		}
		c.JSON(http.StatusOK, ans)
	}
}

// askExercise sends a request to the session's open exercise. A non-200 status comes with the
// message for people (or, for 500, the cause to log).
func (s *Server) askExercise(ctx context.Context, u *auth.Caller, sessionID, update string) (exerciseAnswer, int, string) {
	repo := s.deps.Exercises.Repo
	ex, err := repo.Latest(ctx, sessionID)
	if errors.Is(err, models.ErrNotFound) {
		return exerciseAnswer{}, http.StatusNotFound, "This session has no exercise; start one with POST …/chat/inject."
	}
	if err != nil {
		return exerciseAnswer{}, http.StatusInternalServerError, err.Error()
	}
	if ex.Status != domain.ExerciseOpen {
		return exerciseAnswer{}, http.StatusConflict, "The exercise is over (" + ex.Status + "); inject a new fault for another one."
	}
	req := workflows.ExerciseRequest{}
	if update == workflows.ExerciseCheckUpdate {
		// The check reaches the lab as the student who asks, with their GNS3 permissions; the
		// credential is stored only for as long as the check may take.
		req.CredentialKey = "exercise-check:" + uuid.NewString()
		if err := s.deps.Credentials.Put(ctx, req.CredentialKey, u.Token, exerciseCredentialTTL); err != nil {
			return exerciseAnswer{}, http.StatusInternalServerError, err.Error()
		}
		defer func() { _ = s.deps.Credentials.Delete(context.WithoutCancel(ctx), req.CredentialKey) }()
	}
	actx, cancel := context.WithTimeout(ctx, exerciseAskTimeout)
	defer cancel()
	out, err := s.deps.Exercises.Control.AskExercise(actx, ex.ID, update, req)
	if errors.Is(err, durable.ErrExerciseOver) {
		return exerciseAnswer{}, http.StatusConflict, "The exercise is over; inject a new fault for another one."
	}
	if err != nil {
		return exerciseAnswer{}, http.StatusInternalServerError, err.Error()
	}
	if fresh, err := repo.Get(ctx, ex.ID); err == nil {
		ex = fresh
	}
	view := exerciseView(ex)
	// The row may lag the workflow's answer by a moment; the answer is the truth.
	view["status"], view["checks"], view["hints_used"] = out.Status, out.Checks, out.HintsUsed
	return exerciseAnswer{Request: update, Status: out.Status, Fixed: out.Fixed, Message: out.Message, Hint: out.Hint, Exercise: view},
		http.StatusOK, ""
}

// typedExerciseRequest tells whether a chat message is a request to the session's exercise:
// "check", "hint", "give up" or "reset", alone.
func typedExerciseRequest(msg string) string {
	switch strings.Trim(strings.ToLower(strings.Join(strings.Fields(msg), " ")), ".!?") {
	case "check":
		return workflows.ExerciseCheckUpdate
	case "hint":
		return workflows.ExerciseHintUpdate
	case "give up":
		return workflows.ExerciseGiveUpUpdate
	case "reset":
		return workflows.ExerciseResetUpdate
	}
	return ""
}

// answerTypedRequest answers "check"/"hint"/"give up" typed in a session with an open exercise, as
// an SSE stream of its own: the answer as content (all a client that knows only the events of GNS3's chat API
// shows), exercise_checked for clients that show the exercise, then done. The request and the
// answer join the transcript, so a reload shows both. It reports false when the message is not
// for an exercise and the turn should start as usual.
func (s *Server) answerTypedRequest(c *gin.Context, u *auth.Caller, projectID, sessionID, message string, cards bool) bool {
	update := typedExerciseRequest(message)
	if update == "" || sessionID == "" || s.deps.Exercises == nil {
		return false
	}
	ctx := c.Request.Context()
	if _, err := s.deps.Repo.GetSession(ctx, u.ID, projectID, sessionID); err != nil {
		return false // the turn's own checks answer for a session that is not the user's
	}
	ex, err := s.deps.Exercises.Repo.Latest(ctx, sessionID)
	if err != nil || ex.Status != domain.ExerciseOpen {
		return false
	}
	if update == workflows.ExerciseResetUpdate {
		// A reset waits for a decision: it is a turn of its own, whose stream says what happened.
		s.startReset(c, u, projectID, ex, message, cards)
		return true
	}
	ans, status, msg := s.askExercise(ctx, u, sessionID, update)
	if status != http.StatusOK {
		if status == http.StatusInternalServerError {
			s.log.Error("asking the exercise", "session", sessionID, "request", update, "error", msg)
			msg = "The exercise could not answer just now; try again in a moment."
		}
		abort(c, status, msg)
		return true
	}
	text := ans.Message
	if ans.Hint != "" {
		text = "Hint: " + ans.Hint + "\n\n" + ans.Message
	}
	// The exercise has answered whatever happens to the transcript: a failed write costs the
	// reload its copy, never the student the answer.
	meta, _ := json.Marshal(map[string]any{"exercise_request": update, "exercise_status": ans.Status})
	messageID := ""
	stored, err := s.deps.Repo.RecordExchange(context.WithoutCancel(ctx), models.ExchangeParams{SessionID: sessionID,
		UserID: u.ID, ProjectID: projectID, ExerciseID: ex.ID, Request: message, Answer: text, Metadata: string(meta)})
	if err != nil {
		s.log.Error("storing an exercise's answer in the transcript", "session", sessionID, "request", update, "error", err)
	} else {
		messageID = stored.ID
	}
	content, _ := json.Marshal(relay.Payload{Type: relay.TypeContent, SessionID: sessionID, Content: text, MessageID: messageID})
	checked, _ := json.Marshal(relay.Payload{Type: relay.TypeExerciseChecked, SessionID: sessionID, Status: update,
		Content: text, Hint: ans.Hint, Exercise: ans.Exercise})
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, SessionID: sessionID, Status: domain.TurnCompleted})
	w, err := s.startSSE(c)
	defer w.end()
	if err == nil {
		w.frame("", relay.TypeContent, content)
		w.frame("", relay.TypeExerciseChecked, checked)
		w.frame("", relay.TypeDone, done)
		err = w.send()
	}
	if err != nil {
		s.dropStream(err, "exercise", sessionID)
	}
	return true
}

// faultView is the private record of one injected fault.
type faultView struct {
	Device        string   `json:"device"`
	NodeID        string   `json:"node_id"`
	Lines         []string `json:"lines"`
	Description   string   `json:"description"`
	VerifyCommand string   `json:"verify_command"`
	VerifyExpect  string   `json:"verify_expect"`
	Hints         []string `json:"hints"`
	CreatedAt     string   `json:"created_at"`
	// Link is set on a fault put on a link's conditions.
	Link *faultLinkView `json:"link,omitempty"`
}

type faultLinkView struct {
	Nodes      []string `json:"nodes"`
	LinkID     string   `json:"link_id"`
	Conditions string   `json:"conditions"`
}

func (s *Server) exerciseRecord(ctx context.Context, ex *models.Exercise) (gin.H, error) {
	faults, err := s.deps.Exercises.Repo.Faults(ctx, ex.ID)
	if err != nil {
		return nil, err
	}
	v := exerciseView(ex)
	v["project_id"], v["user_id"], v["turn_id"] = ex.ProjectID, ex.UserID, ex.TurnID
	fs := make([]faultView, len(faults))
	for i, f := range faults {
		fs[i] = faultView{Device: f.Device, NodeID: f.NodeID, Lines: f.LinesList(), Description: f.Description,
			VerifyCommand: f.VerifyCommand, VerifyExpect: f.VerifyExpect, Hints: f.HintList(), CreatedAt: isoTime(f.CreatedAt)}
		if f.IsLink() {
			fs[i].Link = &faultLinkView{Nodes: f.LinkNodeList(), LinkID: f.LinkID, Conditions: f.Conditions}
		}
	}
	v["faults"] = fs
	return v, nil
}

func (s *Server) listExerciseRecords(c *gin.Context) {
	project := strings.TrimSpace(c.Query("project_id"))
	if _, err := uuid.Parse(project); err != nil {
		abort(c, http.StatusUnprocessableEntity, "project_id must be the UUID of a GNS3 project.")
		return
	}
	limit, ok := queryLimit(c, 50, 500)
	if !ok {
		return
	}
	exs, err := s.deps.Exercises.Repo.ByProject(c.Request.Context(), project, limit)
	if err != nil {
		s.internalError(c, err, "Listing exercises failed")
		return
	}
	out := make([]gin.H, 0, len(exs))
	for i := range exs {
		v, err := s.exerciseRecord(c.Request.Context(), &exs[i])
		if err != nil {
			s.internalError(c, err, "Loading an exercise's faults failed")
			return
		}
		out = append(out, v)
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getExerciseRecord(c *gin.Context) {
	ex, err := s.deps.Exercises.Repo.Get(c.Request.Context(), c.Param("exercise_id"))
	if errors.Is(err, models.ErrNotFound) {
		abort(c, http.StatusNotFound, "Exercise '"+respond.Truncate(c.Param("exercise_id"), 200)+"' not found.")
		return
	}
	if err != nil {
		s.internalError(c, err, "Loading the exercise failed")
		return
	}
	v, err := s.exerciseRecord(c.Request.Context(), ex)
	if err != nil {
		s.internalError(c, err, "Loading the exercise's faults failed")
		return
	}
	c.JSON(http.StatusOK, v)
}
