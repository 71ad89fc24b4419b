package activities

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/models"
)

func contextRow(turn, restate string) models.ChatMessage {
	meta, _ := json.Marshal(map[string]string{"restate": restate})
	return models.ChatMessage{TurnID: turn, Role: "user", ModelContext: true, Content: restate, Metadata: string(meta)}
}

// The lab the model knows is the last one it was told of, unless a private turn (other than
// the one asking) came after it: what that turn's notes said was taken from the model, and a
// note of what changed since would name the fault.
func TestKnownLabIsTheLastTheModelWasShown(t *testing.T) {
	first, second := labText("Project: lab\nNodes (1):\n- PC1: vpcs\n", ""), labText("Project: lab\nNodes (2):\n- PC1: vpcs\n- PC2: vpcs\n", "")
	rows := []models.ChatMessage{{TurnID: "t1", Role: "user", Content: "hi"}, contextRow("t1", first), {TurnID: "t1", Role: "assistant", Content: "ok"},
		{TurnID: "t2", Role: "user", Content: "add"}, contextRow("t2", second)}
	require.Equal(t, second, knownLab(rows, nil, "t3"))
	require.Empty(t, knownLab(rows[:1], nil, "t1"), "nothing shown yet")

	// t3 injected a fault; its own rows are redacted away for t4, leaving its other messages.
	later := append(rows, models.ChatMessage{TurnID: "t3", Role: "user", Content: "inject"},
		models.ChatMessage{TurnID: "t3", Role: "assistant", Content: models.InjectedText})
	require.Empty(t, knownLab(later, map[string]bool{"t3": true}, "t4"), "after a private turn the lab is shown whole")
	require.Equal(t, second, knownLab(later, map[string]bool{"t3": true}, "t3"), "the private turn itself goes on from what it knows")
	shownAgain := append(later, contextRow("t4", first))
	require.Equal(t, first, knownLab(shownAgain, map[string]bool{"t3": true}, "t5"))
}

// The whole lab, then what changed: a note says only the difference, with the outside changes
// named first, and nothing when nothing changed.
func TestLabNoteSaysOnlyWhatChanged(t *testing.T) {
	before := labText("Project: lab (project_id p, opened)\nNodes (1):\n- PC1: vpcs, started; node_id n1\nLinks (0):\n- none yet\n", "")
	require.Equal(t, before, labNote("", before, nil), "the first time, the whole lab")
	require.Empty(t, labNote(before, before, nil))
	project, skills := splitLab(labText("Project: x\n", "VPCS is not a router.\n"))
	require.Equal(t, "Project: x\n", project)
	require.Equal(t, "VPCS is not a router.\n", skills)

	now := labText("Project: lab (project_id p, opened)\nNodes (1):\n- PC1: vpcs, stopped; node_id n1\nLinks (0):\n- none yet\n", "VPCS is not a router.\n")
	note := labNote(before, now, []string{"PC1 stopped"})
	require.Equal(t, "<lab_update>\n"+
		"Since your last answer, the lab changed outside this chat (in the GNS3 GUI, the web UI or another session): PC1 stopped.\n"+
		"The lab changed since you last saw it:\n- PC1 now: vpcs, stopped\n"+
		"What the skills say about this lab's devices:\nVPCS is not a router.\n"+
		"</lab_update>", note)
	require.Contains(t, labNote(before, before, []string{"PC1 moved"}), "PC1 moved", "a move alone is still said")
}
