package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The count an injection must record: the field, else the message's N as GNS3 3.1's dialog
// words it, else one; "random" is 1 to 3; out of range and contradictions are refused.
func TestFaultCountReadsTheFieldAndTheDialogsMessage(t *testing.T) {
	for _, c := range []struct {
		message, field string
		want           int
	}{
		{InjectMessage, "", 1},
		{"Inject 2 network fault(s) for troubleshooting practice", "", 2},
		{"inject THREE network faults for troubleshooting practice", "", 3},
		{"Inject 3 network fault(s) for troubleshooting practice", "3", 3},
		{InjectMessage, "2", 2},
		{"break something please", "", 1},
		{"Inject 2 network fault(s)", "null", 2},
	} {
		got, status, msg := faultCount(c.message, json.RawMessage(c.field))
		require.Zero(t, status, "%q %q: %s", c.message, c.field, msg)
		require.Equal(t, c.want, got, "%q %q", c.message, c.field)
	}
	seen := map[int]bool{}
	for range 200 {
		for _, in := range []struct{ message, field string }{{"Inject random network fault(s) for troubleshooting practice", ""}, {InjectMessage, `"random"`}} {
			got, status, _ := faultCount(in.message, json.RawMessage(in.field))
			require.Zero(t, status)
			require.True(t, got >= 1 && got <= 3, "random is 1 to 3: %d", got)
			seen[got] = true
		}
	}
	require.Len(t, seen, 3, "every count from 1 to 3 comes up")
	for _, c := range []struct{ message, field, want string }{
		{InjectMessage, "0", "count must be a number from 1 to 5"},
		{InjectMessage, "6", "count must be a number from 1 to 5"},
		{InjectMessage, `"many"`, "count must be a number from 1 to 5"},
		{"Inject 3 network fault(s) for troubleshooting practice", "2", "count is 2 but the message asks for 3"},
		{"Inject 9 network fault(s) for troubleshooting practice", "", "at most 5 faults"},
	} {
		_, status, msg := faultCount(c.message, json.RawMessage(c.field))
		require.Equal(t, http.StatusUnprocessableEntity, status, "%q %q", c.message, c.field)
		require.Contains(t, msg, c.want)
	}
}

func TestResetIsTypedLikeCheckAndHint(t *testing.T) {
	for _, msg := range []string{"reset", "Reset.", "  RESET! "} {
		require.Equal(t, workflows.ExerciseResetUpdate, typedExerciseRequest(msg), msg)
	}
	require.Empty(t, typedExerciseRequest("reset the router"), "only the word alone")
}
