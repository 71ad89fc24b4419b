package tools

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInjectionModeOffersItsOwnTools(t *testing.T) {
	reg := NewRegistry(AllTools()...)
	var names []string
	for _, tl := range reg.For(TroubleshootingInjection) {
		names = append(names, tl.Name())
	}
	require.ElementsMatch(t, []string{"get_gns3_topology", ShowCommandsTool, ConfigCommandsTool, VPCSCommandsTool, RecordFaultTool,
		SetLinkConditionsTool, ClearLinkConditionsTool, CreateSnapshotTool, ListSnapshotsTool}, names,
		"it reads the lab, changes devices and link conditions and takes snapshots, never the nodes and links themselves, and never restores")
	for _, m := range []Mode{TeachingAssistant, LabAutomation} {
		for _, tl := range reg.For(m) {
			require.NotEqual(t, RecordFaultTool, tl.Name(), "only an injection turn records faults")
		}
	}
	mode, err := ParseMode("troubleshooting_injection")
	require.NoError(t, err)
	require.True(t, IsPrivateMode(string(mode)))
	require.False(t, IsPrivateMode(string(LabAutomation)))
	require.True(t, slices.Contains(Modes, TroubleshootingInjection))
}

func TestRecordFaultChecksItsArguments(t *testing.T) {
	_, err := checkFault(" ", nil, "", "show ip\nshow arp", "", nil)
	require.Error(t, err)
	for _, want := range []string{"device_name is empty", "lines must hold", "description must be", "verify_command must be one command", "verify_expect must be", "hints must hold"} {
		require.ErrorContains(t, err, want)
	}
	f, err := checkFault("PC1", []string{" ip 10.0.0.99/24 ", ""}, "wrong address", "show ip", "10.0.0.1/24", []string{"look at the PCs", " "})
	require.NoError(t, err)
	require.Equal(t, []string{"ip 10.0.0.99/24"}, f.Lines)
	require.Equal(t, []string{"look at the PCs"}, f.Hints)
}

func TestRecordFaultWithoutARecorderStoresNothing(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"device_name": "PC1", "lines": []string{"ip 10.0.0.99/24"}, "description": "d",
		"verify_command": "show ip", "verify_expect": "10.0.0.1/24", "hints": []string{"h"}})
	res := newRecordFaultTool().Run(context.Background(), Env{}, args)
	require.False(t, res.Success)
	require.Contains(t, res.Error, "cannot be recorded")
	res = newRecordFaultTool().Run(context.Background(), Env{}, json.RawMessage(`{"device_name":"PC1","secret":1}`))
	require.False(t, res.Success)
	require.Contains(t, res.Error, "unknown field")
}
