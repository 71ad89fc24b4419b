package mcp

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

func TestEveryCatalogueToolGetsARequiredProjectID(t *testing.T) {
	for _, tl := range tools.AllTools() {
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(WithProjectID(tl.Parameters()), &s), tl.Name())
		require.Equal(t, "object", s.Type)
		require.Contains(t, s.Properties, "project_id", tl.Name())
		require.Contains(t, s.Required, "project_id", tl.Name())
		var orig map[string]any
		require.NoError(t, json.Unmarshal(tl.Parameters(), &orig))
		if props, ok := orig["properties"].(map[string]any); ok {
			for k := range props {
				require.Contains(t, s.Properties, k, "%s keeps its own argument %s", tl.Name(), k)
			}
		}
	}
	twice := WithProjectID(WithProjectID(json.RawMessage(`{"type":"object","required":["x"]}`)))
	require.JSONEq(t, `{"type":"object","required":["project_id","x"],"properties":{"project_id":{"type":"string","format":"uuid","description":"`+projectIDDescription+`"}}}`, string(twice))
}

func TestSplitArgumentsTakesProjectIDOut(t *testing.T) {
	args, pid, err := splitArguments(json.RawMessage(`{"project_id":"0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11","node_ids":["PC1"]}`))
	require.NoError(t, err)
	require.Equal(t, "0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11", pid)
	require.JSONEq(t, `{"node_ids":["PC1"]}`, args)

	args, _, err = splitArguments(json.RawMessage(`{"project_id":"0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11"}`))
	require.NoError(t, err)
	require.Equal(t, `{}`, args)

	for raw, want := range map[string]string{
		`{}`:                   "project_id is required",
		`null`:                 "project_id is required",
		`{"project_id":3}`:     "must be a string",
		`{"project_id":"lab"}`: "must be a UUID",
		`[1]`:                  "must be a JSON object",
	} {
		_, _, err := splitArguments(json.RawMessage(raw))
		require.ErrorContains(t, err, want, raw)
	}
}

func TestTopologyURIRoundTrips(t *testing.T) {
	id := "0b1d5e5a-4f55-4a2b-9a43-1f0e5cbd1c11"
	got, ok := topologyProject(TopologyURI(id))
	require.True(t, ok)
	require.Equal(t, id, got)
	for _, bad := range []string{"gns3://projects/x/topology", "gns3://projects/" + id, "file:///etc/passwd", "gns3://projects/" + id + "/topology/x"} {
		_, ok := topologyProject(bad)
		require.False(t, ok, bad)
	}
}

func TestClientNameIsPrintableBoundedAndNeverEmpty(t *testing.T) {
	require.Equal(t, "unnamed-client", clientName("  "))
	require.Equal(t, "agentx", clientName("agent\x00\nx"))
	long := clientName(strings.Repeat("é", 80))
	require.LessOrEqual(t, len(long), 100)
	require.True(t, strings.HasPrefix(long, "éé"))
}

func TestPeekInitializeLeavesTheBodyForTheSDK(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"ide"},"_meta":{"mode":"teaching_assistant"}}}`
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	init, err := peekInitialize(req)
	require.NoError(t, err)
	require.Equal(t, "ide", init.Params.ClientInfo.Name)
	require.Equal(t, "teaching_assistant", init.Params.Meta["mode"])
	rest, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	require.Equal(t, body, string(rest))

	other := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	init, err = peekInitialize(other)
	require.NoError(t, err)
	require.Nil(t, init)
}
