package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ApprovalPlan is what the owner decides on. For configuration: per device, the exact lines,
// what the safety policy says of each, and the configuration read before asking. For a
// destructive tool: the call's arguments and a sentence saying what it does.
type ApprovalPlan struct {
	Tool      string          `json:"tool"`
	Kind      string          `json:"kind"`
	Summary   string          `json:"summary"`
	Devices   []PlanDevice    `json:"devices,omitempty"`
	Failed    []tools.Item    `json:"failed,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	JobID     string          `json:"job_id,omitempty"`
	// UndoOf names the job an undo takes back.
	UndoOf string `json:"undo_of,omitempty"`
}

// PlanDevice is one device of a configuration plan.
type PlanDevice struct {
	NodeID        string     `json:"node_id"`
	Name          string     `json:"name"`
	Platform      string     `json:"platform,omitempty"`
	Lines         []PlanLine `json:"lines"`
	ReadCommand   string     `json:"read_command,omitempty"`
	CurrentConfig string     `json:"current_config"`
	ReadError     string     `json:"read_error,omitempty"`
	// On an undo: how the device changed since the job (nil: it did not), and the job's
	// changes the lines cannot take back.
	ChangedSince *ConfigDrift `json:"changed_since,omitempty"`
	NotUndone    []string     `json:"not_undone,omitempty"`
}

// PlanLine is one line and the safety policy's verdict: "change" (will be sent and changes the
// device), "read" (will be sent, only looks), or "blocked" (will not be sent, with the reason).
type PlanLine struct {
	Command string `json:"command"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

var destructiveVerbs = map[string]string{
	domain.DeleteNodeTool: "Delete nodes", domain.DeleteLinkTool: "Delete links",
	domain.StopNodeTool:        "Stop (power off) nodes; unsaved configuration is lost",
	domain.ReloadNodeTool:      "Reload (power-cycle) nodes; unsaved configuration is lost",
	domain.RestoreSnapshotTool: "Restore a snapshot; every change since it was taken and all running state are lost",
	domain.CreateSnapshotTool:  "Take a snapshot, pausing the running nodes (saved, stopped and started again) while GNS3 takes it",
}

// RequestApproval stores a pending approval with its plan and announces it to the turn's
// stream. A retry finds the row it wrote and announces the same approval again.
func (a *Activities) RequestApproval(ctx context.Context, req workflows.ApprovalRequest) error {
	plan, err := a.approvalPlan(ctx, req)
	if err != nil {
		return err
	}
	body, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	row, err := a.Approvals.Create(ctx, &models.Approval{ID: req.ApprovalID, SessionID: req.Turn.SessionID, TurnID: req.Turn.TurnID,
		ToolCallID: req.Call.ID, ProjectID: req.Turn.ProjectID, UserID: req.Turn.UserID, ToolName: req.Call.Name, Kind: req.Kind,
		WorkflowID: req.WorkflowID, Plan: string(body), Status: domain.ApprovalPending, ExpiresAt: req.ExpiresAt.UTC()})
	if err != nil {
		return fmt.Errorf("storing the approval: %w", err)
	}
	if req.StandingOf != "" {
		// Decided by an earlier "approve all": stored for the audit, nobody is asked.
		return nil
	}
	question := plan.Question(req.ExpiresAt)
	if err := a.storeAside(ctx, req.Turn, req.MessageIndex, -1, "question", req.ApprovalID, "assistant", question); err != nil {
		return err
	}
	if req.Plan != nil {
		for _, j := range req.Plan.Jobs {
			a.publish(ctx, req.Turn.TurnID, relay.Payload{Type: relay.TypeToolProgress, SessionID: req.Turn.SessionID, ToolName: req.Call.Name,
				ToolCallID: req.Call.ID, Progress: tools.Progress{ItemID: j.NodeID, ItemName: j.Name, Status: domain.JobWaiting,
					Message: "configuration read; waiting for approval"}})
		}
	}
	// Content is the question as a message, for clients that show no approval cards: the API
	// streams it to them as content.
	a.publish(ctx, req.Turn.TurnID, relay.Payload{Type: relay.TypeApprovalRequired, SessionID: req.Turn.SessionID,
		TurnID: req.Turn.TurnID, ToolName: req.Call.Name, ToolCallID: req.Call.ID, Approval: row.View(), Content: question})
	return nil
}

// storeAside stages an aside of the conversation (an approval's question or the person's
// answer) at the slot of the call's result, sub placing it before or after that result (see
// models.ChatMessage.Aside). MCP calls have no transcript, and workflows from before slots
// were passed give none.
func (a *Activities) storeAside(ctx context.Context, ref workflows.WorkRef, idx, sub int, part, of, role, content string) error {
	if idx <= 0 || isMCP(ref) {
		return nil
	}
	turn, err := a.Repo.Turn(ctx, ref.TurnID)
	if errors.Is(err, models.ErrNotFound) {
		return nil // the session was deleted while it waited
	}
	if err != nil {
		return fmt.Errorf("loading turn: %w", err)
	}
	meta, _ := json.Marshal(map[string]any{"approval": map[string]string{"approval_id": of, "part": part}})
	m := models.ChatMessage{ID: models.AsideMessageID(turn.ID, idx, part, of), SessionID: turn.SessionID, TurnID: turn.ID,
		TurnSeq: turn.Seq, Idx: idx, Sub: sub, Role: role, Content: content, Metadata: string(meta), Aside: true}
	if err := a.Repo.SaveMessage(ctx, &m); err != nil {
		return fmt.Errorf("storing the approval's %s in the transcript: %w", part, err)
	}
	return nil
}

func (a *Activities) approvalPlan(ctx context.Context, req workflows.ApprovalRequest) (ApprovalPlan, error) {
	p := ApprovalPlan{Tool: req.Call.Name, Kind: req.Kind, JobID: req.JobID}
	if req.Plan == nil {
		args, err := tools.NormalizeArgs(req.Call.Arguments)
		if err != nil {
			args = json.RawMessage(`{}`)
		}
		p.Arguments = args
		p.Summary = destructiveSummary(req.Call.Name, args)
		// Without the credential the summary says less; the call itself reports the credential.
		if check, err := a.labToolCheck(ctx, req.Turn, req.Call); err == nil && check.Summary != "" {
			p.Summary = check.Summary
		}
		return p, nil
	}
	recs, err := a.DeviceRecords.Commands(ctx, req.Turn.TurnID, req.Call.ID, "")
	if err != nil {
		return p, fmt.Errorf("loading the configuration read before: %w", err)
	}
	before := map[string]models.DeviceCommand{}
	for _, r := range recs {
		if r.Seq == models.SeqReadBefore {
			before[r.NodeID] = r
		}
	}
	plan := *req.Plan
	p.Failed = plan.Failed
	lines := 0
	for _, job := range plan.Jobs {
		d := PlanDevice{NodeID: job.NodeID, Name: job.Name, Platform: job.Platform}
		for _, c := range job.Commands {
			v := "change"
			if !devices.ChangesConfig(job.Platform, c) {
				v = "read"
			}
			d.Lines = append(d.Lines, PlanLine{Command: c, Verdict: v})
			lines++
		}
		for _, b := range job.Blocked {
			d.Lines = append(d.Lines, PlanLine{Command: b.Command, Verdict: "blocked", Reason: b.Reason})
		}
		if r, ok := before[job.NodeID]; ok {
			d.ReadCommand, d.CurrentConfig, d.ReadError = r.Command, r.Output, r.Error
		} else {
			d.ReadError = "the current configuration could not be read"
		}
		p.Devices = append(p.Devices, d)
	}
	p.Summary = fmt.Sprintf("Send %d line(s) to %d device(s)", lines, len(plan.Jobs))
	if plan.Undo != nil {
		if err := a.describeUndo(ctx, req, &p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// destructiveSummary says in a sentence what a destructive call will do to which nodes or links.
func destructiveSummary(tool string, args json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	var targets []string
	for _, key := range []string{"node_ids", "link_ids", "nodes", "links"} {
		if list, ok := a[key].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					targets = append(targets, s)
				} else if b, err := json.Marshal(v); err == nil {
					targets = append(targets, string(b))
				}
			}
		}
	}
	verb := destructiveVerbs[tool]
	if verb == "" {
		verb = tool
	}
	if len(targets) == 0 {
		return verb
	}
	return verb + ": " + strings.Join(targets, ", ")
}

// RecordApprovalDecision stores how an approval ended and announces it. The first decision
// stands: recording a different one later changes nothing.
func (a *Activities) RecordApprovalDecision(ctx context.Context, rec workflows.DecisionRecord) error {
	status := map[string]string{domain.ApprovalApproved: domain.ApprovalApproved, domain.ApprovalRejected: domain.ApprovalRejected,
		domain.ApprovalExpired: domain.ApprovalExpired}[rec.Outcome.Status]
	if status == "" {
		return fmt.Errorf("unknown approval outcome %q", rec.Outcome.Status)
	}
	row, err := a.Approvals.Decide(ctx, rec.Outcome.ApprovalID, models.Decision{Status: status, By: rec.Outcome.DecidedBy,
		Comment: rec.Outcome.Comment, At: time.Now(), Standing: rec.Outcome.Standing, StandingOf: rec.Outcome.StandingOf})
	if err != nil && !errors.Is(err, models.ErrAlreadyDecided) {
		return fmt.Errorf("storing the decision: %w", err)
	}
	if strings.TrimSpace(rec.Reply) != "" {
		if err := a.storeAside(ctx, rec.Turn, rec.MessageIndex, 1, "answer", rec.Outcome.ApprovalID, "user", rec.Reply); err != nil {
			return err
		}
	}
	// Content says the outcome in a sentence and ToolCall names the call again, for clients
	// that show no approval cards: the API streams them a card for the call that goes on.
	a.publish(ctx, rec.Turn.TurnID, relay.Payload{Type: relay.TypeApprovalResolved, SessionID: rec.Turn.SessionID,
		TurnID: rec.Turn.TurnID, ToolName: rec.Call.Name, ToolCallID: rec.Call.ID, Approval: row.View(),
		Content:  OutcomeSentence(rec.Call.Name, row.Status, row.DecidedBy, row.Comment, row.Standing, row.StandingOf),
		ToolCall: &relay.ToolCall{ID: rec.Call.ID, Type: "function", Function: relay.ToolCallFunction{Name: rec.Call.Name, Arguments: rec.Call.Arguments, Complete: true}}})
	return nil
}

// RenewTurnCredential gives the turn's stored GNS3 credential a fresh lifetime while the turn
// runs. A credential already gone (the turn finished, or it expired) is not brought back.
func (a *Activities) RenewTurnCredential(ctx context.Context, in workflows.RenewCredentialInput) error {
	token, err := a.Credentials.Get(ctx, in.Turn.TurnID)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("the turn's GNS3 credential is gone; it cannot be renewed", domain.ErrTypeNoCredentials, err)
	}
	return a.Credentials.Put(ctx, in.Turn.TurnID, token, in.TTL)
}
