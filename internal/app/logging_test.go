package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// Temporal SDK lines about a turn's workflow get its turn id, whether the SDK gives the
// workflow id with With (a workflow's logger) or on the line itself.
func TestTemporalLinesAboutATurnCarryItsID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(withTurnIDs(slog.NewJSONHandler(&buf, nil)))
	log.With("WorkflowID", "chat-s1-turn-t1").Info("from a workflow logger", "ActivityType", "LLMCall")
	log.Info("on the line", "WorkflowID", "chat-s2-turn-t2")
	log.Info("another workflow", "WorkflowID", "cron-cleanup")
	log.Info("no workflow")

	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var v map[string]any
		require.NoError(t, json.Unmarshal(l, &v))
		lines = append(lines, v)
	}
	require.Equal(t, "t1", lines[0]["turn_id"])
	require.Equal(t, "t2", lines[1]["turn_id"])
	require.NotContains(t, lines[2], "turn_id")
	require.NotContains(t, lines[3], "turn_id")
}
