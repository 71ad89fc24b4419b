package api_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/apicheck"
	"github.com/gns3-copilot/gns3-copilot/mcp"
)

var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// engineRoutes is every route of a server with all its optional parts on (and the routes the
// front doors of other packages the service sets in Deps), in the document's path syntax.
func engineRoutes(t *testing.T) map[string]bool {
	s := api.New(api.Deps{LLMConfigs: &llmconfig.Store{}, MetricsHandler: http.NotFoundHandler(), Exercises: &api.Exercises{},
		Skills: &skills.Store{}, Approvals: &api.Approvals{}, MCP: mcp.Handler(mcp.Deps{})})
	out := map[string]bool{}
	for _, r := range s.Handler().(*gin.Engine).Routes() {
		out[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	return out
}

func TestEveryRouteIsInTheOpenAPIDocumentAndNothingElse(t *testing.T) {
	c, err := apicheck.New()
	require.NoError(t, err)
	doc := c.Document()
	routes := engineRoutes(t)
	for route := range routes {
		method, path, _ := strings.Cut(route, " ")
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("route %s %s is not in the OpenAPI document (api/openapi.json): describe it there", method, path)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !routes[method+" "+path] {
				t.Errorf("the OpenAPI document describes %s %s, which the server does not serve", method, path)
			}
		}
	}
	require.NotEmpty(t, doc.Components.Schemas["EventToolEnd"], "SSE events are described as schemas")
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	s := api.New(api.Deps{})
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), `"openapi":"3.1.0"`)
	require.Contains(t, w.Body.String(), `/v3/copilot/projects/{project_id}/chat/stream`)
}

func TestCheckerRejectsWhatTheDocumentDoesNotSay(t *testing.T) {
	c, err := apicheck.New()
	require.NoError(t, err)
	get := func(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
	json := http.Header{"Content-Type": {"application/json"}}

	require.NoError(t, c.Check(get("/healthz"), nil, 200, json, []byte(`{"status":"ok"}`)))
	require.ErrorContains(t, c.Check(get("/healthz"), nil, 200, json, []byte(`{"status":"fine"}`)), "does not match")
	require.ErrorContains(t, c.Check(get("/healthz"), nil, 418, json, []byte(`{"message":"x"}`)), "418")

	err = c.Check(get("/v3/brand-new"), nil, 200, json, []byte(`{}`))
	require.ErrorContains(t, err, "route GET /v3/brand-new is not in the OpenAPI document")
	require.NoError(t, c.Check(get("/v3/brand-new"), nil, 404, json, []byte(`{"message":"No such API route"}`)))
	require.NoError(t, c.Check(get("/app.js"), nil, 200, http.Header{"Content-Type": {"text/javascript"}}, []byte(`x`)), "the page's files are not the API")

	sse := http.Header{"Content-Type": {"text/event-stream"}}
	path := "/v3/projects/p/chat/sessions/s/stream"
	good := "id: 1-0\nevent: turn_started\ndata: {\"type\":\"turn_started\",\"session_id\":\"s\",\"turn_id\":\"t\"}\n\n" +
		"id: 1-1\nevent: done\ndata: {\"type\":\"done\",\"status\":\"completed\"}\n\n"
	require.NoError(t, c.Check(get(path), nil, 200, sse, []byte(good)))
	bad := "id: 1-0\nevent: tool_end\ndata: {\"type\":\"tool_end\",\"tool_name\":\"x\"}\n\n"
	require.ErrorContains(t, c.Check(get(path), nil, 200, sse, []byte(bad)), "tool_output")

	post := httptest.NewRequest(http.MethodPost, "/v3/projects/p/chat/stream", strings.NewReader(`{"message":42}`))
	post.Header.Set("Content-Type", "application/json")
	require.ErrorContains(t, c.Check(post, []byte(`{"message":42}`), 200, sse, []byte(good)), "request")
	require.NoError(t, c.Check(post, []byte(`{"message":42}`), 422, json, []byte(`{"message":"message must be text"}`)),
		"a refused request only needs a documented error")
}
