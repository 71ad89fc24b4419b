package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Approvals in the conversation. A client that has not said it shows approval cards (GNS3's
// AI panel, curl, any plain chat client) reads only the chat's plain events, and re-enables its
// input only when a stream ends. So when a turn asks for a decision, such a client's stream
// closes the waiting tool card, states the question as content and ends with done; the
// workflow keeps waiting. The session's next message is the answer: it decides the approval
// and streams the rest of the same turn. A client that shows cards (our page) keeps the open
// stream and its buttons.

// Reply words. A reply approves only when every word of it is a yes or politeness, so
// "yes, but use .2" is a change request: it rejects, and the model reads it as the comment.
var (
	approveWords = wordSet("approve", "approved", "yes", "y", "yep", "yeah", "ok", "okay", "confirm", "confirmed",
		"sure", "proceed", "lgtm", "go", "do", "accept", "accepted", "agree", "agreed", "fine", "good", "looks", "sounds", "perfect", "great")
	rejectWords = wordSet("reject", "rejected", "no", "n", "nope", "cancel", "deny", "denied", "decline", "declined", "stop", "don't", "dont")
	fillerWords = wordSet("please", "pls", "plz", "thanks", "thank", "you", "thx", "ahead", "it", "now", "then", "sure",
		"yes", "ok", "okay", "go", "do", "fine", "proceed", "confirm", "approve", "approved", "good", "great",
		"that", "this", "is", "sounds", "looks", "the", "plan", "change", "changes", "and", "just")
	allWords = wordSet("all", "everything", "every", "each", "them", "to", "of", "rest", "remaining")
	// Chinese has no spaces: a reply is one of these, with a polite ending at most.
	zhApprove    = wordSet("批准", "同意", "确认", "是", "是的", "好", "好的", "可以", "行", "执行", "继续", "没问题", "确定")
	zhApproveAll = wordSet("全部批准", "批准全部", "全部同意", "同意全部", "都批准", "都同意", "全部确认", "确认全部", "全部执行", "批准所有", "所有都批准")
	zhReject     = wordSet("拒绝", "不", "否", "不要", "取消", "不同意", "不行", "不可以", "不批准", "停止")
	zhEndings    = []string{"吧", "了", "的", "啊", "呀", "谢谢", "请", "，请执行", "请执行"}
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// ParseReply reads a person's answer to an approval question: approve, or reject; standing is
// an "approve all"; comment is the message itself when it says more than a plain yes or no,
// which the model then reads.
func ParseReply(msg string) (decision string, standing bool, comment string) {
	text := strings.TrimSpace(msg)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '\'')
	})
	if len(words) == 1 {
		if d, all, ok := chineseReply(words[0]); ok {
			return d, all, ""
		}
	}
	if len(words) == 0 {
		return workflows.DecisionReject, false, text
	}
	switch head, rest := words[0], words[1:]; {
	case approveWords[head]:
		all, plain := false, true
		for _, w := range rest {
			switch {
			case w == "all" || w == "everything" || w == "every":
				all = true
			case fillerWords[w] || (all && allWords[w]) || w == "to":
			default:
				plain = false
			}
		}
		if plain {
			return workflows.DecisionApprove, all, ""
		}
		return workflows.DecisionReject, false, text
	case rejectWords[head]:
		if len(rest) == 0 {
			return workflows.DecisionReject, false, ""
		}
		return workflows.DecisionReject, false, text
	}
	return workflows.DecisionReject, false, text
}

func chineseReply(w string) (decision string, standing, ok bool) {
	for _, end := range append([]string{""}, zhEndings...) {
		s := strings.TrimSuffix(w, end)
		if s == "" || (end != "" && s == w) {
			continue
		}
		switch {
		case zhApproveAll[s]:
			return workflows.DecisionApprove, true, true
		case zhApprove[s]:
			return workflows.DecisionApprove, false, true
		case zhReject[s]:
			return workflows.DecisionReject, false, true
		}
	}
	return "", false, false
}

// answerApprovalByReply takes the message as the decision when the session's turn waits for
// one of the caller's approvals, and streams the rest of that turn. It reports whether it
// answered; otherwise the message starts a turn as usual.
func (s *Server) answerApprovalByReply(c *gin.Context, u *auth.Caller, projectID, sessionID, message string, cards bool) bool {
	if s.replies == nil || sessionID == "" {
		return false
	}
	ctx := c.Request.Context()
	turn, err := s.deps.Repo.LatestTurn(ctx, sessionID)
	if err != nil || turn.Status != domain.TurnRunning {
		return false
	}
	pending, err := s.replies.Repo.PendingForTurn(ctx, turn.ID)
	if err != nil {
		s.log.Warn("looking for an approval the message may answer", "session", sessionID, "error", err)
		return false
	}
	now := time.Now()
	var open []models.Approval
	for _, a := range pending {
		if a.UserID == u.ID && a.ProjectID == projectID && now.Before(a.ExpiresAt) {
			open = append(open, a)
		}
	}
	if len(open) == 0 {
		return false
	}
	decision, standing, comment := ParseReply(message)
	// The stream goes on right after the question this message answers.
	after, err := s.approvalEventID(ctx, turn.ID, open[0].ID)
	if err != nil {
		s.internalError(c, err, "Reading the turn's events failed")
		return true
	}
	if err := s.deps.Credentials.Put(ctx, turn.ID, u.Token, s.deps.Work.CredentialTTL); err != nil {
		s.log.Warn("refreshing the turn's credential with the decider's token", "turn", turn.ID, "error", err)
	}
	d := workflows.ApprovalDecision{ApprovalID: open[0].ID, Decision: decision, Comment: comment, UserID: u.ID,
		Username: u.Username, Standing: standing, Reply: message}
	if status, msg := s.replies.hand(ctx, &open[0], d); status != 0 {
		abort(c, status, msg)
		return true
	}
	if standing {
		// "approve all" also answers the turn's other questions already waiting.
		for i := range open[1:] {
			other := &open[1+i]
			d := workflows.ApprovalDecision{ApprovalID: other.ID, Decision: workflows.DecisionApprove, UserID: u.ID,
				Username: u.Username, Standing: true}
			if status, msg := s.replies.hand(ctx, other, d); status != 0 {
				s.log.Warn("approve all: a further approval of the turn was not decided", "approval", other.ID, "reason", msg)
			}
		}
	}
	s.streamTurn(c, sessionID, turn.ID, after, cards)
	return true
}

// approvalEventID finds the approval_required event of an approval in the turn's log ("" when
// the log no longer has it: the stream then starts from the log's beginning).
func (s *Server) approvalEventID(ctx context.Context, turnID, approvalID string) (string, error) {
	return s.findEvent(ctx, turnID, "", relay.TypeApprovalRequired, approvalID)
}

// findEvent pages through the turn's log after afterID for the first event of type typ about
// approval approvalID, and returns its id ("" when there is none).
func (s *Server) findEvent(ctx context.Context, turnID, afterID, typ, approvalID string) (string, error) {
	for {
		events, err := s.deps.Events.Range(ctx, turnID, afterID, 512)
		if err != nil || len(events) == 0 {
			return "", err
		}
		for _, ev := range events {
			afterID = ev.ID
			if ev.Type == typ && relay.ApprovalIDOf(ev.Data) == approvalID {
				return ev.ID, nil
			}
		}
	}
}

// panelFrames is what a client without approval cards gets for an approval event: the event
// itself (it may ignore it), then the same news in the chat's plain events. For
// approval_required that is the waiting call's tool_end, the question as content and, last, a
// done that says an approval is pending; waiting is then the approval's id, and the stream
// closes there while the turn still waits for it. For approval_resolved it is the outcome as
// content and the call's card again, whose tool_end comes when it has run.
func panelFrames(ev relay.Event) (frames []relay.Event, waiting string) {
	frames = []relay.Event{ev}
	if ev.Type != relay.TypeApprovalRequired && ev.Type != relay.TypeApprovalResolved {
		return frames, ""
	}
	var p relay.Payload
	var view models.ApprovalView
	if json.Unmarshal(ev.Data, &p) != nil {
		return frames, ""
	}
	if raw, err := json.Marshal(p.Approval); err == nil {
		_ = json.Unmarshal(raw, &view)
	}
	add := func(q relay.Payload) {
		q.SessionID = p.SessionID
		data, _ := json.Marshal(q)
		frames = append(frames, relay.Event{Type: q.Type, Data: data})
	}
	if ev.Type == relay.TypeApprovalResolved {
		if p.Content != "" {
			add(relay.Payload{Type: relay.TypeContent, Content: "\n\n" + p.Content + "\n\n"})
		}
		if p.ToolCall != nil {
			add(relay.Payload{Type: relay.TypeToolCall, ToolCall: p.ToolCall})
			add(relay.Payload{Type: relay.TypeToolStart, ToolName: p.ToolName, ToolCallID: p.ToolCallID})
		}
		return frames, ""
	}
	add(relay.Payload{Type: relay.TypeToolEnd, ToolName: p.ToolName, ToolCallID: p.ToolCallID, ToolOutput: waitingOutput(p, view)})
	add(relay.Payload{Type: relay.TypeContent, Content: "\n\n" + p.Content})
	done := relay.Payload{Type: relay.TypeDone, TurnID: p.TurnID, Status: domain.TurnWaitingApproval,
		ApprovalPending: map[string]string{"approval_id": view.ApprovalID, "tool_name": p.ToolName, "tool_call_id": p.ToolCallID,
			"expires_at": view.ExpiresAt}}
	add(done)
	// The done carries the event's id, so a client that resumes from it goes on after the question.
	frames[len(frames)-1].ID = ev.ID
	return frames, view.ApprovalID
}

// decidedLater reports whether the log holds the approval's decision after afterID: a client
// that replays a turn whose question was answered since must not stop at the question.
func (s *Server) decidedLater(ctx context.Context, turnID, afterID, approvalID string) bool {
	id, _ := s.findEvent(ctx, turnID, afterID, relay.TypeApprovalResolved, approvalID)
	return id != ""
}

// waitingOutput is the waiting call's result in the standard tool-response format: nothing has
// run yet, and it says where the decision is wanted.
func waitingOutput(p relay.Payload, view models.ApprovalView) string {
	out, _ := json.Marshal(tools.Result{Success: true, Total: 1,
		Data: []tools.Item{{ID: p.ToolCallID, Name: p.ToolName, Status: domain.JobWaiting,
			Result: "Waiting for your approval: answer in the chat with approve, reject, or what to change."}},
		Metadata: map[string]any{"tool_name": p.ToolName, "version": tools.FormatVersion, "approval_id": view.ApprovalID,
			"expires_at": view.ExpiresAt}})
	return string(out)
}

// hand sends a decision to the workflow that waits, answering as the approvals route does: 0
// once stored, else the HTTP status and a message for people.
func (h *approvalAPI) hand(ctx context.Context, a *models.Approval, d workflows.ApprovalDecision) (int, string) {
	dctx, cancel := context.WithTimeout(ctx, decisionTimeout)
	defer cancel()
	_, err := h.Decider.DecideApproval(dctx, a.WorkflowID, d)
	var refused *durable.DecisionRefusedError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &refused):
		if now, gerr := h.Repo.Get(ctx, a.ID); gerr == nil && now.Status != domain.ApprovalPending {
			return http.StatusConflict, now.AlreadyDecided()
		}
		return http.StatusConflict, "The decision was refused: " + refused.Message
	case errors.Is(err, durable.ErrNotWaiting):
		return http.StatusConflict, "The turn is no longer waiting for this approval; nothing was changed."
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return http.StatusServiceUnavailable, "No copilot worker took the decision within " + decisionTimeout.String() +
			"; it was not recorded. Check that a worker is running and decide again."
	}
	h.s.log.Error("handing the decision to the workflow failed", "approval", a.ID, "error", err)
	return http.StatusInternalServerError, "Handing the decision to the workflow failed; try again in a moment."
}
