package activities

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/devices"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/tools"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Recorded histories hold plans written as the tools package's JSON; the workflow's copy must
// read them and write the same keys, or a running turn breaks on the next deployment.
func TestWorkflowPlanHasTheToolsPlansJSON(t *testing.T) {
	plan := tools.DevicePlan{Tool: tools.ConfigCommandsTool,
		Jobs: []tools.DeviceJob{{NodeID: "n1", Name: "R1", Platform: "cisco_ios", Config: true,
			Target: devices.Target{NodeID: "n1", Name: "R1", NodeType: "dynamips", TemplateName: "c7200", Image: "c7200.image",
				Tags: []string{"core"}, ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: 5000},
			Commands: []string{"interface Gi0/0", "ip address 10.0.0.1 255.255.255.0"},
			Blocked:  []tools.BlockedCommand{{Command: "reload", Reason: "reloads the device"}}}},
		Failed: []tools.Item{{ID: "ghost", Name: "ghost", Status: tools.StatusFailed, Error: "no such node"}},
	}
	want, err := json.Marshal(plan)
	require.NoError(t, err)

	var fromHistory workflows.DevicePlan
	require.NoError(t, json.Unmarshal(want, &fromHistory))
	require.Equal(t, plan, toolsPlan(fromHistory), "a recorded plan reads into the workflow's types without loss")

	wp := workflowPlan(plan)
	require.Equal(t, tools.DeviceTimeout(plan.Jobs[0]), wp.Jobs[0].Timeout, "the plan carries each device's time bound")
	got, err := json.Marshal(wp)
	require.NoError(t, err)
	var keys, wantKeys map[string]any
	require.NoError(t, json.Unmarshal(got, &keys))
	require.NoError(t, json.Unmarshal(want, &wantKeys))
	job := keys["jobs"].([]any)[0].(map[string]any)
	require.NotZero(t, job["timeout"])
	delete(job, "timeout") // the one addition
	require.Equal(t, wantKeys, keys)
	require.Equal(t, plan, toolsPlan(wp))
}

// The workflow names tools, modes and statuses with its own constants so it needs neither the
// tool catalogue nor the database package; they must stay the words those packages use.
func TestWorkflowConstantsMatchTheirSources(t *testing.T) {
	require.Equal(t, tools.ShowCommandsTool, workflows.ShowCommandsTool)
	require.Equal(t, tools.ConfigCommandsTool, workflows.ConfigCommandsTool)
	require.Equal(t, tools.VPCSCommandsTool, workflows.VPCSCommandsTool)
	require.Equal(t, string(tools.LabAutomation), workflows.ModeLabAutomation)
	require.Equal(t, models.TurnCompleted, workflows.TurnCompleted)
	require.Equal(t, models.TurnFailed, workflows.TurnFailed)
	require.Equal(t, models.TurnCancelled, workflows.TurnCancelled)

	reg := tools.NewRegistry(tools.AllTools()...)
	for _, name := range []string{"delete_gns3_node", "delete_gns3_link", "stop_gns3_node", "reload_gns3_node"} {
		require.True(t, workflows.IsDestructiveTool(name), name)
		_, ok := reg.Lookup(name)
		require.True(t, ok, "%s is a tool of the catalogue", name)
	}
	for _, tl := range reg.All() {
		require.Equal(t, tools.IsDeviceTool(tl.Name()), workflows.IsDeviceTool(tl.Name()), tl.Name())
	}
}
