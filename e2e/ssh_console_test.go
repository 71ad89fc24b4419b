package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/consoleproxy"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// GNS3 3.1's SSH consoles through the chat, as a user meets them: a real VPCS behind an SSH
// console like GNS3's (no authentication, a host key of its own), its node's console_type
// "ssh". A show command and an approved job go over SSH; the job is read back with its diff,
// and the audit records, for every line and read, the fingerprint of the key they reached.
func TestAChatDrivesAnSSHConsole(t *testing.T) {
	env, lab := vpcsEnv(t, 1, e2eenv.Options{Approval: "changes"})
	console := consoleproxy.StartSSH(t, lab.Nodes[0].Addr(), consoleproxy.SSHOptions{})
	nodes := env.GNS3.Nodes(env.ProjectID)
	require.Len(t, nodes, 1)
	env.GNS3.SetConsole(nodes[0].ID, "127.0.0.1", console.Port())
	env.GNS3.SetConsoleType(nodes[0].ID, "ssh")

	env.LLM.Enqueue(
		fakeopenai.Calls(fakeopenai.ToolCall{ID: "c_show", Name: "execute_vpcs_commands",
			Arguments: `{"device_configs": [{"device_name": "PC1", "commands": ["show ip"]}]}`}),
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.8.0.1/24 10.8.0.254"}})),
		fakeopenai.Text("PC1 is addressed."),
	)
	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "address PC1", "approval_cards": true}, "")
	seen := until(t, s, "approval_required")
	show := deviceToolEnds(t, seen)
	require.Len(t, show, 1)
	status, res, _ := itemByName(t, show[0], "PC1")
	require.Equal(t, "success", status, res)
	require.Contains(t, res, "IP/MASK", "show ip answered over SSH")
	sessionID, _ := startedIDs(t, seen)
	decide(t, env, sessionID, approvalOf(t, seen[len(seen)-1]).ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"])
	ends := deviceToolEnds(t, rest)
	require.Len(t, ends, 1)
	status, res, _ = itemByName(t, ends[0], "PC1")
	require.Equal(t, "success", status, res)
	// The read-back is the real PC's answer (VPCS serves one client, which the SSH console holds,
	// as GNS3's does, so the test cannot ask it directly).
	require.Contains(t, res, "+ IP/MASK : 10.8.0.1/24", "read back over SSH, with the diff")

	code, body := env.Do(http.MethodGet, env.ChatPath("/config-jobs"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var jobs []struct {
		Records []struct {
			Kind    string `json:"kind"`
			Command string `json:"command"`
			HostKey string `json:"host_key"`
		} `json:"records"`
	}
	require.NoError(t, json.Unmarshal(body, &jobs))
	require.Len(t, jobs, 1)
	require.NotEmpty(t, jobs[0].Records)
	for _, r := range jobs[0].Records {
		require.Equal(t, console.Fingerprint(), r.HostKey, "%s %q", r.Kind, r.Command)
	}
}
