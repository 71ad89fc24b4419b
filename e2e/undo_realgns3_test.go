package e2e

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/realgns3"
)

// The undo on the real GNS3 v3.0.6 with a real VPCS: PC1 has an address and a gateway;
// a job readdresses it; the undo sends "clear ip" and the old address, reads back exactly the
// configuration before the job, and answers success, which PC1's console confirms.
func TestUndoOfAVPCSJobOnRealGNS3(t *testing.T) {
	s := realgns3.Require(t)
	p := s.NewProject(t)
	p.AddVPCS(t, 1)
	p.StartAll(t)
	p.Run(t, "PC1", "ip 10.8.0.1/24 10.8.0.254")
	before := p.Run(t, "PC1", "show ip")
	require.Contains(t, before, "10.8.0.1/24")

	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "never", RealGNS3: s, RealProject: p.ID})
	env.LLM.SetHandler(titleReplies("Undo"))
	env.LLM.Enqueue(
		fakeopenai.Calls(vpcsCall("c_ip", map[string][]string{"PC1": {"ip 10.8.0.77/24 10.8.0.254"}})),
		fakeopenai.Calls(undoCall("c_undo", `{}`)),
		fakeopenai.Text("PC1 is back as it was."),
	)
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "readdress PC1, then undo it"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], e2eenv.Types(frames))

	ends := deviceToolEnds(t, frames)
	require.Len(t, ends, 2)
	require.True(t, ends[0].Success, "%+v", ends[0])
	meta := toolMetadata(t, frames)
	jobID, _ := meta["c_ip"]["config_job_id"].(string)
	require.NotEmpty(t, jobID)
	require.Equal(t, jobID, meta["c_undo"]["undo_of"])
	require.Equal(t, "completed", meta["c_undo"]["config_job_status"])
	require.True(t, ends[1].Success, "%+v", ends[1])
	status, res, errText := itemByName(t, ends[1], "PC1")
	require.Equal(t, "success", status, errText)
	require.Empty(t, errText)
	require.Contains(t, res, "PC1> clear ip")
	require.Contains(t, res, "PC1> ip 10.8.0.1/24 10.8.0.254")
	require.Contains(t, res, "Back to the configuration before job "+jobID+": the read-back equals it.")
	require.NotContains(t, res, "not in effect")

	after := p.Run(t, "PC1", "show ip")
	vpcs, _ := devices.ProfileByName("vpcs")
	added, removed := vpcs.SameState(before, after)
	require.Empty(t, added, after)
	require.Empty(t, removed, after)
}
