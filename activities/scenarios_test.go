package activities

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// skillsActivities has the skills of the GNS3-layout fixture and an exercise table.
func skillsActivities(t *testing.T) *Activities {
	t.Helper()
	store, err := skills.Open(filepath.Join("..", "internal", "llm", "skills", "testdata", "gns3-layout"), nil)
	require.NoError(t, err)
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	return &Activities{Skills: store, Exercises: models.ExerciseRepository{DB: db}}
}

func frrAndPC() *livetopo.Snapshot {
	return &livetopo.Snapshot{Nodes: []gns3.Node{
		{NodeID: "n1", Name: "R1", NodeType: "qemu", Tags: []string{"device_type:frr"}},
		{NodeID: "n2", Name: "PC1", NodeType: "vpcs"},
	}}
}

// An injection turn is offered the scenarios that fit the lab and the difficulty asked for,
// minus the ones the student had; the lab every turn is shown says what the skills say of its
// devices.
func TestInjectionTurnIsOfferedScenariosThatFit(t *testing.T) {
	a := skillsActivities(t)
	ctx := context.Background()
	ref := workflows.WorkRef{TurnID: "turn-1", UserID: "alice", SessionID: "s1"}
	msg := []models.ChatMessage{{TurnID: "turn-1", Role: "user", Content: "Inject an easy fault please"}}
	set := a.Skills.Current()

	device, platforms := a.labSkills(ctx, set, nil, frrAndPC())
	require.Contains(t, device, "The console lands in vtysh", "the FRR skill, for R1")
	require.Contains(t, device, "VPCS is not a router", "the VPCS skill, for PC1")
	text := a.scenarioOffer(ctx, set, ref, platforms, msg)
	require.Contains(t, text, "## Fault scenarios you may choose from")
	require.Contains(t, text, "the beginner difficulty asked for")
	require.Contains(t, text, "`routing_faults/timers_differ` (beginner, severity high; platforms")
	require.Contains(t, text, "`host_faults/wrong_gateway`")
	require.NotContains(t, text, "wrong_area", "intermediate, not asked for")
	require.NotContains(t, text, "summary_on_ios", "no IOS in this lab")

	// Alice had the timers fault on another project: it is not offered again.
	_, err := a.Exercises.RecordFault(ctx, &models.Exercise{ID: "exercise-old-1", SessionID: "old", TurnID: "old-turn", Seq: 1, ProjectID: "p9",
		UserID: "alice", ExpiresAt: time.Now().Add(time.Hour)}, &models.InjectedFault{ToolCallID: "c", NodeID: "n1", Device: "R1",
		Lines: "[]", Description: "d", VerifyCommand: "show ip ospf neighbor", VerifyExpect: "Full", Hints: "[]", Scenario: "routing_faults/timers_differ"})
	require.NoError(t, err)
	text = a.scenarioOffer(ctx, set, ref, platforms, msg)
	require.NotContains(t, text, "timers_differ")
	require.Contains(t, text, "host_faults/wrong_gateway")

	none, _ := a.labSkills(ctx, set, nil, nil)
	require.Empty(t, none, "no lab read, nothing to add")
}

// A fault recorded with a scenario keeps the scenario's hints first, in order, then the
// model's own; an unknown scenario is refused.
func TestScenarioHintsComeFirst(t *testing.T) {
	a := skillsActivities(t)
	hints, err := a.scenarioHints(tools.InjectedFault{Scenario: "routing_faults/timers_differ", Hints: []string{"R2 is the one to look at", "Look at the hello and dead intervals"}})
	require.NoError(t, err)
	require.Equal(t, []string{"Compare the two routers' OSPF interface settings", "Look at the hello and dead intervals",
		"Set the same hello interval on both ends", "R2 is the one to look at"}, hints)
	_, err = a.scenarioHints(tools.InjectedFault{Scenario: "nope/none"})
	require.ErrorContains(t, err, `no scenario "nope/none"`)
	own, err := a.scenarioHints(tools.InjectedFault{Hints: []string{"mine"}})
	require.NoError(t, err)
	require.Equal(t, []string{"mine"}, own)
	require.True(t, strings.HasPrefix(ExerciseHints([]models.InjectedFault{{Device: "R1", Hints: models.StringListJSON(hints)}})[0], "Compare the two"),
		"the exercise's first hint is the scenario's first")
}
