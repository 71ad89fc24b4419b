package workflows

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

func TestToolSummaryNamesTargetsOnly(t *testing.T) {
	for _, tc := range []struct {
		call ToolCall
		want string
	}{
		{ToolCall{Name: "start_gns3_node", Arguments: `{"node_ids":["R1","R2"]}`}, "start_gns3_node: R1, R2"},
		{ToolCall{Name: "start_gns3_node", Arguments: `{"node_ids":["5f1c0a9e-7d3b-4a57-9d1e-0c2b8f4e6a11"]}`}, "start_gns3_node: 5f1c0a9e…"},
		{ToolCall{Name: "create_gns3_node", Arguments: `{"nodes":[{"template_id":"t-secret-ish","x":1,"y":2,"name":"PC3"}]}`}, "create_gns3_node: PC3"},
		{ToolCall{Name: "create_gns3_link", Arguments: `{"links":[{"node_a":"R1","port_a":"e0","node_b":"R2","port_b":"e0"}]}`}, "create_gns3_link: R1, R2"},
		{ToolCall{Name: domain.ConfigCommandsTool, Arguments: `{"device_configs":[{"device_name":"R1","commands":["enable secret hunter2"]}]}`}, domain.ConfigCommandsTool + ": R1"},
		{ToolCall{Name: "get_gns3_topology", Arguments: `{}`}, "get_gns3_topology"},
		{ToolCall{Name: "get_gns3_topology", Arguments: `not json`}, "get_gns3_topology"},
	} {
		require.Equal(t, tc.want, toolSummary(tc.call))
	}
}

func TestDeviceSummaryCountsLines(t *testing.T) {
	require.Equal(t, "R1: 3 config lines", deviceSummary(domain.DeviceJob{Name: "R1", Config: true, Commands: []string{"a", "b", "c"}}))
	require.Equal(t, "PC1: 1 command, 1 blocked", deviceSummary(domain.DeviceJob{Name: "PC1", Commands: []string{"show ip"},
		Blocked: []domain.BlockedCommand{{Command: "quit"}}}))
	require.Equal(t, "2 devices (R1, R2)", planDevices(domain.DevicePlan{Jobs: []domain.DeviceJob{{Name: "R1"}, {Name: "R2"}}}))
}

func TestClipSummaryKeepsRunesWhole(t *testing.T) {
	long := strings.Repeat("é", maxSummary+10)
	got := clipSummary(long)
	require.True(t, utf8.ValidString(got))
	require.Equal(t, maxSummary, utf8.RuneCountInString(got))
	require.Equal(t, "first", clipSummary("first\nsecond"))
}
