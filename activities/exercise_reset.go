package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// ResetExercise restores the snapshot an exercise started from, with the credential of the
// reset's turn, through the restore tool itself (the same checks, the same result), and shows
// the result on the reset's tool card.
func (a *Activities) ResetExercise(ctx context.Context, in workflows.ExerciseResetInput) (workflows.ExerciseResetResult, error) {
	ex, err := a.Exercises.Get(ctx, in.ExerciseID)
	if err != nil {
		return workflows.ExerciseResetResult{}, fmt.Errorf("loading the exercise: %w", err)
	}
	token, err := a.Credentials.Get(ctx, in.Turn.TurnID)
	if err != nil {
		return workflows.ExerciseResetResult{}, credentialsError(err)
	}
	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	env := tools.Env{ProjectID: in.Turn.ProjectID, GNS3: a.GNS3.WithToken(token), GNS3Host: a.GNS3.Host(), Attempt: attempt(ctx), Topology: a.Live,
		Progress: func(p tools.Progress) {
			a.publish(ctx, in.Turn.TurnID, relay.Payload{Type: relay.TypeToolProgress, SessionID: in.Turn.SessionID,
				ToolName: in.Call.Name, ToolCallID: in.Call.ID, Progress: p})
		}}
	res := a.Tools.Execute(ctx, env, tools.LabAutomation, in.Call.Name, in.Call.Arguments)
	// Restored is GNS3's restore; what came back of each device is the answer's to say.
	restored := res.Success
	var back RestoreReport
	if restored {
		res, back = a.afterRestore(ctx, env, workflows.ToolCallRef{WorkRef: in.Turn, CallID: in.Call.ID, ToolName: in.Call.Name}, res)
	}
	a.refreshAfter(ctx, in.Turn, in.Call.Name)
	a.publish(context.WithoutCancel(ctx), in.Turn.TurnID, relay.Payload{Type: relay.TypeToolEnd, SessionID: in.Turn.SessionID,
		ToolName: in.Call.Name, ToolCallID: in.Call.ID, ToolOutput: res.JSON()})
	if !restored {
		msg := res.Error
		if msg == "" && len(res.Data) > 0 {
			msg = res.Data[0].Error
		}
		return workflows.ExerciseResetResult{Message: msg}, ctx.Err()
	}
	when := ""
	if ex.SnapshotAt != nil {
		when = " taken " + ex.SnapshotAt.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	return workflows.ExerciseResetResult{Restored: true, Message: fmt.Sprintf("The lab was reset to its snapshot %q%s, from before the "+
		"exercise: every fault of the exercise is gone, and so is every other change made since; every node and link has a new id. %s%s\n\n"+
		"The exercise is over; inject a new fault for another one.", ex.SnapshotName, when, back.Summary(), back.PerDevice())}, nil
}

// FinishExerciseTurn ends a reset's turn: its answer joins the transcript, the student reads it
// as content, and the stream ends. A retry ends nothing twice.
func (a *Activities) FinishExerciseTurn(ctx context.Context, in workflows.ExerciseTurnFinishInput) error {
	meta, _ := json.Marshal(map[string]any{"exercise_request": workflows.ExerciseResetUpdate, "exercise_status": in.Status})
	applied, err := a.Repo.FinishExchange(ctx, in.Turn.TurnID, in.Content, string(meta))
	if err != nil {
		return fmt.Errorf("ending the reset's turn: %w", err)
	}
	if err := a.Credentials.Delete(ctx, in.Turn.TurnID); err != nil {
		a.logger(ctx).Warn("deleting the reset's credential", "error", err)
	}
	if applied {
		msgID := models.MessageID(in.Turn.TurnID, models.ExchangeAnswerIdx)
		a.publish(ctx, in.Turn.TurnID, relay.Payload{Type: relay.TypeContent, SessionID: in.Turn.SessionID, Content: "\n\n" + in.Content, MessageID: msgID})
		view := map[string]any{"exercise_id": in.ExerciseID, "status": in.Status}
		if ex, err := a.Exercises.Get(ctx, in.ExerciseID); err == nil {
			view = ex.View()
			view["status"] = in.Status // the row may lag the workflow
		}
		a.publish(ctx, in.Turn.TurnID, relay.Payload{Type: relay.TypeExerciseChecked, SessionID: in.Turn.SessionID,
			Status: workflows.ExerciseResetUpdate, Content: in.Content, Exercise: view})
	}
	done, _ := json.Marshal(relay.Payload{Type: relay.TypeDone, SessionID: in.Turn.SessionID, TurnID: in.Turn.TurnID, Status: domain.TurnCompleted})
	if err := a.appendDone(ctx, in.Turn.TurnID, done); err != nil {
		return fmt.Errorf("publishing the end of the reset's turn: %w", err)
	}
	return nil
}
