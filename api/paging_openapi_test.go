package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/apicheck"
)

// The paged lists' total is part of the document: a session list or a history answered without
// X-Total-Count, or a page the document does not allow, does not match it.
func TestDocumentHoldsThePagedListsToTheirTotal(t *testing.T) {
	c, err := apicheck.New()
	require.NoError(t, err)
	get := func(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
	withTotal := http.Header{"Content-Type": {"application/json"}, api.TotalCountHeader: {"0"}}
	bare := http.Header{"Content-Type": {"application/json"}}
	history := []byte(`{"thread_id":"s","title":"t","messages":[],"created_at":"2026-01-01T00:00:00+00:00","updated_at":"2026-01-01T00:00:00+00:00","llm_calls":0}`)
	for _, prefix := range []string{"/v3/projects/p/chat", "/v3/copilot/projects/p/chat"} {
		sessions := prefix + "/sessions"
		require.NoError(t, c.Check(get(sessions+"?limit=500&offset=9900"), nil, 200, withTotal, []byte(`[]`)))
		require.ErrorContains(t, c.Check(get(sessions), nil, 200, bare, []byte(`[]`)), "X-Total-Count")
		require.ErrorContains(t, c.Check(get(sessions+"?limit=501"), nil, 200, withTotal, []byte(`[]`)), "limit")
		require.ErrorContains(t, c.Check(get(sessions+"?offset=-1"), nil, 200, withTotal, []byte(`[]`)), "offset")
		require.NoError(t, c.Check(get(sessions+"?limit=0"), nil, 422, bare, []byte(`{"message":"limit must be a whole number from 1 to 500."}`)))

		hist := sessions + "/s/history"
		require.NoError(t, c.Check(get(hist+"?limit=100&offset=1900"), nil, 200, withTotal, history))
		require.ErrorContains(t, c.Check(get(hist), nil, 200, bare, history), "X-Total-Count")
	}
}
