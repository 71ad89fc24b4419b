package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// A teaching-mode turn in which the model analyses the PC1–PC2 link: the fake GNS3 serves the
// real sample capture as a live stream; the client sees packets-so-far progress while it runs,
// then the summary in the standard format with the card's data, and the capture is stopped.
func TestChatTurnAnalysesALinkCapture(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	env.LLM.SetHandler(titleReplies("Missing host"))
	pc1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1"})
	pc2 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC2", X: 300})
	link := env.GNS3.AddLink(env.ProjectID, pc1.ID, 0, 0, pc2.ID, 0, 0)
	env.GNS3.SetCaptureFeed("", fakegns3.CaptureFeed{Data: fakegns3.SampleCapture(), Chunk: 64, Delay: 10 * time.Millisecond})
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_cap", Name: "analyze_link_capture", Arguments: `{"node_a": "PC1", "node_b": "PC2", "packet_count": 41}`}),
		fakeopenai.Text("Nobody answers for 10.5.0.9."),
	)

	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "why does PC1 not reach 10.5.0.9?"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"])

	var progress []string
	sawEnd := false
	for _, f := range frames {
		switch f.Event {
		case "tool_progress":
			require.False(t, sawEnd, "progress comes before the result")
			p, _ := f.Data["progress"].(map[string]any)
			progress = append(progress, p["message"].(string))
		case "tool_end":
			sawEnd = true
		}
	}
	require.GreaterOrEqual(t, len(progress), 2, "%v", progress)
	require.Equal(t, "0 packets so far", progress[0])
	require.Equal(t, "1 packet so far", progress[1])

	o := toolEnds(t, frames)["c_cap"]
	requireStandard(t, o, "analyze_link_capture")
	require.True(t, o.Success, "%+v", o)
	require.Equal(t, link.ID, o.Data[0].ID)
	require.Contains(t, o.Data[0].Result, "who-has 10.5.0.9 (asked by 10.5.0.1, 3 time(s))")
	var card struct {
		Packets       int              `json:"packets"`
		Protocols     []map[string]any `json:"protocols"`
		Conversations []map[string]any `json:"conversations"`
	}
	raw, _ := json.Marshal(o.Metadata["capture"])
	require.NoError(t, json.Unmarshal(raw, &card))
	require.Equal(t, 41, card.Packets)
	require.Equal(t, "TCP", card.Protocols[0]["protocol"])
	require.Len(t, card.Conversations, 5)

	require.False(t, env.GNS3.Capturing(link.ID), "the capture the tool started is stopped")
	require.Equal(t, 1, env.GNS3.Count(fakegns3.OpStopCapture))

	// The model read the summary as the tool's result.
	reqs := streamedRequests(env.LLM)
	last := reqs[len(reqs)-1].LastMessage()
	require.Equal(t, "tool", last.Role)
	require.True(t, strings.Contains(last.Content, "Unanswered ARP"), last.Content)
}
