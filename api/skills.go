package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// skillsAPI is the superadmin's view and reload of the skills (prompts, title prompt,
// forbidden commands, injection recipes; for a directory in GNS3's layout also its scenarios
// by difficulty, device skills and packet-analysis checks).
type skillsAPI struct {
	s     *Server
	store *skills.Store
}

func (h *skillsAPI) get(c *gin.Context) {
	c.JSON(http.StatusOK, skillsView(h.store.Current()))
}

// reload reads the skills directory again; a set that does not load leaves the previous one
// active.
func (h *skillsAPI) reload(c *gin.Context) {
	s := h.s
	set, err := h.store.Reload()
	var bad *skills.LoadError
	switch {
	case errors.Is(err, skills.ErrNoDir):
		abort(c, http.StatusConflict, "Nothing to reload: "+err.Error()+".")
		return
	case errors.As(err, &bad):
		abort(c, http.StatusUnprocessableEntity, "The skills were not reloaded and the previous ones stay active. "+err.Error())
		return
	case err != nil:
		s.internalError(c, err, "Reloading the skills failed; the previous ones stay active")
		return
	}
	// Worker processes run the turns; they follow this announcement (see service).
	if s.deps.Events != nil {
		data, _ := json.Marshal(map[string]string{"source": set.Source})
		if _, err := s.deps.Events.Append(c.Request.Context(), relay.SkillsStream, relay.TypeSkillsReload, data); err != nil {
			s.log.Warn("announcing a skills reload to the workers", "error", err)
		}
	}
	v := skillsView(set)
	v["status"] = "ok"
	c.JSON(http.StatusOK, v)
}

func skillsView(set *skills.Set) gin.H {
	recipes := make([]string, len(set.Recipes))
	for i, r := range set.Recipes {
		recipes[i] = r.Name
	}
	files := set.Files
	if files == nil {
		files = []string{}
	}
	forbidden := set.Forbidden
	if forbidden == nil {
		forbidden = []string{}
	}
	prompts := set.Overridden()
	if prompts == nil {
		prompts = []string{}
	}
	devices := []gin.H{}
	for _, p := range sortedKeys(set.Devices) {
		d := set.Devices[p]
		devices = append(devices, gin.H{"platform": p, "device_type": d.DeviceType, "name": d.Name, "topics": orEmpty(d.Topics)})
	}
	return gin.H{"source": set.Source, "layout": set.Layout, "files": files, "prompts": prompts, "title_prompt": set.TitlePrompt(),
		"forbidden_commands": forbidden, "injection_recipes": recipes,
		"scenarios":              gin.H{"total": len(set.Scenarios), "by_difficulty": set.ByDifficulty()},
		"device_skills":          devices,
		"unmatched_device_types": orEmpty(set.Unmatched),
		"analysis_checks":        gin.H{"usable": len(set.Checks), "skipped": set.SkippedChecks}}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
