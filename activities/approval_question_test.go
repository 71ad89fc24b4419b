package activities

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuestionStatesThePlanAndHowToAnswer(t *testing.T) {
	running := "hostname R1\n!\ninterface eth0\n ip address 10.0.0.1/24\nexit\n!\n" + strings.Repeat("router ospf\n network 10.0.0.0/8 area 0\nexit\n", 10)
	p := ApprovalPlan{Tool: "execute_multiple_device_config_commands", Kind: "config", Summary: "Send 3 line(s) to 1 device(s)",
		Devices: []PlanDevice{{Name: "R1", Platform: "frr", ReadCommand: "show running-config", CurrentConfig: running,
			Lines: []PlanLine{{Command: "interface eth0", Verdict: "change"}, {Command: "ip address 10.1.0.1/24", Verdict: "change"},
				{Command: "show ip route", Verdict: "read"}, {Command: "write erase", Verdict: "blocked", Reason: "erases the saved configuration"}}}}}
	q := p.Question(time.Date(2026, 12, 1, 15, 4, 0, 0, time.UTC))
	for _, want := range []string{"**Approval needed**", "send 3 line(s)", "**R1** (frr)", "interface eth0\nip address 10.1.0.1/24\n",
		"show ip route    # only reads", "blocked, will not be sent: `write erase` (erases the saved configuration)",
		"(`show running-config`), the part these lines touch", " ip address 10.0.0.1/24", "**approve**", "**reject**", "**approve all**",
		"2026-12-01 15:04 UTC"} {
		assert.Contains(t, q, want)
	}
	assert.NotContains(t, q, "router ospf", "only the part of the configuration the lines touch")
	assert.Contains(t, q, "other line(s) left out")
}

func TestQuestionOfALargeJobSaysWhatItLeftOut(t *testing.T) {
	p := ApprovalPlan{Tool: "execute_vpcs_commands", Kind: "config", Summary: "Send 400 line(s) to 200 device(s)"}
	for i := range 200 {
		d := PlanDevice{Name: fmt.Sprintf("PC%d", i+1), Platform: "vpcs", CurrentConfig: "NAME : PC\nIP/MASK : 0.0.0.0/0"}
		for k := range 2 {
			d.Lines = append(d.Lines, PlanLine{Command: fmt.Sprintf("ip 10.%d.%d.1/24", i, k), Verdict: "change"})
		}
		p.Devices = append(p.Devices, d)
	}
	p.Devices[0].Lines = nil
	for k := range 30 {
		p.Devices[0].Lines = append(p.Devices[0].Lines, PlanLine{Command: fmt.Sprintf("ip 10.0.%d.1/24", k), Verdict: "change"})
	}
	q := p.Question(time.Time{})
	require.Less(t, len(q), 6000, "a message, not a dump")
	assert.Contains(t, q, "…18 more line(s) not shown")
	assert.Contains(t, q, "…and 192 more device(s) not shown here (384 line(s))")
	assert.Contains(t, q, "PC9, PC10")
	assert.Contains(t, q, "and 172 more")
	assert.NotContains(t, q, "Without an answer by", "no deadline to state")
}

func TestQuestionOfADestructiveTool(t *testing.T) {
	p := ApprovalPlan{Tool: "delete_gns3_node", Kind: "destructive", Summary: "Delete nodes: PC1"}
	q := p.Question(time.Time{})
	assert.True(t, strings.HasPrefix(q, "**Approval needed** before `delete_gns3_node` runs: Delete nodes: PC1."), q)
}

func TestOutcomeSentence(t *testing.T) {
	assert.Equal(t, "**Approved** by alice: `x` goes ahead.", OutcomeSentence("x", "approved", "alice", "", false, ""))
	assert.Contains(t, OutcomeSentence("x", "approved", "alice", "", true, ""), "approve all")
	assert.Contains(t, OutcomeSentence("x", "approved", "alice", "", false, "a1"), "earlier **approve all**")
	assert.Contains(t, OutcomeSentence("x", "rejected", "alice", "use .2", false, ""), "“use .2”")
	assert.Contains(t, OutcomeSentence("x", "expired", "", "", false, ""), "expired")
}
