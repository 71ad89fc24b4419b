package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

const driftMarker = "changed outside this chat"

// driftNotes returns the drift notes a model call received.
func driftNotes(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "system" && strings.Contains(m.Content, driftMarker) {
			out = append(out, m.Content)
		}
	}
	return out
}

// The lab changes outside the chat between two turns: the next turn's first model call hears
// it once, its later calls and the turn after do not, and the copilot's own changes are never
// reported as outside ones.
func TestDriftNoteExactlyOnceAfterOutsideChange(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{X: 0, Y: 0, Status: "started"})
	pc2 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{X: 250, Y: 0, Status: "started"})
	link := env.GNS3.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	env.LLM.SetHandler(titleReplies("Lab"))
	createArgs := `{"nodes": [{"template_id": "` + fakegns3.VPCSTemplateID + `", "x": 0, "y": 300}]}`
	env.LLM.Enqueue(
		// Turn 1: the copilot itself adds a node.
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_create", Name: "create_gns3_node", Arguments: createArgs}),
		fakeopenai.Reply{Content: fakeopenai.Words("PC3 is there.")},
		// Turn 2: a tool call, then the answer.
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_topo", Name: "get_gns3_topology", Arguments: `{}`}),
		fakeopenai.Reply{Content: fakeopenai.Words("PC2 is stopped now.")},
		// Turn 3.
		fakeopenai.Reply{Content: fakeopenai.Words("Nothing new.")},
	)
	turn := func(sessionID, msg string) string {
		t.Helper()
		body := map[string]any{"message": msg}
		if sessionID != "" {
			body["session_id"] = sessionID
		}
		s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), body, "")
		require.Equal(t, http.StatusOK, s.Status)
		frames := s.UntilDone(t, true)
		require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "turn %q", msg)
		return frames[0].Data["session_id"].(string)
	}
	sid := turn("", "Add a PC below PC1.")

	// Outside the chat: PC2 stops, the link goes, someone drags PC1.
	env.GNS3.SetStatus(pc2.ID, "stopped")
	admin := gns3.NewServer(env.GNS3.URL, 5*time.Second).WithToken(fakegns3.AdminToken)
	require.NoError(t, admin.DeleteLink(context.Background(), env.ProjectID, link.ID))
	env.GNS3.MoveNode(pc1.ID, 50, 0)

	turn(sid, "What changed?")
	turn(sid, "And now?")

	calls := streamedRequests(env.LLM)
	require.Len(t, calls, 5)
	require.Empty(t, driftNotes(calls[0]), "the session's first turn has nothing to compare with")
	require.Empty(t, driftNotes(calls[1]))
	notes := driftNotes(calls[2])
	require.Len(t, notes, 1, "the first call after the change gets one note")
	require.Contains(t, notes[0], "PC2 stopped")
	require.Contains(t, notes[0], "link PC1 e0 — PC2 e0 removed")
	require.Contains(t, notes[0], "PC1 moved")
	require.NotContains(t, notes[0], "PC3", "the copilot's own change is not an outside one")
	last := calls[2].Messages[len(calls[2].Messages)-1]
	require.Equal(t, "system", last.Role, "the note comes after the user's message")
	require.Empty(t, driftNotes(calls[3]), "the turn's later calls do not repeat the note")
	require.Empty(t, driftNotes(calls[4]), "the next turn has nothing new")
	require.Contains(t, calls[2].Messages[0].Content, "PC2: vpcs, stopped", "the system prompt shows the current lab")
}
