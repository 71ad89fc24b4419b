package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

// The plan the workflow gets carries each device's time bound.
func TestWorkflowPlanCarriesEachDevicesTimeBound(t *testing.T) {
	plan := tools.DevicePlan{Tool: tools.ConfigCommandsTool,
		Jobs: []tools.DeviceJob{{NodeID: "n1", Name: "R1", Platform: "cisco_ios", Config: true,
			Target: domain.DeviceTarget{NodeID: "n1", Name: "R1", NodeType: "dynamips", TemplateName: "c7200", Image: "c7200.image",
				Tags: []string{"core"}, ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: 5000},
			Commands: []string{"interface Gi0/0", "ip address 10.0.0.1 255.255.255.0"},
			Blocked:  []tools.BlockedCommand{{Command: "reload", Reason: "reloads the device"}}}},
		Failed: []tools.Item{{ID: "ghost", Name: "ghost", Status: tools.StatusFailed, Error: "no such node"}},
	}
	wp := withTimeouts(plan)
	require.Equal(t, tools.DeviceTimeout(plan.Jobs[0]), wp.Jobs[0].Timeout, "the plan carries each device's time bound")
	require.NotZero(t, wp.Jobs[0].Timeout)
}

// The workflows route tool calls by the vocabulary's destructive tools: each is a tool of the
// catalogue.
func TestDestructiveToolsAreToolsOfTheCatalogue(t *testing.T) {
	reg := tools.NewRegistry(tools.AllTools()...)
	for _, name := range []string{"delete_gns3_node", "delete_gns3_link", "stop_gns3_node", "reload_gns3_node"} {
		require.True(t, domain.IsDestructiveTool(name), name)
		_, ok := reg.Lookup(name)
		require.True(t, ok, "%s is a tool of the catalogue", name)
	}
}
