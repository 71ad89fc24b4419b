package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
)

func TestFaultFixedReadsConsoleOutput(t *testing.T) {
	out := "NAME        : PC1[1]\r\nIP/MASK     : 10.0.0.1/24\r\nGATEWAY     : 10.0.0.254\r\n"
	require.True(t, FaultFixed(out, "10.0.0.1/24"))
	require.True(t, FaultFixed(out, "ip/mask : 10.0.0.1/24"), "case and column padding do not matter")
	require.False(t, FaultFixed(out, "10.0.0.99/24"))
	require.False(t, FaultFixed(out, "  "), "an empty expectation never passes")
}

func TestExerciseHintsEscalate(t *testing.T) {
	faults := []models.InjectedFault{
		{Device: "R1", Hints: models.StringListJSON([]string{"a routing problem", "look at R1's routes"})},
		{Device: "PC2", Hints: models.StringListJSON([]string{"a PC problem"})},
	}
	require.Equal(t, []string{"a routing problem", "a PC problem", "look at R1's routes", "Look closely at R1 and PC2."}, ExerciseHints(faults))
	require.Empty(t, ExerciseHints(nil))
}

func TestInjectionEventsAreRedacted(t *testing.T) {
	_, keep := redactEvent(relay.Payload{Type: relay.TypeContent, Content: "I set PC1 to 10.0.0.99"})
	require.False(t, keep, "the model's own words are not streamed")
	_, keep = redactEvent(relay.Payload{Type: relay.TypeToolProgress, Progress: "PC1 failed"})
	require.False(t, keep)
	p, keep := redactEvent(relay.Payload{Type: relay.TypeToolCall, ToolCall: &relay.ToolCall{ID: "c1", Function: relay.ToolCallFunction{Name: "execute_vpcs_commands", Arguments: `{"secret":1}`}}})
	require.True(t, keep)
	require.Equal(t, "{}", p.ToolCall.Function.Arguments)
	require.Equal(t, "execute_vpcs_commands", p.ToolCall.Function.Name)
	p, _ = redactEvent(relay.Payload{Type: relay.TypeToolEnd, ToolOutput: `{"data":[{"result":"10.0.0.99"}]}`})
	require.Equal(t, models.HiddenToolResult, p.ToolOutput)
	p, keep = redactEvent(relay.Payload{Type: relay.TypeToolStart, ToolName: "x"})
	require.True(t, keep)
	require.Equal(t, "x", p.ToolName)
}
