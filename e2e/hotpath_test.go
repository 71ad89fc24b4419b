package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// gns3Requests counts the GNS3 requests in counts, the notification stream aside.
func gns3Requests(counts map[fakegns3.Op]int) (int, map[fakegns3.Op]int) {
	total, rest := 0, map[fakegns3.Op]int{}
	for op, n := range counts {
		if op != fakegns3.OpNotifications && n > 0 {
			total += n
			rest[op] = n
		}
	}
	return total, rest
}

// awaitLiveTopology waits until the project's live copy is current: the topology stream sends a
// snapshot marked live once it is (and a new snapshot when it becomes so).
func awaitLiveTopology(t *testing.T, env *e2eenv.Env) {
	t.Helper()
	s := env.OpenStream(http.MethodGet, env.ChatPath("/topology/stream"), nil, "")
	defer s.Close()
	require.Equal(t, http.StatusOK, s.Status)
	deadline := time.AfterFunc(20*time.Second, s.Close)
	defer deadline.Stop()
	for {
		f, err := s.Next()
		require.NoError(t, err, "the live topology did not become current within 20 s")
		if f.Event == "topology_snapshot" && f.Data["live"] == true {
			return
		}
	}
}

// With a current live topology, a turn reaches its first token without a single GNS3 request:
// the token check, the project check, the LLM configuration's groups and the system prompt's
// topology are all answered from memory. The tools' name resolution reads the live copy too.
// Access is still checked per user: a user who may not see the project is refused while the
// live copy is current (TestProjectCheckReadsTheLiveCopy in api covers the same at unit level).
func TestHotPathMakesNoGNS3Requests(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	r1 := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "R1", Template: fakegns3.RouterTemplateID, Status: "stopped"})
	pc := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	env.GNS3.AddLink(env.ProjectID, r1.ID, 0, 0, pc.ID, 0, 0)
	env.LLM.SetHandler(titleReplies("Lab"))
	reply := fakeopenai.Reply{Content: fakeopenai.Words("first token then the rest")}
	env.LLM.Enqueue(reply) // the warm-up turn

	// The user's first message opens the subscription and fills the short-lived caches.
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"}, "")
	require.Equal(t, http.StatusOK, s.Status)
	first := s.UntilDone(t, true)
	sid := first[0].Data["session_id"].(string)
	s.Close()
	awaitLiveTopology(t, env)

	// A turn that answers at once: nothing from GNS3 up to its first token, nor after it.
	env.GNS3.ResetCounts()
	env.LLM.Enqueue(reply)
	s = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi again", "session_id": sid}, "")
	require.Equal(t, http.StatusOK, s.Status)
	s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "content" })
	n, ops := gns3Requests(env.GNS3.Counts())
	require.Zero(t, n, "GNS3 requests before the first token: %v", ops)
	s.UntilDone(t, true)
	s.Close()
	n, ops = gns3Requests(env.GNS3.Counts())
	require.Zero(t, n, "GNS3 requests in the whole turn: %v", ops)

	// A turn whose tool names a device: the name is resolved from the live copy (R1 is found,
	// and refused because it is stopped), still without a GNS3 request.
	env.GNS3.ResetCounts()
	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "call_show", Name: tools.ShowCommandsTool,
			Arguments: `{"device_configs": [{"device_name": "R1", "commands": ["show ip interface brief"]}]}`}),
		fakeopenai.Reply{Content: fakeopenai.Words("R1 is stopped.")},
	)
	s = env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "show R1", "session_id": sid}, "")
	require.Equal(t, http.StatusOK, s.Status)
	frames := s.UntilDone(t, true)
	s.Close()
	out := toolEnds(t, frames)["call_show"]
	require.Len(t, out.Data, 1)
	require.Equal(t, r1.ID, out.Data[0].ID, "R1 was resolved to its node")
	require.Contains(t, out.Data[0].Error, "R1 is stopped")
	n, ops = gns3Requests(env.GNS3.Counts())
	require.Zero(t, n, "GNS3 requests in a turn whose tool resolves a name: %v", ops)

	// The caches save reads, not checks: another user of the same GNS3 is refused.
	env.GNS3.AddUser("mallory", "mallory-token", false)
	code, body := env.DoAs("mallory-token", http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hi"})
	require.Equal(t, http.StatusForbidden, code, "%s", body)
}
