package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// pruneDataDir is a data directory as serve leaves it, with three sessions of one finished turn
// each: "plain" last active in January 2025, "approved" (one approval) in June 2025, and one of
// today.
func pruneDataDir(t *testing.T) (dir string, ids map[string]string) {
	t.Helper()
	dir = t.TempDir()
	db, err := models.Open("", dir)
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	repo := models.NewChatRepository(db)
	ctx := context.Background()
	ids = map[string]string{}
	for name, at := range map[string]time.Time{"plain": time.Date(2025, 1, 10, 9, 0, 0, 0, time.UTC),
		"approved": time.Date(2025, 6, 10, 9, 0, 0, 0, time.UTC), "recent": time.Now().UTC()} {
		sess, turn, _, err := repo.StartTurn(ctx, models.StartTurnParams{UserID: "u1", ProjectID: "p1", Message: "hi",
			Mode: domain.ModeTeachingAssistant, WorkflowID: func(s, t string) string { return s + t }})
		require.NoError(t, err)
		_, err = repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted})
		require.NoError(t, err)
		require.NoError(t, db.Model(&models.ChatSession{}).Where("thread_id = ?", sess.ThreadID).UpdateColumn("updated_at", at).Error)
		if name == "approved" {
			_, err = models.ApprovalRepository{DB: db}.Create(ctx, &models.Approval{ID: "a1", SessionID: sess.ThreadID, TurnID: turn.ID,
				ToolCallID: "c1", ProjectID: "p1", UserID: "u1", ToolName: "configure", Kind: "config", WorkflowID: "w",
				Plan: "{}", Status: "approved", ExpiresAt: at.Add(time.Hour)})
			require.NoError(t, err)
		}
		ids[name] = sess.ThreadID
	}
	return dir, ids
}

// pruneCounts reads the data directory's rows afresh, as another process would.
func pruneCounts(t *testing.T, dir string) (sessions, messages, approvals int64) {
	t.Helper()
	db, err := models.Open("", dir)
	require.NoError(t, err)
	defer func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	}()
	for m, n := range map[any]*int64{&models.ChatSession{}: &sessions, &models.ChatMessage{}: &messages, &models.Approval{}: &approvals} {
		require.NoError(t, db.Model(m).Count(n).Error)
	}
	return
}

func prune(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runPrune(context.Background(), args, &out, &errOut, time.Now())
	return out.String(), errOut.String(), code
}

func TestPruneDryRunApplyAndTheAuditGuard(t *testing.T) {
	clearEnv(t)
	dir, _ := pruneDataDir(t)
	unchanged := func(what string) {
		t.Helper()
		s, m, a := pruneCounts(t, dir)
		require.Equal(t, [3]int64{3, 3, 1}, [3]int64{s, m, a}, what+" changed the database")
	}

	// Bad dates: exit 2, a message that says what a date looks like, nothing touched.
	for _, bad := range []string{"2025-13-01", "last week", "01/02/2025", "2999-01-01"} {
		_, errOut, code := prune(t, "--data-dir", dir, "--before", bad, "--apply", "--include-audit")
		require.Equal(t, 2, code, bad)
		require.Contains(t, errOut, "--before", bad)
	}
	_, errOut, code := prune(t, "--data-dir", dir, "--apply")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--before DATE is required")
	unchanged("a bad date")

	// A dry run says what would go and changes nothing.
	out, _, code := prune(t, "--data-dir", dir, "--before", "2025-02-01")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Sessions last active before 2025-02-01T00:00:00Z: 1 session would be removed, with 1 turn, 1 message and 0 topology marks")
	require.Contains(t, out, "Dry run: nothing was removed")
	unchanged("a dry run")

	// Reaching the approved session is refused, dry or not, and says how to go on.
	for _, args := range [][]string{{"--before", "2025-12-01"}, {"--before", "2025-12-01T00:00:00+01:00", "--apply"}} {
		out, errOut, code := prune(t, append([]string{"--data-dir", dir}, args...)...)
		require.Equal(t, 1, code, "%v: %s", args, out)
		require.Contains(t, out, "2 sessions would be removed")
		require.Contains(t, out, "1 of them has approvals, configuration jobs or exercise records.")
		require.Contains(t, errOut, "refusing")
		require.Contains(t, errOut, "--include-audit")
	}
	unchanged("a refused prune")

	// Applied: the January transcript goes.
	out, _, code = prune(t, "--data-dir", dir, "--before", "2025-02-01", "--apply")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, ": 1 session removed, with 1 turn, 1 message")
	s, m, a := pruneCounts(t, dir)
	require.Equal(t, [3]int64{2, 2, 1}, [3]int64{s, m, a})

	// With the audit included the approved session goes, its approval with it.
	out, _, code = prune(t, "--data-dir", dir, "--before", "2025-12-01", "--apply", "--include-audit")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, ": 1 session removed")
	require.Contains(t, out, "With them (--include-audit): 1 approval, 0 configuration jobs")
	s, m, a = pruneCounts(t, dir)
	require.Equal(t, [3]int64{1, 1, 0}, [3]int64{s, m, a}, "the recent session stays")
}

// prune opens serve's database: the same flags and environment variables, and no database made
// where there was none.
func TestPruneUsesServesDatabaseSettings(t *testing.T) {
	clearEnv(t)
	dir, _ := pruneDataDir(t)
	t.Setenv("GNS3_COPILOT_DATA_DIR", dir)
	out, errOut, code := prune(t, "--before", "2025-02-01")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "1 session would be removed")
	t.Setenv("GNS3_COPILOT_DATA_DIR", "")
	out, _, code = prune(t, "--database-url", "sqlite:"+dir+"/copilot.db", "--before", "2025-02-01")
	require.Equal(t, 0, code)
	require.Contains(t, out, "1 session would be removed")

	empty := t.TempDir() + "/nothing-here"
	_, errOut, code = prune(t, "--data-dir", empty, "--before", "2025-02-01")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no database at "+empty+"/copilot.db")
	require.NoDirExists(t, empty)

	// The help says what prune does; serve's flags are listed after its own.
	_, errOut, code = prune(t, "-h")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(errOut, "Usage: gns3-copilot prune --before DATE"), errOut)
	require.Contains(t, errOut, "-include-audit")
	require.Contains(t, errOut, "-database-url")
}

// The dispatch: "prune" reaches runPrune, and a bad date leaves with status 2.
func TestPruneCommandExitStatus(t *testing.T) {
	out, code := runBinary(t, "prune", "--data-dir", t.TempDir(), "--before", "tomorrow")
	if code != 2 || !strings.Contains(out, `--before "tomorrow" is not a day like 2026-01-31`) {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	out, code = runBinary(t, "-h")
	if code != 0 || !strings.Contains(out, "gns3-copilot prune --before DATE") {
		t.Fatalf("the command list lacks prune: %s", out)
	}
}
