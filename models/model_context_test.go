package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A restatement comes back as it was written, quotes and tags included, and a row without one
// (or with metadata of another shape) restates nothing.
func TestRestatementReadsWhatContextMetadataWrote(t *testing.T) {
	lab := "<lab>\nProject: \"x\" & y\n</lab>"
	require.Equal(t, `{"restate":"\u003clab\u003e\nProject: \"x\" \u0026 y\n\u003c/lab\u003e"}`, ContextMetadata(lab))
	require.Equal(t, lab, Restatement(ContextMetadata(lab)))
	require.Empty(t, Restatement(""))
	require.Empty(t, Restatement("{}"))
	require.Empty(t, Restatement("not json"))
}
