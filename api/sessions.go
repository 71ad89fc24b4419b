package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// sessionView is the ChatSession shape of GNS3's chat API: metadata and stats are objects, times ISO 8601.
type sessionView struct {
	ID            uint   `json:"id"`
	ThreadID      string `json:"thread_id"`
	UserID        string `json:"user_id"`
	ProjectID     string `json:"project_id"`
	Title         string `json:"title"`
	MessageCount  int64  `json:"message_count"`
	LLMCallsCount int64  `json:"llm_calls_count"`
	InputTokens   int64  `json:"input_tokens"`
	OutputTokens  int64  `json:"output_tokens"`
	TotalTokens   int64  `json:"total_tokens"`
	// ReasoningTokens is the part of OutputTokens the models spent thinking (where reported).
	ReasoningTokens int64 `json:"reasoning_tokens"`
	// CachedTokens is the part of input_tokens the model's prompt cache served (an addition to
	// GNS3's chat API).
	CachedTokens  int64           `json:"cached_tokens"`
	LastMessageAt *string         `json:"last_message_at"`
	CreatedAt     string          `json:"created_at"`
	UpdatedAt     string          `json:"updated_at"`
	Metadata      json.RawMessage `json:"metadata"`
	Stats         json.RawMessage `json:"stats"`
	Pinned        bool            `json:"pinned"`
	// Running tells a client whether a turn is under way, so it knows to rejoin its stream.
	Running bool `json:"running"`
	// HasExercise tells a client that GET …/exercise answers for this session, so it asks only
	// then; absent where it was not looked up (the export).
	HasExercise bool `json:"has_exercise,omitempty"`
}

// isoTime writes a time the way every client can read it, GNS3's web UI included (see
// models.ClientTime).
func isoTime(t time.Time) string { return models.ClientTime(t) }

func jsonObject(s string) json.RawMessage {
	if s == "" || !json.Valid([]byte(s)) {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}

func viewSession(s *models.ChatSession) sessionView {
	v := sessionView{ID: s.ID, ThreadID: s.ThreadID, UserID: s.UserID, ProjectID: s.ProjectID, Title: s.Title,
		MessageCount: s.MessageCount, LLMCallsCount: s.LLMCallsCount, InputTokens: s.InputTokens,
		OutputTokens: s.OutputTokens, TotalTokens: s.TotalTokens, ReasoningTokens: s.ReasoningTokens, CachedTokens: s.CachedTokens,
		CreatedAt: isoTime(s.CreatedAt),
		UpdatedAt: isoTime(s.UpdatedAt), Metadata: jsonObject(s.Metadata), Stats: jsonObject(s.Stats), Pinned: s.Pinned}
	if s.LastMessageAt != nil {
		t := isoTime(*s.LastMessageAt)
		v.LastMessageAt = &t
	}
	return v
}

func (s *Server) listSessions(c *gin.Context) {
	u := currentUser(c)
	mode, ok := modeFilter(c)
	if !ok {
		return
	}
	limit, offset, ok := queryPage(c, models.DefaultSessionPage, models.MaxSessionPage)
	if !ok {
		return
	}
	list, total, err := s.deps.Repo.ListSessionPage(c.Request.Context(), u.ID, c.Param("project_id"), mode, limit, offset)
	if err != nil {
		s.internalError(c, err, "Listing sessions failed")
		return
	}
	ids := make([]string, len(list))
	for i := range list {
		ids[i] = list[i].ThreadID
	}
	running, err := s.deps.Repo.RunningSessions(c.Request.Context(), ids)
	if err != nil {
		s.internalError(c, err, "Listing sessions failed")
		return
	}
	exercises, err := s.sessionsWithExercises(c.Request.Context(), ids)
	if err != nil {
		s.internalError(c, err, "Listing sessions failed")
		return
	}
	out := make([]sessionView, len(list))
	for i := range list {
		out[i] = viewSession(&list[i])
		out[i].Running = running[list[i].ThreadID]
		out[i].HasExercise = exercises[list[i].ThreadID]
	}
	c.Header(TotalCountHeader, strconv.FormatInt(total, 10))
	c.JSON(http.StatusOK, out)
}

// sessionsWithExercises reports which sessions have an exercise; none when the process serves
// no exercises.
func (s *Server) sessionsWithExercises(ctx context.Context, ids []string) (map[string]bool, error) {
	if s.deps.Exercises == nil {
		return map[string]bool{}, nil
	}
	return s.deps.Exercises.Repo.SessionsWithExercises(ctx, ids)
}

// session loads the session named in the path, answering 404 for anything that is not the
// caller's own session in this project.
func (s *Server) session(c *gin.Context) (*models.ChatSession, bool) {
	u := currentUser(c)
	id := c.Param("session_id")
	sess, err := s.deps.Repo.GetSession(c.Request.Context(), u.ID, c.Param("project_id"), id)
	if errors.Is(err, models.ErrNotFound) {
		abort(c, http.StatusNotFound, "Session '"+respond.Truncate(id, 80)+"' not found.")
		return nil, false
	}
	if err != nil {
		s.internalError(c, err, "Loading the session failed")
		return nil, false
	}
	return sess, true
}

// openAIMessage is the OpenAIMessage of GNS3's chat API.
type openAIMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is what a thinking model wrote before this answer, shown folded by clients that
	// know it; never part of Content, which is all GNS3's panel reads.
	Reasoning  string          `json:"reasoning,omitempty"`
	CreatedAt  string          `json:"created_at"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	Metadata   json.RawMessage `json:"metadata"`
}

// TotalCountHeader carries how many items a paged list holds in all (the session list, a
// session's history), so a client knows whether more pages exist.
const TotalCountHeader = "X-Total-Count"

// MaxOffset bounds ?offset=; no list of one user comes near it.
const MaxOffset = 1_000_000

// queryLimit reads ?limit=, def when absent; anything but a whole number from 1 to most is
// answered 422 and false.
func queryLimit(c *gin.Context, def, most int) (int, bool) {
	return queryWhole(c, "limit", def, 1, most)
}

// queryPage reads a page's ?limit= (see queryLimit) and ?offset= (0 when absent, a whole number
// from 0 to MaxOffset, else 422).
func queryPage(c *gin.Context, def, most int) (limit, offset int, ok bool) {
	if limit, ok = queryLimit(c, def, most); !ok {
		return 0, 0, false
	}
	offset, ok = queryWhole(c, "offset", 0, 0, MaxOffset)
	return limit, offset, ok
}

// queryWhole reads the query parameter name as a whole number from least to most, def when
// absent; anything else is answered 422, naming the range, and false.
func queryWhole(c *gin.Context, name string, def, least, most int) (int, bool) {
	q := c.Query(name)
	if q == "" {
		return def, true
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < least || n > most {
		abort(c, http.StatusUnprocessableEntity, name+" must be a whole number from "+strconv.Itoa(least)+" to "+strconv.Itoa(most)+".")
		return 0, false
	}
	return n, true
}

func (s *Server) getHistory(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	limit, offset, ok := queryPage(c, models.DefaultHistoryPage, models.MaxHistoryPage)
	if !ok {
		return
	}
	msgs, total, err := s.studentHistoryPage(c.Request.Context(), sess.ThreadID, limit, offset)
	if err != nil {
		s.internalError(c, err, "Loading the history failed")
		return
	}
	out := historyMessages(msgs)
	c.Header(TotalCountHeader, strconv.FormatInt(total, 10))
	c.JSON(http.StatusOK, gin.H{
		"thread_id":  sess.ThreadID,
		"title":      sess.Title,
		"messages":   out,
		"created_at": isoTime(sess.CreatedAt),
		"updated_at": isoTime(sess.UpdatedAt),
		"llm_calls":  sess.LLMCallsCount,
	})
}

func (s *Server) renameSession(c *gin.Context) {
	var body struct {
		Title *string `json:"title"`
	}
	if !decodeJSON(c, &body, 8<<10) {
		return
	}
	if body.Title == nil {
		abort(c, http.StatusUnprocessableEntity, "title is required.")
		return
	}
	title := strings.TrimSpace(*body.Title)
	if n := utf8.RuneCountInString(title); n < 1 || n > 255 {
		abort(c, http.StatusUnprocessableEntity, "title must be 1 to 255 characters long (got "+strconv.Itoa(n)+").")
		return
	}
	u := currentUser(c)
	sess, err := s.deps.Repo.RenameSession(c.Request.Context(), u.ID, c.Param("project_id"), c.Param("session_id"), title)
	s.answerSession(c, sess, err)
}

func (s *Server) pinSession(c *gin.Context)   { s.setPinned(c, true) }
func (s *Server) unpinSession(c *gin.Context) { s.setPinned(c, false) }

func (s *Server) setPinned(c *gin.Context, pinned bool) {
	u := currentUser(c)
	sess, err := s.deps.Repo.SetPinned(c.Request.Context(), u.ID, c.Param("project_id"), c.Param("session_id"), pinned)
	s.answerSession(c, sess, err)
}

func (s *Server) answerSession(c *gin.Context, sess *models.ChatSession, err error) {
	if errors.Is(err, models.ErrNotFound) {
		abort(c, http.StatusNotFound, "Session '"+respond.Truncate(c.Param("session_id"), 80)+"' not found.")
		return
	}
	if err != nil {
		s.internalError(c, err, "Updating the session failed")
		return
	}
	v := viewSession(sess)
	if running, err := s.deps.Repo.RunningSessions(c.Request.Context(), []string{sess.ThreadID}); err == nil {
		v.Running = running[sess.ThreadID]
	}
	if exercises, err := s.sessionsWithExercises(c.Request.Context(), []string{sess.ThreadID}); err == nil {
		v.HasExercise = exercises[sess.ThreadID]
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) deleteSession(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	// A running turn is stopped first so it does not write into a session that is gone.
	if t, err := s.deps.Repo.LatestTurn(ctx, sess.ThreadID); err == nil && t.Status == domain.TurnRunning {
		if err := s.deps.Turns.CancelTurn(ctx, t.WorkflowID); err != nil {
			s.log.Warn("cancelling the running turn of a deleted session", "turn", t.ID, "error", err)
		}
	}
	// Its open exercise stops waiting for a student who can no longer check it; the teacher's
	// record stays.
	if s.deps.Exercises != nil {
		if ex, err := s.deps.Exercises.Repo.Latest(ctx, sess.ThreadID); err == nil && ex.Status == domain.ExerciseOpen {
			if err := s.deps.Turns.CancelTurn(ctx, ex.ID); err != nil {
				s.log.Warn("stopping the exercise of a deleted session", "exercise", ex.ID, "error", err)
			}
		}
	}
	u := currentUser(c)
	if err := s.deps.Repo.DeleteSession(ctx, u.ID, c.Param("project_id"), sess.ThreadID); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			abort(c, http.StatusNotFound, "Session '"+sess.ThreadID+"' not found.")
			return
		}
		s.internalError(c, err, "Deleting the session failed")
		return
	}
	c.Status(http.StatusNoContent)
}
