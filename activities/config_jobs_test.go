package activities

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func showIPOutput(addr, name string) string {
	return "NAME        : " + name + "[1]\nIP/MASK     : " + addr + "\nGATEWAY     : 0.0.0.0\nDNS         : \nMAC         : 00:50:79:66:68:00\n"
}

// A line the device accepted but whose effect the read-back does not show (another address came
// back) makes the device partial_success with that line, not a success because every line was
// accepted; the diff says what really changed.
func TestAcceptedLineNotInEffectMakesTheDevicePartial(t *testing.T) {
	job := tools.DeviceJob{NodeID: "n1", Name: "PC1", Platform: "vpcs", Commands: []string{"ip 10.0.0.1/24", "ping 10.0.0.9"}}
	recs := []models.DeviceCommand{
		{NodeID: "n1", Seq: models.SeqReadAfter, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("10.0.0.2/24", "PC1")},
		{NodeID: "n1", Seq: models.SeqReadBefore, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("0.0.0.0/0", "PC1")},
		{NodeID: "n1", Seq: 0, Command: "ip 10.0.0.1/24", Status: models.CommandOK, Output: "Checking for duplicate address...\nPC1 : 10.0.0.1 255.255.255.0"},
		{NodeID: "n1", Seq: 1, Command: "ping 10.0.0.9", Status: models.CommandOK, Output: "host (10.0.0.9) not reachable"},
	}
	o := outcomeFromRecords(job, recs)
	require.Len(t, o.Results, 2, "the reads are not commands of the call")
	ch := compareReads(job, o, recs, nil)
	require.Empty(t, ch.Error)
	require.Equal(t, "show ip", ch.ReadCommand)
	require.Equal(t, []string{"IP/MASK : 10.0.0.2/24"}, ch.Added)
	require.Equal(t, []string{"IP/MASK : 0.0.0.0/0"}, ch.Removed)
	require.Equal(t, []string{"ip 10.0.0.1/24"}, ch.NotTaken, "a ping changes nothing and is not judged")

	res := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{o})
	it := res.Data[0]
	require.Equal(t, tools.StatusSuccess, it.Status)
	annotate(&it, ch)
	require.Equal(t, tools.StatusPartial, it.Status)
	require.Contains(t, it.Error, `"ip 10.0.0.1/24"`)
	require.Contains(t, it.Result, "- IP/MASK : 0.0.0.0/0")
	require.Contains(t, it.Result, "+ IP/MASK : 10.0.0.2/24")
}

// "Not in effect" is judged on the final read-back: a line a later line of the same job sets
// again ("clear ip" before the address, one address before another) shows only the later
// line's effect, and is not reported for it.
func TestALineTheJobSetsAgainIsNotJudgedAlone(t *testing.T) {
	for _, lines := range [][]string{{"clear ip", "ip 10.0.0.2/24 10.0.0.254"}, {"ip 10.0.0.1/24", "ip 10.0.0.2/24 10.0.0.254"}} {
		job := tools.DeviceJob{NodeID: "n1", Name: "PC1", Platform: "vpcs", Commands: lines}
		after := strings.Replace(showIPOutput("10.0.0.2/24", "PC1"), "GATEWAY     : 0.0.0.0", "GATEWAY     : 10.0.0.254", 1)
		recs := []models.DeviceCommand{
			{NodeID: "n1", Seq: models.SeqReadBefore, Command: "show ip", Status: models.CommandOK, Output: showIPOutput("10.0.0.9/24", "PC1")},
			{NodeID: "n1", Seq: models.SeqReadAfter, Command: "show ip", Status: models.CommandOK, Output: after},
			{NodeID: "n1", Seq: 0, Command: lines[0], Status: models.CommandOK},
			{NodeID: "n1", Seq: 1, Command: lines[1], Status: models.CommandOK, Output: "PC1 : 10.0.0.2 255.255.255.0 gateway 10.0.0.254"},
		}
		ch := compareReads(job, outcomeFromRecords(job, recs), recs, nil)
		require.Empty(t, ch.NotTaken, "%q", lines)
	}
}

// Without both reads nobody can say what changed, and the result says so rather than claiming
// "no change".
func TestMissingReadsAreReportedNotGuessed(t *testing.T) {
	job := tools.DeviceJob{NodeID: "n1", Name: "PC1", Platform: "vpcs", Commands: []string{"ip 10.0.0.1/24"}}
	recs := []models.DeviceCommand{{NodeID: "n1", Seq: 0, Command: "ip 10.0.0.1/24", Status: models.CommandOK}}
	ch := compareReads(job, outcomeFromRecords(job, recs), recs, map[string]map[string]string{
		workflows.ReadAfter: {"n1": "the console did not answer"}})
	require.Contains(t, ch.Error, "reading the configuration after failed: the console did not answer")
	it := tools.Item{ID: "n1", Name: "PC1", Status: tools.StatusSuccess, Result: "PC1> ip 10.0.0.1/24"}
	annotate(&it, ch)
	require.Contains(t, it.Result, "What changed is not known")
	require.NotContains(t, it.Result, "none")
}
