package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
)

// modeFilter reads the sessions list's ?copilot_mode= filter, as GNS3's own copilot (v3.1)
// takes it; "" means no filter. An unknown mode is refused rather than answered with nothing.
func modeFilter(c *gin.Context) (string, bool) {
	q, given := c.GetQuery("copilot_mode")
	if !given || strings.TrimSpace(q) == "" {
		return "", true
	}
	want := strings.ToLower(strings.TrimSpace(q))
	names := make([]string, len(tools.Modes))
	for i, m := range tools.Modes {
		names[i] = string(m)
		if string(m) == want {
			return want, true
		}
	}
	abort(c, http.StatusUnprocessableEntity, "copilot_mode must be one of "+strings.Join(names, ", ")+".")
	return "", false
}
