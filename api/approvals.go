package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ApprovalDecider hands a person's decision to the workflow that waits for it.
type ApprovalDecider interface {
	DecideApproval(ctx context.Context, workflowID string, d workflows.ApprovalDecision) (workflows.ApprovalOutcome, error)
}

// decisionTimeout bounds how long a decision waits for a worker to take it.
const decisionTimeout = 30 * time.Second

// Approvals is what the approval routes need.
type Approvals struct {
	Repo    models.ApprovalRepository
	Jobs    models.ConfigJobRepository
	Records models.DeviceRepository
	Decider ApprovalDecider
}

// approvalAPI serves the approval routes, and decides the approvals a chat message answers
// (approval_reply.go).
type approvalAPI struct {
	s *Server
	*Approvals
}

// list returns the session's approvals, pending and decided, so a reloaded page can show a
// waiting approval card and the record of earlier ones.
func (h *approvalAPI) list(c *gin.Context) {
	sess, ok := h.s.session(c)
	if !ok {
		return
	}
	rows, err := h.Repo.ForSession(c.Request.Context(), sess.ThreadID)
	h.writeList(c, rows, err)
}

// writeList answers a list of approvals as the page and MCP agents read them.
func (h *approvalAPI) writeList(c *gin.Context, rows []models.Approval, err error) {
	if err != nil {
		h.s.internalError(c, err, "Loading the approvals failed")
		return
	}
	c.JSON(http.StatusOK, approvalViews(rows))
}

// approvalViews is rows as clients read them; [] (never null) when there are none.
func approvalViews(rows []models.Approval) []models.ApprovalView {
	out := make([]models.ApprovalView, len(rows))
	for i := range rows {
		out[i] = rows[i].View()
	}
	return out
}

type decisionRequest struct {
	Decision *string `json:"decision"`
	Comment  *string `json:"comment"`
}

// listProject returns the caller's approvals in the project, from chat sessions and MCP calls
// alike, newest last; ?status=pending keeps the ones still waiting.
func (h *approvalAPI) listProject(c *gin.Context) {
	status := c.Query("status")
	switch status {
	case "", domain.ApprovalPending, domain.ApprovalApproved, domain.ApprovalRejected, domain.ApprovalExpired:
	default:
		abort(c, http.StatusUnprocessableEntity, "status must be pending, approved, rejected or expired, got '"+respond.Truncate(status, 40)+"'.")
		return
	}
	rows, err := h.Repo.ForProject(c.Request.Context(), c.Param("project_id"), currentUser(c).ID, status)
	h.writeList(c, rows, err)
}

func (h *approvalAPI) decide(c *gin.Context) {
	sess, ok := h.s.session(c)
	if !ok {
		return
	}
	id := c.Param("approval_id")
	a, err := h.Repo.Get(c.Request.Context(), id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && a.SessionID != sess.ThreadID) {
		abort(c, http.StatusNotFound, "Approval '"+respond.Truncate(id, 80)+"' not found in this session.")
		return
	}
	if err != nil {
		h.s.internalError(c, err, "Loading the approval failed")
		return
	}
	h.decideLoaded(c, a)
}

// decideInProject decides one of the caller's approvals in the project, whichever session or
// MCP call asked it.
func (h *approvalAPI) decideInProject(c *gin.Context) {
	id := c.Param("approval_id")
	a, err := h.Repo.Get(c.Request.Context(), id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && (a.ProjectID != c.Param("project_id") || a.UserID != currentUser(c).ID)) {
		abort(c, http.StatusNotFound, "Approval '"+respond.Truncate(id, 80)+"' not found among your approvals in this project.")
		return
	}
	if err != nil {
		h.s.internalError(c, err, "Loading the approval failed")
		return
	}
	h.decideLoaded(c, a)
}

func (h *approvalAPI) decideLoaded(c *gin.Context, a *models.Approval) {
	ctx := c.Request.Context()
	id := a.ID
	var req decisionRequest
	if !decodeJSON(c, &req, 16<<10) {
		return
	}
	if req.Decision == nil || (*req.Decision != workflows.DecisionApprove && *req.Decision != workflows.DecisionReject) {
		abort(c, http.StatusUnprocessableEntity, `decision is required and must be "approve" or "reject".`)
		return
	}
	comment := ""
	if req.Comment != nil {
		comment = strings.TrimSpace(*req.Comment)
	}
	if !utf8.ValidString(comment) || utf8.RuneCountInString(comment) > workflows.MaxApprovalComment {
		abort(c, http.StatusUnprocessableEntity, fmt.Sprintf("comment must be UTF-8 text of at most %d characters.", workflows.MaxApprovalComment))
		return
	}
	if a.Status != domain.ApprovalPending {
		abort(c, http.StatusConflict, a.AlreadyDecided())
		return
	}
	if time.Now().After(a.ExpiresAt) {
		abort(c, http.StatusConflict, "This approval expired at "+isoTime(a.ExpiresAt)+"; nothing was done. Ask the copilot again.")
		return
	}
	u := currentUser(c)
	// The owner's own fresh token keeps the turn able to act for them after a long wait.
	if err := h.s.deps.Credentials.Put(ctx, a.TurnID, u.Token, h.s.deps.Work.CredentialTTL); err != nil {
		h.s.log.Warn("refreshing the turn's credential with the decider's token", "turn", a.TurnID, "error", err)
	}
	// The workflow takes the decision on a worker; without one running, say so instead of hanging.
	if status, msg := h.hand(ctx, a, workflows.ApprovalDecision{
		ApprovalID: a.ID, Decision: *req.Decision, Comment: comment, UserID: u.ID, Username: u.Username,
	}); status != 0 {
		abort(c, status, msg)
		return
	}
	a, err := h.Repo.Get(ctx, id)
	if err != nil {
		h.s.internalError(c, err, "Loading the approval failed")
		return
	}
	c.JSON(http.StatusOK, a.View())
}

// configJobView is one configuration job in the audit, with its device records: the reads
// before and after, and every line with its outcome.
type configJobView struct {
	JobID      string               `json:"job_id"`
	SessionID  string               `json:"session_id"`
	TurnID     string               `json:"turn_id"`
	ToolCallID string               `json:"tool_call_id"`
	ToolName   string               `json:"tool_name"`
	UserID     string               `json:"user_id"`
	Status     string               `json:"status"`
	Devices    int                  `json:"devices"`
	ApprovalID string               `json:"approval_id,omitempty"`
	Approval   *models.ApprovalView `json:"approval,omitempty"`
	Changes    json.RawMessage      `json:"changes"`
	Records    []jobRecordView      `json:"records"`
	CreatedAt  string               `json:"created_at"`
	UpdatedAt  string               `json:"updated_at"`
	FinishedAt *string              `json:"finished_at"`
}

type jobRecordView struct {
	NodeID     string  `json:"node_id"`
	DeviceName string  `json:"device_name"`
	Origin     string  `json:"origin"` // "chat", or "mcp:<client>" for a job an MCP client asked for
	Kind       string  `json:"kind"`   // line, read_before, read_after, read_recovery, device_error
	Seq        int     `json:"seq"`
	Command    string  `json:"command"`
	Status     string  `json:"status"`
	Output     string  `json:"output,omitempty"`
	Error      string  `json:"error,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	SentAt     *string `json:"sent_at"`
	// HostKey is the fingerprint of the SSH console's host key the record went through: GNS3
	// makes a new key at every node start, so the audit says which one each line reached.
	HostKey string `json:"host_key,omitempty"`
}

func recordKind(seq int) string {
	switch seq {
	case models.SeqReadBefore:
		return "read_before"
	case models.SeqReadAfter:
		return "read_after"
	case models.SeqReadRecovery:
		return "read_recovery"
	case models.SeqReadBack:
		return "read_back"
	case -1:
		return "device_error"
	}
	return "line"
}

// configJobs is the audit of configuration jobs in the project: the caller's own, or every
// user's for a superadmin.
func (h *approvalAPI) configJobs(c *gin.Context) {
	u := currentUser(c)
	limit, ok := queryLimit(c, 50, 500)
	if !ok {
		return
	}
	owner := u.ID
	if u.Superadmin {
		owner = ""
	}
	ctx := c.Request.Context()
	jobs, err := h.Jobs.List(ctx, c.Param("project_id"), owner, limit)
	if err != nil {
		h.s.internalError(c, err, "Listing configuration jobs failed")
		return
	}
	// Three queries whatever the number of jobs: the jobs, their approvals, their records.
	var approvalIDs []string
	calls := make([]models.CallRef, 0, len(jobs))
	for _, j := range jobs {
		if j.ApprovalID != "" {
			approvalIDs = append(approvalIDs, j.ApprovalID)
		}
		calls = append(calls, models.CallRef{TurnID: j.TurnID, CallID: j.ToolCallID})
	}
	// A job whose approval cannot be read is listed without it.
	approvals, err := h.Repo.GetMany(ctx, approvalIDs)
	if err != nil {
		h.s.log.Warn("loading the approvals of configuration jobs", "error", err)
	}
	records, err := h.Records.CommandsOfCalls(ctx, calls)
	if err != nil {
		h.s.internalError(c, err, "Loading device records failed")
		return
	}
	out := make([]configJobView, 0, len(jobs))
	for _, j := range jobs {
		v := configJobView{JobID: j.ID, SessionID: j.SessionID, TurnID: j.TurnID, ToolCallID: j.ToolCallID, ToolName: j.ToolName,
			UserID: j.UserID, Status: j.Status, Devices: j.Devices, ApprovalID: j.ApprovalID, Changes: jsonArray(j.Summary),
			Records: []jobRecordView{}, CreatedAt: isoTime(j.CreatedAt), UpdatedAt: isoTime(j.UpdatedAt)}
		if j.FinishedAt != nil {
			t := isoTime(*j.FinishedAt)
			v.FinishedAt = &t
		}
		if a, ok := approvals[j.ApprovalID]; ok {
			av := a.View()
			v.Approval = &av
		}
		for _, r := range records[models.CallRef{TurnID: j.TurnID, CallID: j.ToolCallID}] {
			rv := jobRecordView{NodeID: r.NodeID, DeviceName: r.DeviceName, Origin: r.Origin, Kind: recordKind(r.Seq), Seq: r.Seq, Command: r.Command,
				Status: r.Status, Output: r.Output, Error: r.Error, Reason: r.Reason, HostKey: r.HostKey}
			if r.SentAt != nil {
				t := isoTime(*r.SentAt)
				rv.SentAt = &t
			}
			v.Records = append(v.Records, rv)
		}
		out = append(out, v)
	}
	c.JSON(http.StatusOK, out)
}

func jsonArray(s string) json.RawMessage {
	if s == "" || !json.Valid([]byte(s)) || s == "null" {
		return json.RawMessage(`[]`)
	}
	return json.RawMessage(s)
}
