package e2e

import (
	"context"
	"net/http"
	"regexp"
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

// labBlocks are what a request tells the model of the lab: its <lab> and <lab_update> blocks, in
// the order the model reads them.
func labBlocks(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, labBlock.FindAllString(m.Content, -1)...)
	}
	return out
}

var labBlock = regexp.MustCompile(`(?s)<lab>.*?</lab>|<lab_update>.*?</lab_update>`)

// conversationText is everything a request says after its system prompt.
func conversationText(r fakeopenai.Request) string {
	var b strings.Builder
	for _, m := range r.Messages[1:] {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// The lab the model knows is in the conversation, not in the system prompt: the session's first
// call shows the project; the copilot's own change is a note after the tool's result; a change
// made outside the chat between two turns is a note, naming it so, on the next turn's first
// call; every note stays where it was in every later call, and nothing is said twice.
func TestLabNotesAreAppendedWhereTheModelReadsThem(t *testing.T) {
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
	for _, c := range calls {
		require.NotContains(t, c.Messages[0].Content, env.ProjectID, "the system prompt holds nothing of the lab")
		require.Equal(t, calls[0].Messages[0].Content, c.Messages[0].Content)
	}

	first := labBlocks(calls[0])
	require.Len(t, first, 1, "the session's first call is shown the project")
	require.Contains(t, first[0], "PC2: vpcs, started")
	require.Contains(t, first[0], "node_id "+pc1.ID)
	require.True(t, strings.HasPrefix(calls[0].LastMessage().Content, "Add a PC below PC1.\n\n<lab>"), "after the user's words")

	own := labBlocks(calls[1])
	require.Len(t, own, 2)
	require.Contains(t, own[1], "PC3 added: vpcs, stopped", "the copilot's own change, after the tool's result")
	require.Equal(t, "tool", calls[1].LastMessage().Role)
	require.True(t, strings.HasSuffix(calls[1].LastMessage().Content, own[1]))

	notes := labBlocks(calls[2])
	require.Len(t, notes, 3, "the project, the new node, and what changed outside")
	outside := notes[2]
	require.Contains(t, outside, driftMarker)
	require.Contains(t, outside, "PC2 stopped")
	require.Contains(t, outside, "link PC1 e0 — PC2 e0 removed")
	require.Contains(t, outside, "PC1 moved")
	require.NotContains(t, outside, "PC3 added", "the copilot's own change is not an outside one")
	require.Contains(t, outside, "PC2 now: vpcs, stopped", "the note says what the lab is now")
	require.True(t, strings.HasSuffix(calls[2].LastMessage().Content, "What changed?\n\n"+outside), "at the end of the user's message")

	// Each call's request starts with the whole of the one before it, but for its own answer.
	for i := 1; i < len(calls); i++ {
		require.Equal(t, labBlocks(calls[i-1]), labBlocks(calls[i])[:len(labBlocks(calls[i-1]))], "call %d rewrote a note", i)
	}
	require.Len(t, labBlocks(calls[3]), 3, "the turn's later call repeats nothing")
	require.Len(t, labBlocks(calls[4]), 3, "the next turn has nothing new")
}
