package activities

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func TestCountNoteSaysPlainlyHowManyWereInjected(t *testing.T) {
	require.Equal(t, "One fault was injected, as asked.", countNote(1, 1))
	require.Equal(t, "3 faults were injected, as asked.", countNote(3, 3))
	require.Equal(t, "Only 1 of the 3 faults asked for was injected: the exercise has 1 fault.", countNote(3, 1))
	require.Equal(t, "Only 2 of the 3 faults asked for were injected: the exercise has 2 faults.", countNote(3, 2))
	require.Contains(t, countNote(2, 0), "No fault was injected (2 faults asked for)")
}

// Two records are the same fault whatever the case, spacing and order of their lines; a link
// fault is the same link (either way round) with the same kinds of conditions.
func TestFaultSignatureTellsARepeat(t *testing.T) {
	dev := func(device string, lines ...string) models.InjectedFault {
		return models.InjectedFault{Device: device, Lines: models.StringListJSON(lines)}
	}
	link := func(a, b string, kinds ...string) models.InjectedFault {
		return models.InjectedFault{Device: a + "–" + b, LinkNodes: models.StringListJSON([]string{a, b}), ConditionKinds: models.StringListJSON(kinds)}
	}
	require.Equal(t, faultSignature(dev("R1", "interface eth0", "shutdown")), faultSignature(dev("r1", "shutdown", "interface  eth0")))
	require.NotEqual(t, faultSignature(dev("R1", "shutdown")), faultSignature(dev("R2", "shutdown")))
	require.NotEqual(t, faultSignature(dev("R1", "ip address 10.0.0.9/24")), faultSignature(dev("R1", "ip address 10.0.0.8/24")))
	require.Equal(t, faultSignature(link("PC1", "PC2", "packet_loss")), faultSignature(link("pc2", "PC1", "packet_loss")))
	require.NotEqual(t, faultSignature(link("PC1", "PC2", "packet_loss")), faultSignature(link("PC1", "PC2", "delay")))
	require.NotEqual(t, faultSignature(link("PC1", "PC2", "packet_loss")), faultSignature(dev("PC1–PC2", "x")))
}

// A record beyond the count asked for, and a fault the user had before on the project, are
// refused; a retried record of the same call is admitted.
func TestAdmitFaultHoldsTheCountAndRefusesRepeats(t *testing.T) {
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	a := &Activities{Exercises: models.ExerciseRepository{DB: db}}
	ctx := context.Background()
	ref := workflows.WorkRef{SessionID: "s2", TurnID: "t2", ProjectID: "p", UserID: "u"}
	fault := func(call, device, line string) *models.InjectedFault {
		return &models.InjectedFault{ToolCallID: call, NodeID: "n", Device: device, Lines: models.StringListJSON([]string{line}),
			Description: "d", VerifyCommand: "show ip", VerifyExpect: "x", Hints: "[]"}
	}
	old := &models.Exercise{ID: "ex-old", SessionID: "s1", TurnID: "t1", Seq: 1, ProjectID: "p", UserID: "u", ExpiresAt: time.Now().Add(time.Hour)}
	_, err = a.Exercises.RecordFault(ctx, old, fault("c0", "PC1", "ip 10.0.0.99/24"))
	require.NoError(t, err)

	ex := &models.Exercise{ID: "ex-new", SessionID: "s2", TurnID: "t2", Seq: 1, ProjectID: "p", UserID: "u", ExpiresAt: time.Now().Add(time.Hour)}
	err = a.admitFault(ctx, ref, ex, fault("c1", "PC1", "ip 10.0.0.99/24"), 2)
	require.ErrorContains(t, err, "already had this fault")
	require.ErrorContains(t, err, "PC1: ip 10.0.0.99/24")
	first := fault("c1", "PC1", "ip 10.0.0.98/24")
	require.NoError(t, a.admitFault(ctx, ref, ex, first, 2))
	_, err = a.Exercises.RecordFault(ctx, ex, first)
	require.NoError(t, err)
	require.NoError(t, a.admitFault(ctx, ref, ex, fault("c1", "PC1", "ip 10.0.0.98/24"), 2), "a retry of the same call")
	require.ErrorContains(t, a.admitFault(ctx, ref, ex, fault("c2", "PC1", "ip 10.0.0.98/24"), 2), "already had this fault",
		"nor twice in one exercise")
	second := fault("c2", "PC2", "ip 10.0.0.97/24")
	require.NoError(t, a.admitFault(ctx, ref, ex, second, 2))
	_, err = a.Exercises.RecordFault(ctx, ex, second)
	require.NoError(t, err)
	require.ErrorContains(t, a.admitFault(ctx, ref, ex, fault("c3", "PC3", "ip 10.0.0.96/24"), 2),
		"the exercise asked for 2 faults and 2 are recorded")
}

func TestHintsPointAtALinkFault(t *testing.T) {
	hints := ExerciseHints([]models.InjectedFault{
		{Device: "PC1", Hints: models.StringListJSON([]string{"A PC is off."})},
		{Device: "R1–R2", LinkNodes: models.StringListJSON([]string{"R1", "R2"}), Hints: models.StringListJSON([]string{"Something is slow."})},
	})
	require.Equal(t, []string{"A PC is off.", "Something is slow.", "Look closely at PC1 and the link R1–R2."}, hints)
}
