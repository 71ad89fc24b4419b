package models_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
	"github.com/gns3-copilot/gns3-copilot/models"
)

func TestSessionModeIsRecordedFollowedAndBackfilled(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *gorm.DB{
		"sqlite":   func(t testing.TB) *gorm.DB { return testdb.SQLiteWith(t, models.Open) },
		"postgres": func(t testing.TB) *gorm.DB { return testdb.PostgresWith(t, models.Open) },
	} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			if err := models.Migrate(db); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			repo := models.NewChatRepository(db)
			turn := func(session, mode string) *models.ChatSession {
				t.Helper()
				s, tr, _, err := repo.StartTurn(ctx, models.StartTurnParams{SessionID: session, UserID: "u1", ProjectID: "p1",
					Message: "hi", Mode: mode, WorkflowID: func(s, t string) string { return s + t }})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: tr.ID, Status: domain.TurnCompleted}); err != nil {
					t.Fatal(err)
				}
				got, err := repo.GetSession(ctx, "u1", "p1", s.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			s := turn("", "teaching_assistant")
			if models.SessionMode(s) != "teaching_assistant" {
				t.Fatalf("new session metadata %s", s.Metadata)
			}
			// The session follows the mode of its latest turn.
			if s = turn(s.ThreadID, "lab_automation_assistant"); models.SessionMode(s) != "lab_automation_assistant" {
				t.Fatalf("after a lab automation turn: %s", s.Metadata)
			}
			other := turn("", "teaching_assistant")
			byMode, _, err := repo.ListSessionPage(ctx, "u1", "p1", "lab_automation_assistant", 100, 0)
			if err != nil || len(byMode) != 1 || byMode[0].ThreadID != s.ThreadID {
				t.Fatalf("by mode: %+v %v", byMode, err)
			}
			// A session from before modes were recorded gets its latest turn's mode at migration.
			if err := db.Model(&models.ChatSession{}).Where("thread_id = ?", other.ThreadID).UpdateColumn("metadata", `{"note":"kept"}`).Error; err != nil {
				t.Fatal(err)
			}
			if err := models.Migrate(db); err != nil {
				t.Fatal(err)
			}
			got, _ := repo.GetSession(ctx, "u1", "p1", other.ThreadID)
			if models.SessionMode(got) != "teaching_assistant" || got.Metadata != `{"copilot_mode":"teaching_assistant","note":"kept"}` {
				t.Fatalf("backfilled metadata %s", got.Metadata)
			}
		})
	}
}
