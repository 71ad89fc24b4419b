package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// openAPISource is the API's description. Describe a new route there; a test fails for any
// route of the engine it does not describe, and the e2e tests validate their traffic against it.
//
//go:embed openapi.json
var openAPISource []byte

const (
	chatPrefix        = "/v3/projects/{project_id}/chat/"
	copilotChatPrefix = "/v3/copilot/projects/{project_id}/chat/"
)

var openAPIDoc = sync.OnceValues(buildOpenAPI)

// OpenAPIDocument is the document served at /openapi.json: the file, with every chat path also
// listed under the prefix newer GNS3 releases use (the file lists them once, so they cannot
// drift apart).
func OpenAPIDocument() ([]byte, error) { return openAPIDoc() }

func buildOpenAPI() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPISource, &doc); err != nil {
		return nil, err
	}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		rest, ok := strings.CutPrefix(p, chatPrefix)
		if !ok {
			continue
		}
		// A deep copy with distinct operation ids: ids must be unique in a document.
		var alias map[string]any
		raw, _ := json.Marshal(item)
		if err := json.Unmarshal(raw, &alias); err != nil {
			return nil, err
		}
		for _, o := range alias {
			if op, ok := o.(map[string]any); ok {
				if id, ok := op["operationId"].(string); ok {
					op["operationId"] = id + "Copilot"
				}
			}
		}
		paths[copilotChatPrefix+rest] = alias
	}
	return json.Marshal(doc)
}

func serveOpenAPI(c *gin.Context) {
	doc, err := OpenAPIDocument()
	if err != nil {
		abort(c, http.StatusInternalServerError, "The OpenAPI document does not parse: "+err.Error())
		return
	}
	c.Data(http.StatusOK, "application/json", doc)
}
