package api

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func TestTypedExerciseRequests(t *testing.T) {
	for msg, want := range map[string]string{
		"check": workflows.ExerciseCheckUpdate, " Check! ": workflows.ExerciseCheckUpdate, "HINT": workflows.ExerciseHintUpdate,
		"give  up": workflows.ExerciseGiveUpUpdate, "hint?": workflows.ExerciseHintUpdate,
		"check the routes": "", "please check": "", "": "", "hints": "",
	} {
		require.Equal(t, want, typedExerciseRequest(msg), "%q", msg)
	}
}
